/**
 * Step 2, the order: the courier order number, tracking number and carrier details. Informational
 * only: tracking proceeds without it. `ShipmentShell.ship` makes the call (its first attempt takes
 * milliseconds, so no search attribute says it is reading); these are the steps around it.
 */
import type { LabelCreatedData } from '../../domain/events';
import type { OrderDetail } from '../../shipping-api/contract';
import { recordError, shippingErrorOf } from './failures';
import type { ShipmentShell } from './shell';
import { applyOrder } from './state';
import { tracks } from '../../domain/shipment-machine/transitions';

export function read(run: ShipmentShell, detail: OrderDetail): void {
  applyOrder(run.state, detail);
}

/** A failed read is recorded and tracking goes on. */
export function notRead(run: ShipmentShell, err: unknown): void {
  const failure = shippingErrorOf(err);
  if (!failure) throw err;
  run.state.lastError = recordError(failure);
}

/** A relabel made no new label: the old one is still tracked. */
export function stillTracks(run: ShipmentShell): void {
  tracks(run.state);
}

/**
 * Tracking starts now; the shop hears of the label, after the read that brings its tracking
 * number and document link (and, for a relabel from the shop's data, which label it replaces).
 */
export function trackingBegins(run: ShipmentShell, labelId: string, replaces?: LabelCreatedData['replaces']): void {
  const { state } = run;
  tracks(state);
  state.trackingStartedAt = new Date().toISOString();
  run.emit({
    type: 'label.created',
    data: {
      labelId,
      revision: state.revision,
      courier: state.courier,
      customerOrderNumber: state.customerOrderNumber ?? '',
      courierOrderNumber: state.courierOrderNumber,
      trackingNumber: state.trackingNumber,
      labelUrl: state.labelUrl ?? null,
      ...(replaces ? { replaces } : {}),
    },
  });
}
