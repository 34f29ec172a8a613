/**
 * One durable workflow per shop order: create the label once, read the order, then follow
 * tracking until a terminal tag. Deterministic: every call to the outside is an activity, time
 * comes from the SDK's deterministic clock.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
  ApplicationFailure,
  TimeoutFailure,
} from '@temporalio/workflow';
import { RetryState, TimeoutType } from '@temporalio/common';
import type { ShipmentActivities, CreatedLabel, TrackingChange, TrackingSnapshot } from '../activities';
import type { ShopDeliveryActivities } from '../activities/shop-delivery';
import {
  FIRST_ATTEMPT_OPTIONS,
  FIRST_DELIVERY_OPTIONS,
  SHIPPING_ACTIVITY_OPTIONS,
  shippingErrorOf,
  shopDeliveryOptions,
  TRACKING_ACTIVITY_OPTIONS,
  type FailureDetails,
} from '../activities/retry-policy';
import type { LabelRequestWithoutKey, OrderDetail, TrackingRecord } from '../shipping-api/contract';
import {
  cancelShipmentSignal,
  NOT_REGISTERED_STAGE,
  redeliverShopEventsUpdate,
  resubmitLabelUpdate,
  SA,
  SHOP_SYNC_STOPPED,
  stateQuery,
  type CancelShipment,
  type OutcomeKind,
  type RecordedError,
  type ResubmitLabel,
  type ResubmitResult,
  type ShipmentInput,
  type ShipmentOutcome,
  type ShipmentState,
  type ShopDeliveryResult,
  type ShopEventDraft,
  type ShopSyncPolicy,
  type ShopSyncState,
  type TrackingPolicy,
} from './definitions';
import { outcomeOfTag } from './definitions';

/** The API's activities, each call labelled for the Web UI's event history. */
const shippingApi = (summary: string) => proxyActivities<ShipmentActivities>({ ...SHIPPING_ACTIVITY_OPTIONS, summary });
const { trackingPolicy } = proxyLocalActivities<ShipmentActivities>({ startToCloseTimeout: '10 seconds' });
/**
 * A call's first attempt inside the workflow task (a local activity): no task round trip and no
 * activity events when it succeeds, which most do. A retryable failure goes on as a regular
 * activity, with the full retry policy and visible in the Web UI. Safe for labels: the key
 * makes a second send of the same revision return the same label.
 */
const firstAttempt = (summary: string) =>
  proxyLocalActivities<ShipmentActivities>({ ...FIRST_ATTEMPT_OPTIONS, summary: `${summary} (first attempt)` });
/** Waits for the next tracking change; the server retries it at the poll interval, writing no history. */
const trackingApi = (summary: string, remainingMs: number) =>
  proxyActivities<ShipmentActivities>({ ...TRACKING_ACTIVITY_OPTIONS, scheduleToCloseTimeout: remainingMs, summary });
/** Shop delivery: a first attempt inside the workflow task, then the retried activity. */
const firstDelivery = (summary: string) =>
  proxyLocalActivities<ShopDeliveryActivities>({ ...FIRST_DELIVERY_OPTIONS, summary: `${summary} (first attempt)` });
const shopDelivery = (summary: string, settings: ShopSyncPolicy) =>
  proxyActivities<ShopDeliveryActivities>({ ...shopDeliveryOptions(settings), summary });

/**
 * Tracking wakes the workflow only when the shipment changes, instead of a timer and an activity
 * per poll; workflows tracking with the old loop switch at their next poll. New workflows also
 * make the first attempt of label creation and order read inside their first workflow task.
 */
export const CHANGE_DRIVEN_TRACKING = 'change-driven-tracking';

/**
 * Shipments started with shop sync tell the shop every change, as numbered events delivered in
 * order by a coroutine beside the shipment, and complete once the shop has them. Workflows
 * started before it send nothing and finish as they did.
 */
export const SHOP_SYNC = 'shop-sync';
/**
 * A first delivery attempt that fails (its few seconds ran out on a slow shop, or an unexpected
 * error) goes on as the regular delivery activity; before this, any such failure stopped
 * delivery as `expired`. Checked only when a first attempt fails, so other histories are unchanged.
 */
export const FIRST_DELIVERY_HANDS_OVER = 'first-delivery-hands-over';
/** Events per delivery call: a shop back from an outage catches up in a few calls, not one per event. */
const SHOP_DELIVERY_BATCH = 20;
const STOPPED: ReadonlySet<string> = new Set(SHOP_SYNC_STOPPED);

/** Failures an operator can fix by resubmitting label data: the label was not created. */
const CORRECTABLE_KINDS = new Set(['courier_error', 'validation']);

/** Everything a run hands to the next one when it continues as new. */
export interface CarriedState {
  state: ShipmentState;
  policy: TrackingPolicy;
  labelRequest: LabelRequestWithoutKey;
}

export async function shipmentWorkflow(input: ShipmentInput, carried?: CarriedState): Promise<ShipmentOutcome> {
  const state: ShipmentState = carried?.state ?? initialState(input);
  let labelRequest = carried?.labelRequest ?? input.labelRequest;
  let correction: ResubmitLabel | null = null;
  let cancelRequest: CancelShipment | null = null;
  /** The pending wait for a tracking change, cancelled at once by an operator's stop. */
  let trackingScope: CancellationScope | null = null;
  const published = new Map<string, string>();
  /** Shop delivery: the call in flight (cancelled to continue as new) and an operator's redeliver. */
  let deliveryScope: CancellationScope | null = null;
  let deliveryInFlight = false;
  let deliveryPaused = false;
  let redeliverRequested = false;
  /** Set once the policy is known (shop sync on and a connector named); null for older workflows. */
  let sync: ShopSyncState | null = null;

  // Handlers are registered before the first await, so a query or update arriving with the
  // first workflow task finds them.
  setHandler(stateQuery, () => state);
  setHandler(cancelShipmentSignal, (request) => {
    cancelRequest ??= request;
    trackingScope?.cancel();
  });
  setHandler(
    resubmitLabelUpdate,
    async (request): Promise<ResubmitResult> => {
      correction = request;
      const revision = state.revision + 1;
      await condition(() => state.phase === 'completed' || (state.revision >= revision && state.phase !== 'creating_label'));
      const created = state.revision === revision && state.labelId !== null;
      return {
        revision,
        idempotencyKey: state.idempotencyKey,
        labelCreated: created,
        labelId: state.labelId,
        error: created ? null : state.lastError,
      };
    },
    {
      // The CLI validates the label data field by field, and the API validates it again when the
      // label is sent (a rejection waits for correction again); here only its shape is checked,
      // so zod and the contract schemas stay out of the workflow bundle.
      validator: (request) => {
        if (typeof request?.labelRequest !== 'object' || request.labelRequest === null || Array.isArray(request.labelRequest)) {
          throw new Error('invalid label data: labelRequest: must be an object');
        }
        if (request.reason !== undefined && (typeof request.reason !== 'string' || request.reason.length > 500)) {
          throw new Error('invalid label data: reason: must be a string of at most 500 characters');
        }
        if (state.phase !== 'awaiting_correction') {
          throw new Error(`cannot resubmit: the shipment is ${state.phase}, not awaiting corrected label data`);
        }
        if (correction !== null) throw new Error('cannot resubmit: a resubmission is already being processed');
      },
    },
  );
  setHandler(
    redeliverShopEventsUpdate,
    () => {
      const sync = state.shopSync as ShopSyncState;
      const previousStatus = sync.status;
      sync.status = 'delivering';
      sync.failure = null;
      redeliverRequested = true;
      publish();
      return { fromSequence: sync.pending[0]?.sequence ?? sync.delivered + 1, pending: sync.pending.length, previousStatus };
    },
    {
      validator: () => {
        const sync = state.shopSync;
        if (!sync) throw new Error('this shipment started before shop sync: it sends no events to the shop');
        if (!STOPPED.has(sync.status)) throw new Error(`nothing to redeliver: shop sync is ${sync.status}`);
      },
    },
  );

  // Decided once per run: a workflow started before this change keeps calling the API as it did.
  const changeDriven = patched(CHANGE_DRIVEN_TRACKING);
  const shopSyncOn = patched(SHOP_SYNC);
  if (changeDriven) {
    // The start options set these already; re-sending them would only add history events.
    const given = workflowInfo().typedSearchAttributes;
    for (const key of [SA.status, SA.courier, SA.trackingNumber, SA.trackingTag]) {
      const value = given.get(key);
      if (typeof value === 'string') published.set(key.name, value);
    }
  }
  const policy: TrackingPolicy =
    carried?.policy ?? withOrderOverrides(await (shopSyncOn ? trackingPolicy(input.shop) : trackingPolicy()), input.tracking);
  // A run continued from one started before shop sync stays without it: the shop never had event 1.
  if (shopSyncOn && !carried) {
    state.shopSync = { status: policy.shopSync?.connector ? 'up_to_date' : 'no_connector', emitted: 0, delivered: 0, pending: [], failure: null };
  }
  sync = state.shopSync ?? null;
  const shopSettings = policy.shopSync ?? null;
  if (sync && shopSettings && sync.status !== 'no_connector') void deliverToShop(sync, shopSettings);

  /**
   * One shipping API call. Since change-driven tracking, the first attempt runs in the workflow
   * task; a retryable failure continues as a regular activity (after Retry-After for a 429).
   */
  async function callApi<K extends 'createLabel' | 'readOrder'>(
    name: K,
    summary: string,
    ...args: Parameters<ShipmentActivities[K]>
  ): Promise<Awaited<ReturnType<ShipmentActivities[K]>>> {
    type Call = (...a: Parameters<ShipmentActivities[K]>) => Promise<Awaited<ReturnType<ShipmentActivities[K]>>>;
    let recorded: RecordedError | null = null;
    if (changeDriven) {
      try {
        return await (firstAttempt(summary)[name] as Call)(...args);
      } catch (err) {
        if (isCancellation(err)) throw err;
        const failure = shippingErrorOf(err);
        if (failure && !failure.retryable) throw err; // e.g. a courier rejection: the caller decides
        // Anything else (5xx, 429, network, a timed-out attempt) is retried as a regular activity.
        if (failure) recorded = state.lastError = recordError(failure);
        publish();
        if (failure?.kind === 'rate_limited') await sleep(Math.max(1, failure.retryAfterSeconds ?? 1) * 1000);
      }
    }
    const result = await (shippingApi(summary)[name] as Call)(...args);
    if (recorded !== null && state.lastError === recorded) state.lastError = null;
    return result;
  }

  /** Mirrors the state into search attributes (only on change) and the Web UI's details. */
  function publish(): void {
    const wanted: Array<[typeof SA[keyof typeof SA], string | null]> = [
      [SA.status, state.outcome ?? state.phase],
      [SA.courier, labelRequest.courier],
      [SA.trackingNumber, state.trackingNumber],
      [SA.trackingTag, state.tag],
      [SA.shopSync, shopSyncAttribute()],
    ];
    const changes = wanted.filter(([key, value]) => value !== null && published.get(key.name) !== value);
    if (changes.length > 0) {
      upsertSearchAttributes(changes.map(([key, value]) => ({ key, value: value as string })));
      for (const [key, value] of changes) published.set(key.name, value as string);
    }
    setCurrentDetails(currentDetails(state));
  }

  /** Only states an operator must act on, and `ok` once one of them is over: the usual path writes none. */
  function shopSyncAttribute(): string | null {
    if (!sync) return null;
    if (STOPPED.has(sync.status)) return sync.status;
    return published.has(SA.shopSync.name) ? 'ok' : null;
  }

  /** Numbers an event and queues it for the shop; the delivery coroutine picks it up. */
  function emit(draft: DistributiveOmit<ShopEventDraft, 'sequence' | 'occurredAt'>): void {
    if (!sync) return;
    sync.emitted++;
    if (sync.status === 'no_connector') return;
    sync.pending.push({ ...draft, sequence: sync.emitted, occurredAt: new Date().toISOString() } as ShopEventDraft);
    if (sync.status === 'up_to_date') sync.status = 'delivering';
  }

  /**
   * Delivers pending events in sequence order, one call at a time, beside the shipment: a shop
   * that is down or slow never holds up the label or tracking. Runs until the workflow ends.
   */
  async function deliverToShop(sync: ShopSyncState, settings: ShopSyncPolicy): Promise<void> {
    const order = { shop: state.shop, orderId: state.orderId };
    for (;;) {
      await condition(() => !deliveryPaused && sync.status === 'delivering' && sync.pending.length > 0);
      const scope = new CancellationScope();
      deliveryScope = scope;
      deliveryInFlight = true;
      const resumeGone = redeliverRequested;
      redeliverRequested = false;
      let attempt: 'first' | 'regular' = 'first';
      try {
        let batch = sync.pending.slice(0, SHOP_DELIVERY_BATCH);
        let result = await firstDeliveryAttempt(scope, batch, resumeGone);
        if (result === null || result.retry) {
          if (result?.retry) {
            acknowledge(sync, batch, result);
            if (result.retry.retryAfterMs !== null) {
              const wait = result.retry.retryAfterMs;
              await scope.run(() => sleep(wait));
            }
          }
          batch = sync.pending.slice(0, SHOP_DELIVERY_BATCH);
          attempt = 'regular';
          result = await scope.run(() =>
            shopDelivery(`Deliver ${describeEvents(batch)} to shop`, settings).deliverShopEvents({ ...order, events: batch, resumeGone }),
          );
        }
        acknowledge(sync, batch, result);
      } catch (err) {
        if (isCancellation(err)) {
          if (deliveryPaused) continue; // continuing as new: the events stay pending for the next run
          return; // the workflow itself is being cancelled
        }
        // A first attempt's failure gets here only when final, or in a run recorded before FIRST_DELIVERY_HANDS_OVER.
        const expired = attempt === 'first' ? ranOutOfTime(err) : windowEnded(err);
        sync.status = expired ? 'expired' : 'failed';
        sync.failure = {
          sequence: sync.pending[0]?.sequence ?? sync.delivered + 1,
          status: null,
          message: expired
            ? `not delivered within the delivery window (${formatDuration(settings.deliveryWindowMs)}): ${describeFailure(err)}`
            : describeFailure(err),
          at: new Date().toISOString(),
        };
        log.warn('shop delivery stopped', { orderId: state.orderId, shop: state.shop, status: sync.status, failure: sync.failure });
      } finally {
        deliveryInFlight = false;
        deliveryScope = null;
      }
      publish();
    }
  }

  /**
   * The first delivery attempt, inside the workflow task. It has seconds, not the connector's
   * timeout: a slow shop or an unexpected error ends it, and then (null) the regular activity
   * sends the same batch at once, with the same ids. Only the regular activity's own end, the
   * delivery window, makes a delivery expire.
   */
  async function firstDeliveryAttempt(scope: CancellationScope, batch: ShopEventDraft[], resumeGone: boolean): Promise<ShopDeliveryResult | null> {
    try {
      return await scope.run(() =>
        firstDelivery(`Deliver ${describeEvents(batch)} to shop`).deliverShopEvents({ shop: state.shop, orderId: state.orderId, events: batch, resumeGone }),
      );
    } catch (err) {
      if (isCancellation(err) || isNonRetryable(err)) throw err;
      // Workflows recorded before this took any failure of the first attempt for the window's end.
      if (!patched(FIRST_DELIVERY_HANDS_OVER)) throw err;
      log.info('first shop delivery attempt did not finish; the delivery activity takes over', {
        orderId: state.orderId,
        shop: state.shop,
        failure: describeFailure(err),
      });
      return null;
    }
  }

  /** Drops what the shop acknowledged from the queue and records why delivery stopped, if it did. */
  function acknowledge(sync: ShopSyncState, batch: ShopEventDraft[], result: ShopDeliveryResult): void {
    const last = batch[result.delivered - 1];
    if (last) {
      sync.pending.splice(0, result.delivered);
      sync.delivered = last.sequence;
    }
    if (result.stopped) {
      const { reason, ...failure } = result.stopped;
      if (reason === 'no_connector') {
        sync.status = 'no_connector'; // the connector was removed from the worker's configuration
        sync.pending = [];
      } else {
        sync.status = reason === 'gone' ? 'gone' : 'failed';
        sync.failure = { ...failure, at: new Date().toISOString() };
        log.warn('shop delivery stopped', { orderId: state.orderId, shop: state.shop, status: sync.status, failure: sync.failure });
      }
    } else if (!result.retry && sync.pending.length === 0 && sync.status === 'delivering') {
      sync.status = 'up_to_date';
    }
  }

  /**
   * The shipment is over: it completes once the shop has every event. An event the shop refused
   * (or a gone endpoint, or an expired window) waits for an operator's redeliver within the
   * delivery window; after that the workflow completes and its state says what was not delivered.
   */
  async function handOverToShop(sync: ShopSyncState, settings: ShopSyncPolicy): Promise<void> {
    for (;;) {
      await condition(() => (sync.pending.length === 0 && !deliveryInFlight) || sync.status === 'no_connector' || STOPPED.has(sync.status));
      if ((sync.pending.length === 0 && !deliveryInFlight) || sync.status === 'no_connector') return;
      if (!(await condition(() => sync.status === 'delivering', settings.deliveryWindowMs))) return;
    }
  }

  function finish(outcome: OutcomeKind, reason?: string): ShipmentOutcome {
    state.phase = 'completed';
    state.outcome = outcome;
    emit({
      type: 'shipment.completed',
      data: { outcome, reason: reason ?? null, tag: state.tag, trackingNumber: state.trackingNumber },
    });
    publish();
    log.info('shipment finished', { orderId: state.orderId, shop: state.shop, outcome, reason });
    return {
      shop: state.shop,
      orderId: state.orderId,
      outcome,
      labelId: state.labelId,
      trackingNumber: state.trackingNumber,
      tag: state.tag,
      subtag: state.subtag,
      lastCheckpoint: state.lastCheckpoint,
      lastError: state.lastError,
      ...(reason === undefined ? {} : { reason }),
    };
  }

  const cancelledByOperator = () => finish('cancelled_by_operator', cancelRequest?.reason ?? 'cancelled by operator');

  /** Hands the whole state to a new run when the server suggests it or history reached the bound. */
  async function continueAsNewIfDue(): Promise<void> {
    const info = workflowInfo();
    if (!info.continueAsNewSuggested && info.historyLength < policy.historyEventLimit) return;
    await condition(allHandlersFinished);
    if (sync) {
      // The next run delivers what is still pending; a call cut short here is sent again (same ids).
      deliveryPaused = true;
      deliveryScope?.cancel();
      await condition(() => !deliveryInFlight);
    }
    state.continuedAsNew++;
    await continueAsNew<typeof shipmentWorkflow>(input, { state, policy, labelRequest });
  }

  /**
   * Tracking driven by changes: one activity waits for the next change of tag, subtag, tracking
   * number or checkpoints, polling at the interval of the current stage; its retries are the
   * polls, so an unchanged poll adds no workflow task and no history event.
   */
  async function followTrackingChanges(labelId: string, deadline: number): Promise<ShipmentOutcome> {
    for (;;) {
      if (cancelRequest) return cancelledByOperator();
      const remaining = deadline - Date.now();
      if (remaining <= 0) return finish('tracking_timed_out', `no terminal tag within ${policy.maxTrackingMs} ms of tracking`);
      publish();
      await continueAsNewIfDue();

      const stage = state.tag === null ? NOT_REGISTERED_STAGE : state.tag;
      const pollIntervalMs = pollIntervalOf(policy, state);
      const scope = new CancellationScope();
      trackingScope = scope;
      let change: TrackingChange;
      try {
        change = await scope.run(() =>
          trackingApi(`Await tracking change (${stage}, poll every ${formatDuration(pollIntervalMs)})`, remaining).awaitTrackingChange({
            labelId,
            known: snapshotOf(state),
            pollIntervalMs,
          }),
        );
      } catch (err) {
        if (isCancellation(err)) return cancelledByOperator();
        if (windowEnded(err)) {
          return finish('tracking_timed_out', `no terminal tag within ${policy.maxTrackingMs} ms of tracking`);
        }
        // A failure retrying cannot fix (e.g. 401): recorded, and tried again after one interval.
        const failure = shippingErrorOf(err);
        if (!failure) throw err;
        state.lastError = recordError(failure);
        publish();
        await condition(() => cancelRequest !== null, Math.max(1, Math.min(pollIntervalMs, deadline - Date.now())));
        continue;
      } finally {
        trackingScope = null;
      }
      const before = { tag: state.tag, subtag: state.subtag, trackingNumber: state.trackingNumber };
      applyTrackingChange(state, change);
      if (state.tag !== before.tag || state.subtag !== before.subtag || (before.trackingNumber === null && state.trackingNumber !== null)) {
        emit({
          type: 'tracking.updated',
          data: {
            tag: state.tag ?? 'Pending',
            subtag: state.subtag,
            subtagMessage: state.subtagMessage,
            trackingNumber: state.trackingNumber,
            lastCheckpoint: lastCheckpointOf(state),
          },
        });
      }
      if (state.tag !== null && policy.terminalTags.includes(state.tag)) return finish(outcomeOfTag(state.tag));
    }
  }

  const outcome = await runShipment();
  const told = sync;
  if (told) {
    // Not cancellable: a cancelled workflow still hands its last events to the shop.
    if (shopSettings) await CancellationScope.nonCancellable(() => handOverToShop(told, shopSettings));
    publish();
  }
  // A resubmit racing the end gets its answer from this run (it issues no command when none runs).
  // Not cancellable: after a cancellation request (Web UI) the root scope is cancelled, and the
  // wait would throw instead of returning the operator stop.
  await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  return told ? { ...outcome, shopSync: { status: told.status, emitted: told.emitted, delivered: told.delivered, failure: told.failure } } : outcome;

  /** Label, order, tracking: the shipment itself, until its outcome. */
  async function runShipment(): Promise<ShipmentOutcome> {
    try {
      // 1. The label: created once per revision; a rejected one waits for corrected data.
      while (state.labelId === null) {
        state.phase = 'creating_label';
        state.attempts.labelRequests++;
        publish();
        try {
          const label = await callApi('createLabel', `Create label (revision ${state.revision})`, {
            shop: state.shop,
            orderId: state.orderId,
            revision: state.revision,
            labelRequest,
          });
          applyLabel(state, label);
          break;
        } catch (err) {
          const failure = shippingErrorOf(err);
          if (!failure || !CORRECTABLE_KINDS.has(failure.kind)) throw err;
          state.lastError = recordError(failure);
          state.idempotencyKey = failure.idempotencyKey ?? state.idempotencyKey;
          emit({
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
        state.phase = 'awaiting_correction';
        publish();
        log.warn('label rejected, waiting for corrected label data', { orderId: state.orderId, error: state.lastError });
        const answered = await condition(() => correction !== null || cancelRequest !== null, policy.correctionTimeoutMs);
        if (cancelRequest) return cancelledByOperator();
        if (!answered || correction === null) return finish('label_failed', 'no corrected label data before the correction timeout');
        labelRequest = (correction as ResubmitLabel).labelRequest;
        correction = null;
        state.revision++;
      }
      if (cancelRequest) return cancelledByOperator();
      const labelId = state.labelId as string; // the loop above only exits with a label

      // 2. The order: courier order number, tracking number, carrier details.
      if (state.phase === 'reading_order') {
        if (!changeDriven) publish(); // a first attempt takes milliseconds: no search attribute for it
        try {
          applyOrder(state, await callApi('readOrder', `Read order ${labelId}`, labelId));
        } catch (err) {
          // Informational only: tracking can proceed without it, so record it and go on.
          const failure = shippingErrorOf(err);
          if (!failure) throw err;
          state.lastError = recordError(failure);
        }
        state.phase = 'tracking';
        state.trackingStartedAt = new Date().toISOString();
        // After the order read, which brings the tracking number and the label document link.
        emit({
          type: 'label.created',
          data: {
            labelId,
            revision: state.revision,
            courier: state.courier,
            customerOrderNumber: state.customerOrderNumber ?? '',
            courierOrderNumber: state.courierOrderNumber,
            trackingNumber: state.trackingNumber,
            labelUrl: state.labelUrl ?? null,
          },
        });
      }

      // 3. Tracking until a terminal tag, the operator stops it, or time runs out.
      const deadline = Date.parse(state.trackingStartedAt ?? new Date().toISOString()) + policy.maxTrackingMs;
      for (;;) {
        if (cancelRequest) return cancelledByOperator();
        if (patched(CHANGE_DRIVEN_TRACKING)) return await followTrackingChanges(labelId, deadline);
        // The timer loop, kept for workflows recorded before change-driven tracking.
        state.attempts.trackingPolls++;
        try {
          const record = await shippingApi(`Poll tracking #${state.attempts.trackingPolls}`).getTracking(labelId);
          if (record) applyTracking(state, record);
        } catch (err) {
          // A poll that failed after its retries is recorded; the next poll may succeed.
          const failure = shippingErrorOf(err);
          if (!failure) throw err;
          state.lastError = recordError(failure);
        }
        if (state.tag !== null && policy.terminalTags.includes(state.tag)) return finish(outcomeOfTag(state.tag));
        const remaining = deadline - Date.now();
        if (remaining <= 0) return finish('tracking_timed_out', `no terminal tag within ${policy.maxTrackingMs} ms of tracking`);
        publish();
        await continueAsNewIfDue();
        await condition(() => cancelRequest !== null, Math.min(policy.pollIntervalMs, remaining));
      }
    } catch (err) {
      if (isCancellation(err)) return cancelledByOperator();
      // (a regular activity's failure arrives as an ActivityFailure, a first attempt's unwrapped)
      if (shippingErrorOf(err) && !(err instanceof ApplicationFailure && err.type === 'ShipmentFailed')) {
        // Surface the typed cause as the workflow's own failure, so the Web UI shows its type.
        const failure = shippingErrorOf(err)!;
        state.lastError = recordError(failure);
        throw ApplicationFailure.create({
          message: `shipment stopped: ${failure.message}`,
          type: 'ShipmentFailed',
          nonRetryable: true,
          details: [failure],
          cause: err as Error,
        });
      }
      throw err;
    }
  }
}

function initialState(input: ShipmentInput): ShipmentState {
  return {
    shop: input.shop,
    orderId: input.orderId,
    phase: 'creating_label',
    courier: input.labelRequest.courier,
    revision: 1,
    idempotencyKey: null,
    labelId: null,
    customerOrderNumber: null,
    courierOrderNumber: null,
    trackingNumber: null,
    tag: null,
    subtag: null,
    subtagMessage: null,
    lastCheckpoint: null,
    attempts: { labelRequests: 0, trackingPolls: 0 },
    lastError: null,
    outcome: null,
    trackingStartedAt: null,
    continuedAsNew: 0,
    checkpoints: 0,
    lastPolledAt: null,
  };
}

function applyLabel(state: ShipmentState, label: CreatedLabel): void {
  state.idempotencyKey = label.idempotencyKey;
  state.labelId = label.labelId;
  state.customerOrderNumber = label.customerOrderNumber;
  state.courierOrderNumber = label.courierOrderNumber;
  state.trackingNumber = label.courierTrackingNumber ?? state.trackingNumber;
  state.lastError = null;
  state.phase = 'reading_order';
}

function applyOrder(state: ShipmentState, { order, carrierDetails }: OrderDetail): void {
  state.courier = order.courier;
  state.courierOrderNumber = order.courierOrderNumber ?? state.courierOrderNumber;
  state.trackingNumber = order.courierTrackingNumber ?? carrierDetails.orderNumbers.trackingNumber ?? state.trackingNumber;
  state.labelUrl = carrierDetails.courierOptions.labelUrl ?? state.labelUrl ?? null;
}

function applyTracking(state: ShipmentState, record: TrackingRecord): void {
  state.tag = record.tag;
  state.subtag = record.subtag;
  state.subtagMessage = record.subtagMessage;
  // A courier may not have assigned a number yet: keep the one we know.
  state.trackingNumber = record.trackingNumber ?? state.trackingNumber;
  state.lastCheckpoint = record.checkpoints.at(-1) ?? state.lastCheckpoint;
}

/**
 * The worker's policy with the order's own settings on top. An order that sets pollIntervalMs
 * without a stage table means that interval in every stage.
 */
function withOrderOverrides(worker: TrackingPolicy, order: Partial<TrackingPolicy> | undefined): TrackingPolicy {
  if (!order) return worker;
  const stages = order.pollIntervalMs !== undefined && order.pollIntervalsMs === undefined ? {} : undefined;
  return { ...worker, ...order, ...(stages ? { pollIntervalsMs: stages } : {}) };
}

/** What the tracking activity compares each poll against. */
function snapshotOf(state: ShipmentState): TrackingSnapshot {
  return {
    tag: state.tag,
    subtag: state.subtag,
    trackingNumber: state.trackingNumber,
    checkpoints: state.checkpoints ?? 0,
    lastCheckpointTime: state.lastCheckpoint?.checkpointTime ?? null,
  };
}

function applyTrackingChange(state: ShipmentState, change: TrackingChange): void {
  state.tag = change.tag;
  state.subtag = change.subtag;
  state.subtagMessage = change.subtagMessage;
  state.trackingNumber = change.trackingNumber ?? state.trackingNumber;
  state.lastCheckpoint = change.lastCheckpoint ?? state.lastCheckpoint;
  state.checkpoints = change.checkpoints;
  state.attempts.trackingPolls += change.polls;
  state.lastPolledAt = change.polledAt;
  // The poll succeeded, so an error recorded by an earlier poll no longer stands.
  state.lastError = null;
}

/** The interval of the current stage: subtag, then tag, then the default. */
export function pollIntervalOf(policy: TrackingPolicy, state: Pick<ShipmentState, 'tag' | 'subtag'>): number {
  const byStage = policy.pollIntervalsMs ?? {};
  if (state.tag === null) return byStage[NOT_REGISTERED_STAGE] ?? policy.pollIntervalMs;
  return (state.subtag !== null ? byStage[state.subtag] : undefined) ?? byStage[state.tag] ?? policy.pollIntervalMs;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * How workflows recorded before FIRST_DELIVERY_HANDS_OVER read a delivery failure: any timeout,
 * a first attempt's own included, counted as the delivery window's end. Kept for their replay.
 */
function ranOutOfTime(err: unknown): boolean {
  return err instanceof ActivityFailure && (err.retryState === RetryState.TIMEOUT || err.cause instanceof TimeoutFailure);
}

/**
 * A regular activity that stopped because its schedule-to-close time ran out (the tracking limit,
 * the delivery window): the server gave up retrying for time, or the timeout is that one. An
 * attempt's own start-to-close or heartbeat timeout is retried by the server and is not this.
 */
function windowEnded(err: unknown): boolean {
  if (!(err instanceof ActivityFailure)) return false;
  if (err.retryState === RetryState.TIMEOUT) return true;
  return err.cause instanceof TimeoutFailure && err.cause.timeoutType === TimeoutType.SCHEDULE_TO_CLOSE;
}

/** A failure the activity or its policy marked final: sending the same batch again would not help. */
function isNonRetryable(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure && cause.nonRetryable === true;
}

/** The last checkpoint as a shop event carries it (the fields the event schema names). */
function lastCheckpointOf(state: ShipmentState) {
  const c = state.lastCheckpoint;
  if (!c) return null;
  return {
    checkpointTime: c.checkpointTime,
    location: c.location,
    city: c.city,
    countryRegion: c.countryRegion,
    message: c.message,
    tag: c.tag,
    subtag: c.subtag,
  };
}

function describeEvents(batch: ShopEventDraft[]): string {
  const first = batch[0]?.sequence;
  const last = batch.at(-1)?.sequence;
  return first === last ? `event ${first}` : `events ${first}-${last}`;
}

/** A failure's own message, from the innermost cause that has one (an activity failure wraps the useful one). */
function describeFailure(err: unknown): string {
  let message = err instanceof Error ? err.message : String(err);
  for (let current = (err as { cause?: unknown })?.cause, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof Error && current.message) message = current.message;
  }
  return message;
}

function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

function recordError(failure: FailureDetails): RecordedError {
  return {
    kind: failure.kind,
    message: failure.message,
    ...(failure.code === undefined ? {} : { code: failure.code }),
    ...(failure.courierCode === undefined ? {} : { courierCode: failure.courierCode }),
    ...(failure.courierMessage === undefined ? {} : { courierMessage: failure.courierMessage }),
    ...(failure.fields === undefined ? {} : { fields: failure.fields }),
    at: new Date().toISOString(),
  };
}

function currentDetails(state: ShipmentState): string {
  const lines = [
    `**${state.outcome ?? state.phase}**${state.tag ? ` · ${state.tag}${state.subtag ? ` (${state.subtag})` : ''}` : ''}`,
    '',
    `- Label: ${state.labelId ?? '-'} (revision ${state.revision}${state.idempotencyKey ? `, key \`${state.idempotencyKey}\`` : ''})`,
    `- Courier: ${state.courier}, order ${state.courierOrderNumber ?? '-'}, tracking ${state.trackingNumber ?? 'not assigned yet'}`,
  ];
  if (state.lastCheckpoint) {
    const c = state.lastCheckpoint;
    lines.push(`- Last checkpoint: ${c.checkpointTime} ${c.location || c.city} — ${c.message}`);
  }
  if (state.lastError) {
    const e = state.lastError;
    lines.push(`- Last error (${e.kind}): ${e.courierMessage ? `${e.courierCode}: ${e.courierMessage}` : e.message}`);
  }
  lines.push(
    `- Polls: ${state.attempts.trackingPolls}${state.lastPolledAt ? ` (last change seen ${state.lastPolledAt})` : ''}, label requests: ${state.attempts.labelRequests}`,
  );
  const sync = state.shopSync;
  if (sync) {
    lines.push(
      sync.status === 'no_connector'
        ? `- Shop: no connector for shop ${state.shop}, ${sync.emitted} event(s) not sent`
        : `- Shop: ${sync.delivered} of ${sync.emitted} event(s) delivered (${sync.status}${sync.failure ? `: event ${sync.failure.sequence}: ${sync.failure.message}` : ''})`,
    );
  }
  return lines.join('\n');
}
