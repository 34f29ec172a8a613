/**
 * Step 1, the label: created once per revision (the idempotency key makes any re-send return the
 * same label); a rejected one waits for corrected data from an operator.
 *
 * A shipment a shop pull started also heeds the merchant's changes (shop-changes.ts): before each
 * request a change is settled; a change that comes while the request is out cancels it (an
 * attempt already sent finishes first, so a label made meanwhile is known and judged as after
 * the label). The attempt itself checks the order with the shop right before it is sent
 * (shop-import/label-check.ts): a change found there comes back unsent and is settled like a
 * pulled one.
 */
import { CancellationScope, condition, isCancellation, log } from '@temporalio/workflow';
import type { CreatedLabel, CreateLabelInput } from '../../activities/shipping-api';
import type { ShipmentOutcome } from '../../workflow-definitions/shipment';
import { recordError, shippingErrorOf, shopChangeOf } from './failures';
import type { ShipmentShell } from './shell';
import { applyLabel } from './state';
import { correctionAwaited, labelAsked, nextRevision } from '../../domain/shipment-machine/transitions';

/** Makes the label; returns the outcome when the shipment ends before it has one. */
export async function makeLabel(run: ShipmentShell): Promise<ShipmentOutcome | undefined> {
  const shop = run.shop;
  while (run.state.labelId === null) {
    const settled = await shop?.settleBeforeLabel();
    if (settled) return settled;
    const request = nextRequest(run);
    const reading = shop?.knownReading();
    if (reading) request.input.shopCheck = reading;
    const scope = new CancellationScope();
    if (shop) shop.labelScope = scope;
    try {
      created(run, await scope.run(() => run.callApi('createLabel', request.summary, request.input)));
    } catch (err) {
      const found = shopChangeOf(err);
      if (shop && found) {
        shop.takeFoundBeforeLabel(found);
        continue;
      }
      // The change cancelled the call: it ends cancelled, or, when an attempt was out, with that
      // attempt's failure (the server retries nothing after a cancel request). No label either way.
      if (shop?.interruptedLabel() && (isCancellation(err) || shippingErrorOf(err)?.retryable === true)) continue;
      // A rejection of a request the change replaced is settled untold (domain/shipment-machine/label.ts):
      // a cancelled order is written to no more; a still open one hears it when the same key is sent again.
      if (shop?.interruptedLabel()) {
        rejected(run, err, false);
        continue;
      }
      rejected(run, err);
      const ended = await awaitCorrection(run, shop?.changed);
      if (ended) return ended;
    } finally {
      if (shop) shop.labelScope = null;
    }
  }
  shop?.settleAfterLabel();
  return undefined;
}

/** Failures an operator can fix by resubmitting label data: the label was not created. */
const CORRECTABLE_KINDS = new Set(['courier_error', 'validation']);

/** The request of the current revision, counted and shown as `creating_label` (a relabel names the shop's request). */
export function nextRequest(run: ShipmentShell, labelRequest = run.labelRequest): { summary: string; input: CreateLabelInput } {
  const { state } = run;
  labelAsked(state);
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

export function created(run: ShipmentShell, label: CreatedLabel): void {
  applyLabel(run.state, label);
}

/** A courier or validation rejection is recorded and (unless `tell` is false) told to the shop; any other failure goes on up. */
export function rejected(run: ShipmentShell, err: unknown, tell = true): void {
  const { state } = run;
  const failure = shippingErrorOf(err);
  if (!failure || !CORRECTABLE_KINDS.has(failure.kind)) throw err;
  state.lastError = recordError(failure);
  state.idempotencyKey = failure.idempotencyKey ?? state.idempotencyKey;
  if (!tell) return;
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
export async function awaitCorrection(run: ShipmentShell, shopChanged?: () => boolean): Promise<ShipmentOutcome | undefined> {
  const { state } = run;
  correctionAwaited(state);
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
  nextRevision(state);
  return undefined;
}
