/**
 * Shop delivery: every change of the shipment as a numbered event, delivered to the shop in
 * order by a coroutine beside the shipment, so a shop that is down or slow never holds up the
 * label or tracking. The shipment emits; this class queues, delivers, acknowledges, hands over
 * at the end, pauses for continue-as-new, and redelivers when an operator asks.
 */
import { CancellationScope, condition, isCancellation, log, sleep } from '@temporalio/workflow';
import { SHOP_SYNC_STOPPED, type RedeliverResult, type ShipmentState, type ShopSyncState } from '../definitions';
import { type ShopDeliveryResult, type ShopEventDraft, type ShopSyncPolicy } from '../../domain/shipment';
import { describeEvents } from './details';
import { EventTasks } from './event-tasks';
import { deliveryStopped, describeFailure, isNonRetryable } from './failures';
import { firstDelivery, shopDelivery } from './proxies';

/** Events per delivery call: a shop back from an outage catches up in a few calls, not one per event. */
const SHOP_DELIVERY_BATCH = 20;
export const STOPPED: ReadonlySet<string> = new Set(SHOP_SYNC_STOPPED);

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as the shipment emits it; delivery numbers and dates it. */
export type ShopEventInput = DistributiveOmit<ShopEventDraft, 'sequence' | 'occurredAt'>;

export class ShopDelivery {
  /** Set once the run started (the worker's policy says whether there is a shop to tell). */
  sync: ShopSyncState | null = null;
  /** The call in flight, cancelled to continue as new. */
  private scope: CancellationScope | null = null;
  private inFlight = false;
  private paused = false;
  private redeliverRequested = false;
  private readonly tasks = new EventTasks();

  constructor(
    private readonly state: ShipmentState,
    /** Mirrors a changed status into the Web UI and search attributes. */
    private readonly onChange: () => void,
  ) {}

  /** Starts the coroutine when there is a shop to tell; it runs until the workflow ends. */
  start(settings: ShopSyncPolicy | null): void {
    const sync = (this.sync = this.state.shopSync ?? null);
    if (sync && settings && sync.status !== 'no_connector') void this.deliver(sync, settings);
  }

  /**
   * Numbers an event and queues it for the shop; the coroutine picks it up. `at`: the time of a
   * body built only from recorded inputs (a poll's), which may be sent inside this task.
   */
  emit(draft: ShopEventInput, at?: string): void {
    const sync = this.sync;
    if (!sync) return;
    sync.emitted++;
    if (sync.status === 'no_connector') return;
    // The body is fixed here; without `at`, first sent once this task is recorded (event-tasks.ts).
    sync.pending.push({ ...draft, sequence: sync.emitted, occurredAt: at ?? new Date().toISOString() });
    this.tasks.emitted(sync.emitted, at !== undefined);
    if (sync.status === 'up_to_date') sync.status = 'delivering';
  }

  /** The order was cancelled in the shop after its label: what the shop has not received yet is not sent. */
  dropPending(): void {
    const sync = this.sync;
    if (!sync) return;
    sync.pending = [];
    if (sync.status === 'delivering') sync.status = 'up_to_date';
  }

  validateRedeliver(): void {
    const sync = this.state.shopSync;
    if (!sync) throw new Error('nothing to redeliver: the shipment has not started yet');
    if (!STOPPED.has(sync.status)) throw new Error(`nothing to redeliver: shop sync is ${sync.status}`);
  }

  /** An operator's redeliver: delivery resumes from the first event the shop does not have. */
  redeliver(): RedeliverResult {
    const sync = this.state.shopSync as ShopSyncState;
    const previousStatus = sync.status;
    sync.status = 'delivering';
    sync.failure = null;
    this.redeliverRequested = true;
    this.onChange();
    return { fromSequence: sync.pending[0]?.sequence ?? sync.delivered + 1, pending: sync.pending.length, previousStatus };
  }

  /** Before continue-as-new: the next run delivers what is still pending; a call cut short here is sent again (same ids). */
  async pause(): Promise<void> {
    this.paused = true;
    this.scope?.cancel();
    await condition(() => !this.inFlight);
  }

  /**
   * The shipment is over: it completes once the shop has every event. An event the shop refused
   * (or a gone endpoint, or an expired window) waits for an operator's redeliver within the
   * delivery window; after that the workflow completes and its state says what was not delivered.
   */
  async handOver(sync: ShopSyncState, settings: ShopSyncPolicy): Promise<void> {
    for (;;) {
      await condition(() => (sync.pending.length === 0 && !this.inFlight) || sync.status === 'no_connector' || STOPPED.has(sync.status));
      if ((sync.pending.length === 0 && !this.inFlight) || sync.status === 'no_connector') return;
      if (!(await condition(() => sync.status === 'delivering', settings.deliveryWindowMs))) return;
    }
  }

  /** The coroutine: pending events in sequence order, one call at a time. */
  private async deliver(sync: ShopSyncState, settings: ShopSyncPolicy): Promise<void> {
    try {
      await this.deliverInOrder(sync, settings);
    } catch (err) {
      if (!isCancellation(err)) throw err;
      // A Temporal cancellation request (Web UI) reached the coroutine; the shipment is being
      // stopped and the shop must still hear the rest, in order (a call cut short is sent again, same ids).
      await CancellationScope.nonCancellable(() => this.deliverInOrder(sync, settings));
    }
  }

  private async deliverInOrder(sync: ShopSyncState, settings: ShopSyncPolicy): Promise<void> {
    for (;;) {
      await condition(() => !this.paused && sync.status === 'delivering' && sync.pending.length > 0);
      const scope = new CancellationScope();
      this.scope = scope;
      this.inFlight = true;
      const resumeGone = this.redeliverRequested;
      this.redeliverRequested = false;
      try {
        let batch = sync.pending.slice(0, SHOP_DELIVERY_BATCH);
        // An event of this very task goes to the regular activity, which the server starts only once the task is recorded.
        const unsent = this.tasks.unrecorded(batch);
        let result = unsent ? null : await this.firstAttempt(scope, batch, resumeGone);
        if (result === null || result.retry) {
          // A platform's wait, and whether a write of a cut-off first attempt may still land, go to the regular activity.
          const after = { notBefore: result?.retry?.notBefore, afterCutOffAttempt: result === null && !unsent ? true : undefined };
          if (result?.retry) {
            this.acknowledge(sync, batch, result);
            const wait = result.retry.retryAfterMs;
            if (wait !== null) await scope.run(() => sleep(wait));
          }
          batch = sync.pending.slice(0, SHOP_DELIVERY_BATCH);
          const input = { ...this.order(), events: batch, resumeGone, ...after };
          result = await scope.run(() => shopDelivery(`Deliver ${describeEvents(batch)} to shop`, settings).deliverShopEvents(input));
        }
        this.acknowledge(sync, batch, result);
      } catch (err) {
        if (isCancellation(err)) {
          if (this.paused) continue; // continuing as new: the events stay pending for the next run
          throw err; // the workflow itself is being cancelled: see deliver()
        }
        this.stop(sync, settings, err);
      } finally {
        this.inFlight = false;
        this.scope = null;
      }
      this.onChange();
    }
  }

  /**
   * The first delivery attempt, inside the workflow task. It has seconds, not the connector's
   * timeout: a slow shop or an unexpected error ends it, and then (null) the regular activity
   * sends the same batch at once, with the same ids. Only the regular activity's own end, the
   * delivery window, makes a delivery expire.
   */
  private async firstAttempt(scope: CancellationScope, batch: ShopEventDraft[], resumeGone: boolean): Promise<ShopDeliveryResult | null> {
    try {
      return await scope.run(() =>
        firstDelivery(`Deliver ${describeEvents(batch)} to shop`).deliverShopEvents({ ...this.order(), events: batch, resumeGone }),
      );
    } catch (err) {
      if (isCancellation(err) || isNonRetryable(err)) throw err;
      log.info('first shop delivery attempt did not finish; the delivery activity takes over', {
        orderId: this.state.orderId,
        shop: this.state.shop,
        failure: describeFailure(err),
      });
      return null;
    }
  }

  /** Drops what the shop acknowledged from the queue and records why delivery stopped, if it did. */
  private acknowledge(sync: ShopSyncState, batch: ShopEventDraft[], result: ShopDeliveryResult): void {
    if (result.platform && Object.keys(result.platform).length > 0) sync.platform = { ...sync.platform, ...result.platform };
    const last = batch[result.delivered - 1];
    if (last) {
      sync.pending.splice(0, result.delivered);
      sync.delivered = last.sequence;
      this.tasks.acknowledged(last.sequence);
    }
    if (result.stopped) {
      const { reason, ...failure } = result.stopped;
      if (reason === 'no_connector') {
        sync.status = 'no_connector'; // the connector was removed from the worker's configuration
        sync.pending = [];
      } else {
        sync.status = reason === 'gone' ? 'gone' : 'failed';
        sync.failure = { ...failure, at: new Date().toISOString() };
        this.warnStopped(sync);
      }
    } else if (!result.retry && sync.pending.length === 0 && sync.status === 'delivering') {
      sync.status = 'up_to_date';
    }
  }

  /** A delivery that failed for good: expired when the delivery window ended, else failed. */
  private stop(sync: ShopSyncState, settings: ShopSyncPolicy, err: unknown): void {
    Object.assign(sync, deliveryStopped(sync, settings.deliveryWindowMs, err));
    this.warnStopped(sync);
  }

  private warnStopped(sync: ShopSyncState): void {
    log.warn('shop delivery stopped', { orderId: this.state.orderId, shop: this.state.shop, status: sync.status, failure: sync.failure });
  }

  /** Who the events are for; a platform connector also gets the platform's order id and the ids it made. */
  private order() {
    const { shop, orderId, platformOrderId, shopSync, courier, parcel } = this.state;
    return {
      shop,
      orderId,
      ...(platformOrderId !== undefined ? { platformOrderId, courier } : {}),
      ...(shopSync?.platform ? { platform: { ...shopSync.platform } } : {}),
      ...(parcel ? { parcel } : {}),
    };
  }
}
