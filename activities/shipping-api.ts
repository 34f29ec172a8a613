/**
 * Activities: one thin wrapper per shipping API call. The clients (and so the credentials) are
 * given to them by the worker, one per shipping account; workflows pass only order identity,
 * label data and the account's name.
 */
import { createHash } from 'node:crypto';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { ShippingApiClient } from '../shipping-api/client';
import type { LabelRequestWithoutKey, OrderDetail, TrackingRecord } from '../shipping-api/contract';
import type { KnownReading } from '../domain/shop-order';
import { describeTracking, isChange, snapshotOfRecord, type TrackingChange, type TrackingSnapshot } from '../domain/tracking';
import { ShippingApiError } from '../shipping-api/errors';
import type { ShopConnectors } from '../platforms/connectors';
import type { LabelOrderCheck } from '../shop-import/label-check';
import type { ImportConnector } from '../platforms/order-source';
import type { OrderIdentity, TrackingPolicy } from '../domain/shipment';
import { AccountHeld, PaceWaitExceeded, sleepUntil, type CallClass, type CallPacing } from '../pacing/account-pacer';
import { boundHold } from '../shipping-api/retry-after';
import { trackingOrNull } from '../shipping-api/tracking';
import { accountCalls, singleAccount, type AccountCalls, type AccountDirectory } from '../shipping-accounts/directory';
import { withHeartbeat } from './heartbeat';
import { callPriorityKey } from './priority-header';
import {
  afterFailure,
  FIRST_ATTEMPT_PACE_WAIT_MS,
  PACED_BY_ACCOUNT,
  ACCOUNT_HELD,
  HELD_ACCOUNT_RELEASE_MS,
  SHOP_ORDER_CHANGED,
  toApplicationFailure,
  TRACKING_UNCHANGED,
  type AttemptProgress,
} from '../workflow-definitions/activity-failures';

// Where the workflow's steps found them before they moved to the domain (the poll's comparison is shared).
export type { TrackingChange, TrackingSnapshot };

export interface CreateLabelInput extends OrderIdentity {
  revision: number;
  labelRequest: LabelRequestWithoutKey;
  /** The shipment's shipping account; absent: `default` (shipments started before accounts had names). */
  account?: string;
  /** A parcel's location (an order shipping from several): part of its key. */
  location?: string;
  /** A pulled shipment's reading of its order: checked with the shop right before the label (label-check.ts). */
  shopCheck?: KnownReading;
  /** No call before this time (epoch ms): the Retry-After the first attempt met (see `paced`). */
  notBefore?: number;
}

export interface CreatedLabel {
  idempotencyKey: string;
  labelId: string;
  customerOrderNumber: string;
  courierOrderNumber: string | null;
  courierTrackingNumber: string | null;
}

/**
 * The label's idempotencyKey: a pure function of the order and the label data revision, so
 * every retry, crash, redeploy, reset and re-import of the same revision sends the same key.
 * Readable when short enough; otherwise a SHA-256 of the identity keeps it within 100 chars.
 * The NUL between shop and orderId separates them unambiguously because neither may contain a
 * control character (ExternalId, checked wherever an order enters: import, CLI, startShipment);
 * the key of every order valid before that check is unchanged (test/hostile-ids.test.ts pins one).
 *
 * A parcel of an order shipping from several locations adds its location:
 * `<shop>:<orderId>@<location>:r<revision>` (`@` is percent-encoded inside shop and orderId, so
 * it separates); an order of one location has no `@` part, exactly as before parcels.
 */
export function labelIdempotencyKey({
  shop,
  orderId,
  revision,
  location,
}: OrderIdentity & { revision: number; location?: string }): string {
  const at = location === undefined ? '' : `@${encodeURIComponent(location)}`;
  const readable = `${encodeURIComponent(shop)}:${encodeURIComponent(orderId)}${at}:r${revision}`;
  if (readable.length <= 100) return readable;
  const hash = createHash('sha256').update(shop).update('\u0000').update(orderId);
  if (location !== undefined) hash.update('\u0000').update(location);
  return `sha256-${hash.digest('hex')}:r${revision}`;
}

export interface AwaitTrackingChangeInput {
  labelId: string;
  known: TrackingSnapshot;
  pollIntervalMs: number;
  /** The shipment's polls before this wait, so a poll is numbered as the details count it (absent before). */
  pollsBefore?: number;
  /** The shipment's shipping account; absent: `default`. */
  account?: string;
}

/**
 * Carried from one poll (attempt) to the next in heartbeat details, which the server keeps
 * across retries and the Web UI shows on the pending activity. Written only while polls fail
 * (the backoff needs the count): a heartbeat that reaches the server is a billed action on
 * Temporal Cloud, so an unchanged poll records nothing. Its time and result are in the
 * failure that schedules the next poll, which the Web UI shows as the last failure.
 */
export interface PollProgress extends AttemptProgress {
  failuresInARow: number;
  lastPolledAt: string | null;
  lastResult: string | null;
}

const NO_PROGRESS: PollProgress = { failuresInARow: 0, lastPolledAt: null, lastResult: null };

export interface ActivityOptions {
  /** Which shops get shipment events (their connector type reaches the workflow, nothing else). */
  shopConnectors?: ShopConnectors;
  /** With a single client: how its calls share the account's rate limit; default: unpaced. */
  pacing?: CallPacing;
  /**
   * The fleet's tracking pollers run on this worker: a shipment still waiting in
   * `awaitTrackingChange` gets the answer of its next regular poll, change or not, and moves
   * over to them.
   */
  handOverToPollers?: boolean;
  /** Checks a pulled shipment's order with its shop right before the label; absent: no check. */
  labelCheck?: LabelOrderCheck;
}

/**
 * What a failed attempt leaves for the next one is `AttemptProgress` (retry-policy.ts), in its
 * heartbeat details, which the server keeps across attempts: the next attempt waits for a
 * 429's Retry-After even if the server dispatches it early (e.g. right after a server restart),
 * and the backoff follows the API failures in a row. Attempts lost with a killed worker leave
 * nothing, so they neither count as API failures nor lengthen the backoff.
 */

export function createActivities(
  apis: ShippingApiClient | AccountDirectory,
  trackingPolicy: TrackingPolicy,
  options: ActivityOptions = {},
) {
  const { shopConnectors, handOverToPollers = false, labelCheck } = options;
  const accounts = apis instanceof ShippingApiClient ? singleAccount(apis, options.pacing) : apis;

  /**
   * One API call inside an activity: waits for an earlier attempt's Retry-After, then for its
   * turn under the account's pace; heartbeats while either is slow. `firstRetryAfter`: when the
   * Retry-After the first attempt (inside the workflow task) met ends, passed on by the workflow
   * instead of a timer and a workflow task: this call waits it, or, when long, gives its slot
   * back at once and the server starts the next attempt when it ends. Only this call: whether
   * the 429 held the account was the pace's to decide when it came.
   */
  function paced<T>({ pacing }: AccountCalls, cls: CallClass, call: (signal: AbortSignal) => Promise<T>, firstRetryAfter = 0): Promise<T> {
    const ctx = Context.current();
    const { info } = ctx;
    const notBefore = Number((info.heartbeatDetails as AttemptProgress | undefined)?.notBefore ?? 0);
    const ownWait = boundHold(Number(firstRetryAfter) || 0, Date.now());
    const priority = callPriorityKey();
    return withHeartbeat(async (signal) => {
      // A regular attempt dispatched long before its Retry-After ends gives its slot back too.
      const until = Math.max(notBefore, ownWait);
      if (!info.isLocal && until - Date.now() > HELD_ACCOUNT_RELEASE_MS) throw new AccountHeld(until);
      await pacing.waitUntil(notBefore, signal);
      await sleepUntil(ownWait, signal);
      const asked = Date.now();
      return pacing.run(
        cls,
        (turn) => {
          // Where a call's wait went (bench backlog-latency reads it); debug, so free at info.
          ctx.log.debug('paced call sent', { cls, priority, pacedMs: Date.now() - asked });
          return call(turn);
        },
        signal,
        // A first attempt does not sit out a hold it cannot outlast: it holds a workflow task meanwhile.
        // The shipment's priority (inherited by its activities) orders the waiting calls of a class.
        info.isLocal
          ? { maxWaitMs: FIRST_ATTEMPT_PACE_WAIT_MS, releaseOverMs: FIRST_ATTEMPT_PACE_WAIT_MS, priority }
          : { releaseOverMs: HELD_ACCOUNT_RELEASE_MS, priority },
      );
    });
  }

  /** One API call as an activity: a ShippingApiError becomes the failure the retry policy expects. */
  async function apiCall<T>(
    account: AccountCalls,
    cls: CallClass,
    call: (signal: AbortSignal) => Promise<T>,
    context: { idempotencyKey?: string } = {},
    firstRetryAfter?: number,
  ): Promise<T> {
    try {
      return await paced(account, cls, call, firstRetryAfter);
    } catch (err) {
      if (err instanceof PaceWaitExceeded) throw pacedByAccount(err);
      if (err instanceof AccountHeld) throw Context.current().info.isLocal ? pacedByAccount(err) : accountHeld(err);
      if (!(err instanceof ShippingApiError)) throw err;
      logFailure(err, context);
      const ctx = Context.current();
      const previous = (ctx.info.heartbeatDetails as AttemptProgress | undefined) ?? {};
      const { retryable, delayMs, failuresInARow, notBefore, record } = afterFailure(err, previous, Date.now());
      // A local first attempt has no next attempt to tell: the workflow decides what follows.
      // Otherwise one heartbeat per failed attempt (a billed action on Temporal Cloud) until the
      // backoff reaches its cap, none on success.
      if (retryable && record && !ctx.info.isLocal) ctx.heartbeat({ ...previous, failuresInARow, notBefore } satisfies AttemptProgress);
      const ends = err.kind === 'rate_limited' ? { retryAfterEndsAt: notBefore } : {};
      throw toApplicationFailure(
        err,
        { ...context, ...ends },
        { nonRetryable: !retryable, nextRetryDelayMs: retryable ? delayMs : undefined },
      );
    }
  }

  /**
   * Inside the label's turn, right before it is sent: the order as its shop has it now. A change
   * that matters fails the attempt unsent (SHOP_ORDER_CHANGED, never retried); a check that cannot
   * be made lets the label go on, as before the check existed.
   */
  async function checkWithShop(shop: string, orderId: string, known: KnownReading | undefined, signal: AbortSignal): Promise<void> {
    const connector = known && labelCheck ? shopConnectors?.connectorFor(shop) : null;
    if (!connector || connector.type === 'webhook' || !connector.import?.checkBeforeLabel) return;
    const asked = Date.now();
    const answer = await labelCheck!.check(connector as ImportConnector, known!, signal);
    // What the check adds to a label's time (BENCH_WORKER_LOG_LEVEL=debug shows it); debug, so free at info.
    Context.current().log.debug('order checked with its shop', { shop, orderId, result: answer.result, checkMs: Date.now() - asked });
    if (answer.result === 'unchecked')
      Context.current().log.warn('order not checked with its shop before the label', { shop, orderId, reason: answer.reason });
    if (answer.result !== 'changed') return;
    const { kinds } = answer;
    Context.current().log.info('order changed in the shop: no label', { shop, orderId, kinds, status: answer.change.facts.status });
    throw ApplicationFailure.create({
      type: SHOP_ORDER_CHANGED,
      message: `the order changed in the shop before its label (${kinds.join(', ')}): no label was asked for`,
      nonRetryable: true,
      details: [answer.change],
    });
  }

  return {
    async createLabel({
      shop,
      orderId,
      revision,
      labelRequest,
      account,
      location,
      shopCheck,
      notBefore,
    }: CreateLabelInput): Promise<CreatedLabel> {
      const idempotencyKey = labelIdempotencyKey({ shop, orderId, revision, location });
      const calls = accountCalls(accounts, account);
      const send = async (signal: AbortSignal) => {
        await checkWithShop(shop, orderId, shopCheck, signal);
        return calls.api.createLabel({ ...labelRequest, idempotencyKey }, { signal });
      };
      const label = await apiCall(calls, 'label', send, { idempotencyKey }, notBefore);
      Context.current().log.info('label created', { orderId, shop, labelId: label.id, idempotencyKey, ...(account ? { account } : {}) });
      return {
        idempotencyKey,
        labelId: label.id,
        customerOrderNumber: label.customerOrderNumber,
        courierOrderNumber: label.courierOrderNumber,
        courierTrackingNumber: label.courierTrackingNumber,
      };
    },

    /** `notBefore`: the Retry-After the first attempt met (as CreateLabelInput's). */
    async readOrder(labelId: string, account?: string, notBefore?: number): Promise<OrderDetail> {
      const calls = accountCalls(accounts, account);
      return apiCall(calls, 'order', (signal) => calls.api.getOrder(labelId, { signal }), {}, notBefore);
    },

    /** null while the courier has not registered the shipment yet (404). */
    async getTracking(labelId: string, account?: string): Promise<TrackingRecord | null> {
      const calls = accountCalls(accounts, account);
      return apiCall(calls, 'tracking', (signal) => trackingOrNull(calls.api, labelId, signal));
    },

    /**
     * One tracking poll. A change returns; an unchanged poll fails with nextRetryDelay = the
     * poll interval, so the server's retry is the next poll and nothing is written to history.
     */
    async awaitTrackingChange({
      labelId,
      known,
      pollIntervalMs,
      pollsBefore = 0,
      account,
    }: AwaitTrackingChangeInput): Promise<TrackingChange> {
      const ctx = Context.current();
      const calls = accountCalls(accounts, account);
      const previous: PollProgress = { ...NO_PROGRESS, ...(ctx.info.heartbeatDetails as Partial<PollProgress> | undefined) };
      const polledAt = new Date().toISOString();
      const polls = ctx.info.attempt; // each attempt is one poll
      const progress: PollProgress = { ...previous, lastPolledAt: polledAt };
      // Numbered over the whole shipment, as its details panel and `status` count polls.
      const poll = `poll #${pollsBefore + polls} at ${polledAt}`;
      let record: TrackingRecord | null;
      try {
        record = await paced(calls, 'tracking', (signal) => trackingOrNull(calls.api, labelId, signal));
      } catch (err) {
        if (!(err instanceof ShippingApiError)) throw err;
        // A 429 waits its Retry-After; anything else never later than the next regular poll.
        const next = afterFailure(err, previous, Date.now(), pollIntervalMs);
        progress.failuresInARow = next.failuresInARow;
        progress.notBefore = next.notBefore;
        progress.lastResult = `${err.kind}: ${err.message}`;
        // Once the backoff is at the poll interval, the failure's message tells the Web UI the rest.
        if (next.record) ctx.heartbeat(progress);
        const delayMs = err.kind === 'rate_limited' ? next.delayMs : Math.min(next.delayMs, pollIntervalMs);
        logFailure(err, { labelId, poll: pollsBefore + polls });
        throw toApplicationFailure(
          err,
          {},
          { message: `${poll}: ${err.message}`, nextRetryDelayMs: delayMs, nonRetryable: !next.retryable },
        );
      }

      const seen = snapshotOfRecord(record);
      // Handing over, the shipment applies what it is told (nothing if it is no news) and joins the
      // pollers. Not at a first attempt: code from before the pollers (a worker not yet
      // redeployed) would schedule the next wait at once, and its first attempt polls at once.
      if (isChange(known, seen) || (handOverToPollers && polls > 1)) {
        return {
          ...seen,
          subtagMessage: record?.subtagMessage ?? null,
          lastCheckpoint: record?.checkpoints.at(-1) ?? null,
          polls,
          polledAt,
        };
      }
      progress.lastResult = describeTracking(seen);
      if (previous.failuresInARow > 0) ctx.heartbeat({ ...progress, failuresInARow: 0 }); // the streak ended
      const unchanged = ApplicationFailure.create({
        type: TRACKING_UNCHANGED,
        message: `${poll}: ${progress.lastResult}, no change; next poll in ${Math.round(pollIntervalMs / 1000)} s`,
        nextRetryDelay: pollIntervalMs,
        category: ApplicationFailureCategory.BENIGN,
      });
      unchanged.stack = ''; // not an error: a stack would only clutter the Web UI and each stored retry
      throw unchanged;
    },

    /**
     * The worker's configured policy, read once per shipment (a local activity), with the
     * shop's connector as configured now (not its URL or secrets: those stay in the worker).
     */
    async trackingPolicy(shop?: string): Promise<TrackingPolicy> {
      if (shop === undefined || !shopConnectors) return trackingPolicy;
      return {
        ...trackingPolicy,
        shopSync: {
          connector: shopConnectors.connectorFor(shop)?.type ?? null,
          deliveryWindowMs: shopConnectors.deliveryWindowMs,
          maxBackoffMs: shopConnectors.maxBackoffMs,
        },
      };
    },
  };
}

export type ShipmentActivities = ReturnType<typeof createActivities>;

/** A first attempt that got no turn in time: the workflow continues with the regular activity at once. */
function pacedByAccount(err: PaceWaitExceeded | AccountHeld): ApplicationFailure {
  const failure = ApplicationFailure.create({ type: PACED_BY_ACCOUNT, message: err.message, category: ApplicationFailureCategory.BENIGN });
  failure.stack = '';
  return failure;
}

/**
 * The account is held for longer than an attempt waits in its worker slot: the attempt ends
 * unsent and the server starts the next one when the hold ends (its heartbeat keeps that time
 * should the server dispatch it early). A slot held through a long Retry-After of one account
 * is one less for the others' labels.
 */
function accountHeld(err: AccountHeld): ApplicationFailure {
  const ctx = Context.current();
  const previous = (ctx.info.heartbeatDetails as AttemptProgress | undefined) ?? {};
  ctx.heartbeat({ ...previous, notBefore: err.until } satisfies AttemptProgress);
  const failure = ApplicationFailure.create({
    type: ACCOUNT_HELD,
    message: err.message,
    category: ApplicationFailureCategory.BENIGN,
    nextRetryDelay: Math.max(1, err.until - Date.now()),
  });
  failure.stack = '';
  return failure;
}

/**
 * Expected outcomes are info, not warnings: a 429 is the API pacing the fleet (retried), and a
 * courier's rejection of a label (courier_error, validation) is the shipment's to report, with
 * what comes next, in one WARN line of its own (workflows/shipment/label.ts).
 */
const EXPECTED_KINDS: ReadonlySet<string> = new Set(['rate_limited', 'courier_error', 'validation']);

function logFailure(err: ShippingApiError, context: Record<string, unknown>): void {
  const log = Context.current().log;
  const fields = { ...err.toJSON(), ...context };
  if (EXPECTED_KINDS.has(err.kind)) log.info('shipping API call failed', fields);
  else log.warn('shipping API call failed', fields);
}
