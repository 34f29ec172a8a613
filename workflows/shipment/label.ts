/**
 * Step 1, the label: created once per revision (the idempotency key makes any re-send return the
 * same label); a rejected one waits for corrected data from an operator. `ShipmentRun.ship`
 * makes the call; these are the decisions around it.
 */
import { condition, log } from '@temporalio/workflow';
import type { CreatedLabel, CreateLabelInput } from '../../activities/shipping-api';
import type { ShipmentOutcome } from '../../workflow-definitions/shipment';
import { recordError, shippingErrorOf } from './failures';
import type { ShipmentRun } from './run';
import { applyLabel } from './state';

/** Failures an operator can fix by resubmitting label data: the label was not created. */
const CORRECTABLE_KINDS = new Set(['courier_error', 'validation']);

/** The request of the current revision, counted and shown as `creating_label` (a relabel names the shop's request). */
export function nextRequest(run: ShipmentRun, labelRequest = run.labelRequest): { summary: string; input: CreateLabelInput } {
  const { state } = run;
  state.phase = 'creating_label';
  state.attempts.labelRequests++;
  run.publish();
  return {
    summary: `Create label (revision ${state.revision})`,
    input: {
      shop: state.shop,
      orderId: state.orderId,
      revision: state.revision,
      labelRequest,
      ...run.accountField(),
      // A parcel's key names its location; an order of one location keeps the key it always had.
      ...(state.parcel ? { location: state.parcel.location } : {}),
    },
  };
}

export function created(run: ShipmentRun, label: CreatedLabel): void {
  applyLabel(run.state, label);
}

/** A courier or validation rejection is recorded and told to the shop; any other failure goes on up. */
export function rejected(run: ShipmentRun, err: unknown): void {
  const { state } = run;
  const failure = shippingErrorOf(err);
  if (!failure || !CORRECTABLE_KINDS.has(failure.kind)) throw err;
  state.lastError = recordError(failure);
  state.idempotencyKey = failure.idempotencyKey ?? state.idempotencyKey;
  run.emit({
    type: 'label.rejected',
    data: {
      revision: state.revision,
      kind: failure.kind,
      courierCode: failure.courierCode ?? null,
      courierMessage: failure.courierMessage ?? null,
      message: failure.message,
      ...(failure.fields === undefined ? {} : { fields: failure.fields }),
      awaitingCorrection: true,
    },
  });
}

/**
 * Waits for a resubmit (the next revision), the operator's stop, or the correction timeout;
 * returns the outcome when the shipment ends here. `shopChanged` (shop-aware shipments only)
 * also ends the wait: the label step settles the merchant's change first.
 */
export async function awaitCorrection(run: ShipmentRun, shopChanged?: () => boolean): Promise<ShipmentOutcome | undefined> {
  const { state } = run;
  state.phase = 'awaiting_correction';
  run.publish();
  // An expected outcome: one line that says what comes next; the rejection is data, not an Error.
  const { kind, code, courierCode, message } = state.lastError ?? {};
  log.warn('label rejected: waiting for corrected label data (npm run cli -- resubmit, or cancel)', {
    orderId: state.orderId,
    shop: state.shop,
    rejection: { kind, code, courierCode, message },
  });
  const answered = await condition(
    () => run.correction !== null || run.cancelRequest !== null || (shopChanged?.() ?? false),
    run.policy.correctionTimeoutMs,
  );
  if (run.cancelRequest) return run.cancelledByOperator();
  const correction = run.correction;
  if (correction === null && shopChanged?.()) return undefined;
  if (!answered || correction === null) return run.finish('label_failed', 'no corrected label data before the correction timeout');
  run.labelRequest = correction.labelRequest;
  run.correction = null;
  state.revision++;
  return undefined;
}
