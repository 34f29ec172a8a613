/**
 * One run of a shipment workflow: its state and the small operations every step uses (call the
 * API, publish, emit to the shop, finish, continue as new). The steps themselves are functions of
 * their own (label.ts, order.ts, tracking.ts); `ship()` reads them in order.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  setCurrentDetails,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ShipmentActivities } from '../../activities';
import type { LabelRequestWithoutKey } from '../../shipping-api/contract';
import {
  SA,
  type CancelShipment,
  type OutcomeKind,
  type RecordedError,
  type ResubmitLabel,
  type ResubmitResult,
  type ShipmentInput,
  type ShipmentOutcome,
  type ShipmentState,
  type TrackingPolicy,
} from '../definitions';
import { currentDetails } from './details';
import { recordError, shippingErrorOf } from './failures';
import * as label from './label';
import { pollOnTimer } from './legacy-tracking';
import * as order from './order';
import { CHANGE_DRIVEN_TRACKING, SHOP_SYNC } from './patches';
import { firstAttempt, shippingApi, trackingPolicy } from './proxies';
import { ShopDelivery, STOPPED, type ShopEventInput } from './shop-delivery';
import { initialShopSync, initialState, withOrderOverrides } from './state';
import { followTrackingChanges } from './tracking';
import type { shipmentWorkflow } from './workflow';

/** Everything a run hands to the next one when it continues as new. */
export interface CarriedState {
  state: ShipmentState;
  policy: TrackingPolicy;
  labelRequest: LabelRequestWithoutKey;
}

type ApiCall = 'createLabel' | 'readOrder';

export class ShipmentRun {
  readonly state: ShipmentState;
  labelRequest: LabelRequestWithoutKey;
  policy!: TrackingPolicy;
  /** How this run calls the API: decided once, at its start (see CHANGE_DRIVEN_TRACKING). */
  changeDriven = false;
  /** Corrected label data from a resubmit, taken by the label step. */
  correction: ResubmitLabel | null = null;
  cancelRequest: CancelShipment | null = null;
  /** The pending wait for a tracking change, cancelled at once by an operator's stop. */
  trackingScope: CancellationScope | null = null;
  readonly delivery: ShopDelivery;
  /** Search attributes as last written: only changes are written again. */
  private readonly published = new Map<string, string>();

  constructor(
    private readonly input: ShipmentInput,
    private readonly carried?: CarriedState,
  ) {
    this.state = carried?.state ?? initialState(input);
    this.labelRequest = carried?.labelRequest ?? input.labelRequest;
    this.delivery = new ShopDelivery(this.state, () => this.publish());
  }

  /** The patches this run follows and the worker's policy. */
  async start(): Promise<void> {
    // Decided once per run: a workflow started before this change keeps calling the API as it did.
    this.changeDriven = patched(CHANGE_DRIVEN_TRACKING);
    const shopSyncOn = patched(SHOP_SYNC);
    if (this.changeDriven) this.rememberStartAttributes();
    this.policy =
      this.carried?.policy ?? withOrderOverrides(await (shopSyncOn ? trackingPolicy(this.input.shop) : trackingPolicy()), this.input.tracking);
    // A run continued from one started before shop sync stays without it: the shop never had event 1.
    if (shopSyncOn && !this.carried) this.state.shopSync = initialShopSync(this.policy);
  }

  /**
   * Label, order, tracking: the shipment itself, until its outcome, with the shop delivery
   * beside it. Each step's awaits sit here, at the depth they always had: the order in which
   * this path and the delivery coroutine issue commands in one workflow task depends on it, and
   * recorded histories fix that order (label.ts, order.ts and tracking.ts hold the rest).
   */
  async ship(): Promise<ShipmentOutcome> {
    const state = this.state;
    this.delivery.start(this.policy.shopSync ?? null);
    try {
      // 1. The label: created once per revision; a rejected one waits for corrected data.
      while (state.labelId === null) {
        const request = label.nextRequest(this);
        try {
          label.created(this, await this.callApi('createLabel', request.summary, request.input));
        } catch (err) {
          label.rejected(this, err);
          const ended = await label.awaitCorrection(this);
          if (ended) return ended;
        }
      }
      if (this.cancelRequest) return this.cancelledByOperator();
      const labelId = state.labelId;

      // 2. The order: read once, then tracking begins and the shop hears of the label.
      if (state.phase === 'reading_order') {
        order.beforeRead(this);
        try {
          order.read(this, await this.callApi('readOrder', `Read order ${labelId}`, labelId));
        } catch (err) {
          order.notRead(this, err);
        }
        order.trackingBegins(this, labelId);
      }

      // 3. Tracking until a terminal tag, the operator stops it, or time runs out.
      const deadline = Date.parse(state.trackingStartedAt ?? new Date().toISOString()) + this.policy.maxTrackingMs;
      for (;;) {
        if (this.cancelRequest) return this.cancelledByOperator();
        // Checked at every poll (start() checks it once per run): a run on the timer loop switches here.
        if (patched(CHANGE_DRIVEN_TRACKING)) return await followTrackingChanges(this, labelId, deadline);
        const ended = await pollOnTimer(this, labelId, deadline);
        if (ended) return ended;
      }
    } catch (err) {
      if (isCancellation(err)) return this.cancelledByOperator();
      throw this.stoppedBy(err);
    }
  }

  /** The shop gets its last events, update handlers their answers; then the run's result. */
  async complete(outcome: ShipmentOutcome): Promise<ShipmentOutcome> {
    const told = this.delivery.sync;
    const settings = this.policy.shopSync ?? null;
    if (told) {
      // Not cancellable: a cancelled workflow still hands its last events to the shop.
      if (settings) await CancellationScope.nonCancellable(() => this.delivery.handOver(told, settings));
      this.publish();
    }
    // A resubmit racing the end gets its answer from this run (it issues no command when none runs).
    // Not cancellable: after a cancellation request (Web UI) the root scope is cancelled, and the
    // wait would throw instead of returning the operator stop.
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
    return told ? { ...outcome, shopSync: { status: told.status, emitted: told.emitted, delivered: told.delivered, failure: told.failure } } : outcome;
  }

  // ---------------------------------------------------------------- messages

  cancel(request: CancelShipment): void {
    this.cancelRequest ??= request;
    this.trackingScope?.cancel();
  }

  validateResubmit(): void {
    if (this.state.phase !== 'awaiting_correction') {
      throw new Error(`cannot resubmit: the shipment is ${this.state.phase}, not awaiting corrected label data`);
    }
    if (this.correction !== null) throw new Error('cannot resubmit: a resubmission is already being processed');
  }

  /** Answers once the corrected label data was sent (or the shipment ended first). */
  async resubmit(request: ResubmitLabel): Promise<ResubmitResult> {
    this.correction = request;
    const state = this.state;
    const revision = state.revision + 1;
    await condition(() => state.phase === 'completed' || (state.revision >= revision && state.phase !== 'creating_label'));
    const created = state.revision === revision && state.labelId !== null;
    return { revision, idempotencyKey: state.idempotencyKey, labelCreated: created, labelId: state.labelId, error: created ? null : state.lastError };
  }

  // ---------------------------------------------------------------- operations the steps share

  /**
   * One shipping API call. Since change-driven tracking, the first attempt runs in the workflow
   * task; a retryable failure continues as a regular activity (after Retry-After for a 429).
   */
  async callApi<K extends ApiCall>(name: K, summary: string, ...args: Parameters<ShipmentActivities[K]>): Promise<Awaited<ReturnType<ShipmentActivities[K]>>> {
    type Call = (...a: Parameters<ShipmentActivities[K]>) => Promise<Awaited<ReturnType<ShipmentActivities[K]>>>;
    let recorded: RecordedError | null = null;
    if (this.changeDriven) {
      try {
        return await (firstAttempt(summary)[name] as Call)(...args);
      } catch (err) {
        if (isCancellation(err)) throw err;
        const failure = shippingErrorOf(err);
        if (failure && !failure.retryable) throw err; // e.g. a courier rejection: the caller decides
        // Anything else (5xx, 429, network, a timed-out attempt) is retried as a regular activity.
        if (failure) recorded = this.state.lastError = recordError(failure);
        this.publish();
        if (failure?.kind === 'rate_limited') await sleep(Math.max(1, failure.retryAfterSeconds ?? 1) * 1000);
      }
    }
    const result = await (shippingApi(summary)[name] as Call)(...args);
    if (recorded !== null && this.state.lastError === recorded) this.state.lastError = null;
    return result;
  }

  /** Mirrors the state into search attributes (only on change) and the Web UI's details. */
  publish(): void {
    const wanted: Array<[(typeof SA)[keyof typeof SA], string | null]> = [
      [SA.status, this.state.outcome ?? this.state.phase],
      [SA.courier, this.labelRequest.courier],
      [SA.trackingNumber, this.state.trackingNumber],
      [SA.trackingTag, this.state.tag],
      [SA.shopSync, this.shopSyncAttribute()],
    ];
    const changes = wanted.filter(([key, value]) => value !== null && this.published.get(key.name) !== value);
    if (changes.length > 0) {
      upsertSearchAttributes(changes.map(([key, value]) => ({ key, value: value as string })));
      for (const [key, value] of changes) this.published.set(key.name, value as string);
    }
    setCurrentDetails(currentDetails(this.state));
  }

  /** Tells the shop (through the delivery coroutine), when shop sync is on. */
  emit(event: ShopEventInput): void {
    this.delivery.emit(event);
  }

  finish(outcome: OutcomeKind, reason?: string): ShipmentOutcome {
    const state = this.state;
    state.phase = 'completed';
    state.outcome = outcome;
    this.emit({ type: 'shipment.completed', data: { outcome, reason: reason ?? null, tag: state.tag, trackingNumber: state.trackingNumber } });
    this.publish();
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

  cancelledByOperator(): ShipmentOutcome {
    return this.finish('cancelled_by_operator', this.cancelRequest?.reason ?? 'cancelled by operator');
  }

  trackingTimedOut(): ShipmentOutcome {
    return this.finish('tracking_timed_out', `no terminal tag within ${this.policy.maxTrackingMs} ms of tracking`);
  }

  /** Hands the whole state to a new run when the server suggests it or history reached the bound. */
  async continueAsNewIfDue(): Promise<void> {
    const info = workflowInfo();
    if (!info.continueAsNewSuggested && info.historyLength < this.policy.historyEventLimit) return;
    await condition(allHandlersFinished);
    if (this.delivery.sync) await this.delivery.pause();
    this.state.continuedAsNew++;
    await continueAsNew<typeof shipmentWorkflow>(this.input, { state: this.state, policy: this.policy, labelRequest: this.labelRequest });
  }

  // ---------------------------------------------------------------- internals

  /** The start options set these already; re-sending them would only add history events. */
  private rememberStartAttributes(): void {
    const given = workflowInfo().typedSearchAttributes;
    for (const key of [SA.status, SA.courier, SA.trackingNumber, SA.trackingTag]) {
      const value = given.get(key);
      if (typeof value === 'string') this.published.set(key.name, value);
    }
  }

  /** Only states an operator must act on, and `ok` once one of them is over: the usual path writes none. */
  private shopSyncAttribute(): string | null {
    const sync = this.delivery.sync;
    if (!sync) return null;
    if (STOPPED.has(sync.status)) return sync.status;
    return this.published.has(SA.shopSync.name) ? 'ok' : null;
  }

  /** A shipping error that stops the shipment, as the workflow's own typed failure (the Web UI shows its type). */
  private stoppedBy(err: unknown): unknown {
    // (a regular activity's failure arrives as an ActivityFailure, a first attempt's unwrapped)
    const failure = shippingErrorOf(err);
    if (!failure || (err instanceof ApplicationFailure && err.type === 'ShipmentFailed')) return err;
    this.state.lastError = recordError(failure);
    return ApplicationFailure.create({
      message: `shipment stopped: ${failure.message}`,
      type: 'ShipmentFailed',
      nonRetryable: true,
      details: [failure],
      cause: err as Error,
    });
  }
}
