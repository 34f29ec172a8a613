/**
 * Relays the shipping API account's Retry-After between the workers of a fleet: a 429 one worker
 * gets holds every worker's calls. A relayed 429 costs two signals, to the account's hold mailbox
 * (which every worker reads as the server writes it) and to the account workflow
 * (workflows/account.ts: its rate, and the hold a worker started later reads).
 *
 * It also reports the fresh answers this worker counted (at most one signal per
 * FRESH_REPORT_MS, only when there are some), and reads the fleet's pool of them at start.
 */
import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { Answers } from './noise-floor';
import {
  accountFreshAnswersSignal,
  accountPaceUpdate,
  accountRateLimitedSignal,
  ACCOUNT_HOLDS_RUN_MS,
  ACCOUNT_HOLDS_TASK_QUEUE,
  ACCOUNT_HOLDS_WORKFLOW_TYPE,
  ACCOUNT_WORKFLOW_TYPE,
  LEASE_MS,
  poolFresh,
  type FreshAnswers,
} from '../workflow-definitions/account';
import { boundHold } from '../shipping-api/retry-after';
import { ACCOUNT_PRIORITY_KEY } from '../domain/priority';
import type { PaceReport } from './fleet-pace';
import type { FleetShare } from './account-pacer';

export interface FleetRateLimits {
  /** Tells the fleet: no call before `until` (fire and forget). */
  publish(until: number): void;
  /**
   * Calls `listener` with each later not-before time the fleet learns, starting with the one
   * already recorded (resolves once that is read, before this worker makes any call).
   */
  subscribe(listener: (until: number) => void): Promise<void>;
  /** Counts fresh answers of this worker toward the fleet's pool (reported in batches). */
  reportFresh(answers: Answers): void;
  /** The fleet's pool of fresh answers of the last FRESH_MAX_AGE_MS, as read at `subscribe`. */
  recordedFresh(): Answers;
  /**
   * Every FRESH_READ_MS while `wanted()` (this worker has had 429s lately), reads the pool again
   * (every worker's reports) and hands it to `adopt`: each worker judges by the fleet's count.
   */
  watchFresh(wanted: () => boolean, adopt: (answers: Answers) => void): void;
  /** This worker's report to the account's one pace (fleet-pace.ts): its share, or null if the workflow did not answer. */
  pace(report: Omit<PaceReport, 'worker'>): Promise<FleetShare | null>;
  close(): Promise<void>;
}

/** Fresh answers are reported at most this often. */
export const FRESH_REPORT_MS = 5_000;
/** Reports older than this say nothing of the account's noise now. */
export const FRESH_MAX_AGE_MS = 10 * 60_000;
/** A worker that has had 429s lately reads the fleet's pool this often. */
export const FRESH_READ_MS = 10_000;

/**
 * How long the relay waits before reading the account workflow's history again after its
 * `failures`-th failed read in a row: a hold relayed meanwhile reaches no worker (calls into a
 * Retry-After), so at once at first, backing off to a second while reading keeps failing.
 */
export function listenRetryMs(failures: number): number {
  return Math.min(1000, 50 * 2 ** Math.max(0, failures - 1));
}

const share = z.number().finite().min(0).max(1);
/** Reports unanswered this long: the worker warns that it paces alone (once, until one is answered). */
export const ALONE_WARN_MS = 10_000;

/**
 * A grant as this worker paces by it: the account workflow may be of another build, and a rate
 * that is not a number left every waiting call unpaced (a slot at NaN is never in the future).
 */
const paceGrant: z.ZodType<FleetShare, unknown> = z.object({
  rate: z.number().finite().min(0),
  phase: share.default(0),
  slowStart: z.boolean().optional(),
  grid: z.object({ rate: z.number().finite().positive(), origin: z.number().finite() }).optional(),
  noise: z.object({ share: share, answers: z.number().finite().min(0) }).optional(),
  freshShare: share.optional(),
  accountRate: z.number().finite().positive().optional(),
});

/**
 * The account's workflow id: a digest of the account's name, the API's address and the task
 * queue, so the workers of one fleet (one task queue) meet per account. Not of its credentials:
 * a rotated key keeps the account's pacer, and no credential reaches Temporal. (The workflow
 * runs on that task queue: workers of another queue could not run it.)
 */
export function accountWorkflowId(account: { name: string; baseUrl: string }, taskQueue: string): string {
  const digest = createHash('sha256')
    .update(account.name)
    .update('\u0000')
    .update(new URL(account.baseUrl).origin)
    .update('\u0000')
    .update(taskQueue)
    .digest('hex');
  return `shipping-api-account-${digest.slice(0, 16)}`;
}

/** The account's hold mailbox (ACCOUNT_HOLDS_WORKFLOW_TYPE): beside its account workflow's id. */
export function accountHoldsWorkflowId(accountWorkflowId: string): string {
  return `${accountWorkflowId}-holds`;
}

export function fleetRateLimits(options: {
  client: Client;
  taskQueue: string;
  workflowId: string;
  /** Told true when reports have gone unanswered for ALONE_WARN_MS (the worker paces alone), false when one is answered again. */
  onAlone?: (alone: boolean) => void;
  /** How long a run of the account's hold mailbox lasts (default ACCOUNT_HOLDS_RUN_MS; tests shorten it). */
  holdsRunMs?: number;
  log: {
    warn(message: string, meta?: Record<string, unknown>): void;
    info(message: string, meta?: Record<string, unknown>): void;
    debug(message: string, meta?: Record<string, unknown>): void;
  };
}): FleetRateLimits {
  const { client, taskQueue, workflowId, log, onAlone, holdsRunMs = ACCOUNT_HOLDS_RUN_MS } = options;
  const listeners: Array<(until: number) => void> = [];
  const stop = new AbortController();
  let known = 0;
  let published = 0;
  let started: Promise<WorkflowHandle> | null = null;
  let pool: FreshAnswers | null = null;
  let unreported: Answers = { answers: 0, limited: 0 };
  let reportTimer: NodeJS.Timeout | null = null;
  let readTimer: NodeJS.Timeout | null = null;
  /** This process's lease in the account's pace. */
  const worker = randomUUID();
  /** Since when the account workflow has answered none of this worker's reports in a row (0: it answers), the last, and whether that was warned of. */
  let alone = { since: 0, last: 0, warned: false };
  /** Clears a warning when the reports stop: a worker with no calls to make paces nothing, alone or not. */
  let aloneIdle: NodeJS.Timeout | null = null;
  function answered(): void {
    if (aloneIdle) clearTimeout(aloneIdle);
    aloneIdle = null;
    alone = { since: 0, last: 0, warned: false };
  }

  function report(): void {
    reportTimer = null;
    const batch = { ...unreported, at: Date.now() };
    unreported = { answers: 0, limited: 0 };
    void handle()
      .then((account) => account.signal(accountFreshAnswersSignal, batch))
      .catch((err: unknown) => log.debug('fleet rate-limit relay: fresh answers not reported', { error: String(err) }));
  }

  const handle = (): Promise<WorkflowHandle> => {
    started ??= client.workflow
      .start(ACCOUNT_WORKFLOW_TYPE, {
        taskQueue,
        workflowId,
        args: [],
        workflowIdConflictPolicy: 'USE_EXISTING',
        priority: { priorityKey: ACCOUNT_PRIORITY_KEY },
      })
      // Not start's own handle: it names the run it found as the first of its chain, and an update
      // through it reaches no run once that one has continued as new (the server finds no chain
      // that starts there), so a worker started, or finding the workflow again, after the first
      // continue-as-new paced alone for good (four workers on an account of 2 a second: 23 % 429s).
      .then(() => client.workflow.getHandle(workflowId))
      .catch((err: unknown) => {
        started = null;
        throw err;
      });
    return started;
  };

  /** The account's hold mailbox, started if no run of it is (one that timed out is followed by a new one). */
  const holdsId = accountHoldsWorkflowId(workflowId);
  let mailboxStarted: Promise<unknown> | null = null;
  const mailboxOptions = {
    taskQueue: ACCOUNT_HOLDS_TASK_QUEUE,
    workflowId: holdsId,
    args: [],
    workflowRunTimeout: holdsRunMs,
  };
  const mailbox = (): Promise<unknown> => {
    mailboxStarted ??= client.workflow
      .start(ACCOUNT_HOLDS_WORKFLOW_TYPE, { ...mailboxOptions, workflowIdConflictPolicy: 'USE_EXISTING' })
      .catch((err: unknown) => {
        mailboxStarted = null;
        throw err;
      });
    return mailboxStarted;
  };

  /** Events already warned of as unreadable (each history is read again at every start and pool read). */
  const unreadable = new Set<string>();
  /** What one event of the account workflow's history says: a hold, a fresh-answers report, or a run's input (both carried). */
  async function readEvent(
    event: temporal.api.history.v1.IHistoryEvent,
  ): Promise<{ hold?: number; fresh?: FreshAnswers; carriedFresh?: FreshAnswers }> {
    const signaled = event.workflowExecutionSignaledEventAttributes;
    const payloads = signaled ? signaled.input?.payloads : event.workflowExecutionStartedEventAttributes?.input?.payloads;
    if (!payloads || payloads.length === 0) return {};
    let value: unknown;
    try {
      value = await decodeFromPayloadsAtIndex<unknown>(client.options.loadedDataConverter, 0, payloads);
    } catch (err) {
      // One event this worker cannot read (a key it lacks, a payload it does not know) is skipped:
      // thrown, the relay would read the run again from its start and meet it again, for good.
      const key = `${String(event.eventId ?? '')}@${String(event.eventTime?.seconds ?? '')}`;
      if (!unreadable.has(key) && unreadable.size < 100) {
        unreadable.add(key);
        log.warn('fleet rate-limit relay: an event of the account workflow could not be read', {
          eventId: String(event.eventId ?? ''),
          error: String(err),
        });
      }
      return {};
    }
    if (signaled?.signalName === accountFreshAnswersSignal.name) return { fresh: value as FreshAnswers };
    if (signaled) return signaled.signalName === accountRateLimitedSignal.name && typeof value === 'number' ? { hold: value } : {};
    // The run's input: the hold and the pool carried over a continue-as-new.
    const carried = value as { notBefore?: unknown; fresh?: FreshAnswers } | undefined;
    return {
      ...(typeof carried?.notBefore === 'number' ? { hold: carried.notBefore } : {}),
      ...(carried?.fresh ? { carriedFresh: carried.fresh } : {}),
    };
  }

  /** A hold read from the account's history: passed on to the listeners if it is later than any known and not over. */
  function hear(hold: number | undefined): void {
    if (hold === undefined) return;
    const until = boundHold(hold, Date.now());
    if (until <= known || until <= Date.now()) return;
    known = until;
    for (const listener of listeners) listener(until);
    // One line per relayed 429 and worker: when this worker learned of the hold.
    log.info('account held by the fleet', { until: new Date(until).toISOString() });
  }

  /**
   * Follows a workflow's history as the server writes it (a long poll, as a tracking span follows
   * its shard's), passing on each hold in it. At a run's close (a continue-as-new, a mailbox's
   * timeout) it reads the next run from its start; it backs off only while reading fails.
   */
  async function follow(id: string, ensure: () => Promise<unknown>, closed: () => void): Promise<void> {
    const namespace = client.options.namespace;
    let failures = 0;
    let nextPageToken: Uint8Array | undefined;
    while (!stop.signal.aborted) {
      try {
        if (!nextPageToken) await ensure(); // the run to read exists: started, or found running
        const page = await client.connection.withAbortSignal(stop.signal, () =>
          client.workflowService.getWorkflowExecutionHistory({
            namespace,
            execution: { workflowId: id },
            nextPageToken,
            waitNewEvent: true,
          }),
        );
        failures = 0;
        for (const event of page.history?.events ?? []) hear((await readEvent(event)).hold);
        nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
        if (!nextPageToken) closed();
      } catch (err) {
        if (stop.signal.aborted) return;
        closed();
        nextPageToken = undefined;
        log.debug('fleet rate-limit relay: retrying', { workflowId: id, error: String(err) });
        await new Promise((resolve) => setTimeout(resolve, listenRetryMs(++failures)).unref());
      }
    }
  }

  /**
   * Hears every hold as soon as the server has it: from the account's hold mailbox, whose signals
   * no workflow task holds back (ACCOUNT_HOLDS_WORKFLOW_TYPE), and from the account workflow's
   * history too, where workers of builds before the mailbox relay theirs.
   */
  function listen(): Promise<void> {
    return Promise.all([follow(holdsId, mailbox, () => (mailboxStarted = null)), follow(workflowId, handle, () => (started = null))]).then(
      () => undefined,
    );
  }

  /**
   * The hold recorded before this worker started, read from the account workflow's history (and
   * the mailbox's, readMailboxHold): a worker (re)started right after a 429 knows it before its
   * first call. Sets `pool` from the same history:
   * the fresh answers of the last FRESH_MAX_AGE_MS, carried and reported.
   */
  async function readAccountHistory(): Promise<number> {
    try {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      const recent = (fresh: FreshAnswers | undefined) => (fresh && fresh.at >= Date.now() - FRESH_MAX_AGE_MS ? fresh : null);
      let until = 0;
      pool = null;
      for (const event of history.events ?? []) {
        const { hold, fresh, carriedFresh } = await readEvent(event);
        if (hold !== undefined && hold > until) until = hold;
        if (event.workflowExecutionStartedEventAttributes) pool = recent(carriedFresh) ? poolFresh(null, carriedFresh!) : null;
        const reported = recent(fresh);
        if (reported) pool = poolFresh(pool, reported);
      }
      return boundHold(until, Date.now());
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) log.debug('fleet rate-limit relay: no recorded hold read', { error: String(err) });
      return 0;
    }
  }

  /** The latest hold the mailbox's history holds (its running run, or its last): 0 if none. */
  async function readMailboxHold(): Promise<number> {
    try {
      const history = await client.workflow.getHandle(holdsId).fetchHistory();
      let until = 0;
      for (const event of history.events ?? []) until = Math.max(until, (await readEvent(event)).hold ?? 0);
      return boundHold(until, Date.now());
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError))
        log.debug('fleet rate-limit relay: no hold read from the mailbox', { error: String(err) });
      return 0;
    }
  }

  let listening: Promise<void> | null = null;
  return {
    publish(until) {
      // Calls in flight when the 429 came get 429s too: relay a new time, not each of them.
      if (until <= Math.max(known, published) + 100) return;
      published = until;
      // The mailbox reaches the other workers at once; the account workflow cuts the rate from it,
      // and a worker started later reads the hold recorded there.
      void client.workflow
        .signalWithStart(ACCOUNT_HOLDS_WORKFLOW_TYPE, { ...mailboxOptions, signal: accountRateLimitedSignal, signalArgs: [until] })
        .catch((err: unknown) => log.warn('fleet rate-limit relay: could not tell the fleet', { error: String(err) }));
      void handle()
        .then((account) => account.signal(accountRateLimitedSignal, until))
        .catch((err: unknown) => log.warn('fleet rate-limit relay: could not tell the account workflow', { error: String(err) }));
    },
    async subscribe(listener) {
      listeners.push(listener);
      // The mailbox has a hold first; the account workflow's history has it once its task let it in.
      const recorded = Math.max(...(await Promise.all([readAccountHistory(), readMailboxHold()])));
      if (recorded > Date.now()) {
        known = Math.max(known, recorded);
        listener(recorded);
        log.info('account held by the fleet', { until: new Date(recorded).toISOString(), recorded: true });
      }
      listening ??= listen();
    },
    reportFresh(answers) {
      unreported = { answers: unreported.answers + answers.answers, limited: unreported.limited + answers.limited };
      if (!reportTimer && !stop.signal.aborted) {
        reportTimer = setTimeout(report, FRESH_REPORT_MS);
        reportTimer.unref();
      }
    },
    recordedFresh() {
      return pool ? { answers: pool.answers, limited: pool.limited } : { answers: 0, limited: 0 };
    },
    watchFresh(wanted, adopt) {
      if (readTimer) clearInterval(readTimer);
      readTimer = setInterval(() => {
        if (!wanted()) return;
        // The hold read again is known already (or passed): only the pool is new here.
        void readAccountHistory().then(() => {
          if (pool && !stop.signal.aborted) adopt({ answers: pool.answers, limited: pool.limited });
        });
      }, FRESH_READ_MS);
      readTimer.unref();
    },
    async pace(report) {
      try {
        const account = await handle();
        const answer = await client.withAbortSignal(AbortSignal.any([stop.signal, AbortSignal.timeout(2000)]), () =>
          account.executeUpdate(accountPaceUpdate, { args: [{ ...report, worker }] }),
        );
        const checked = paceGrant.safeParse(answer);
        if (!checked.success) {
          // Not a share to pace by: this worker paces alone until a grant is.
          log.warn('fleet pace: a grant that is no pace, ignored', { issue: checked.error.issues[0]?.path.join('.') ?? '' });
          return null;
        }
        if (alone.warned) {
          log.info('fleet pace: the account workflow answers again, this worker shares its rate');
          onAlone?.(false);
        }
        answered();
        // The schema keeps only what a worker paces by (the account's own rate is dropped).
        return checked.data;
      } catch (err) {
        // The run continued as new, or an older build runs it: the next report finds it again; meanwhile the worker paces alone.
        started = null;
        if (stop.signal.aborted) return null;
        log.debug('fleet pace: no share', { error: String(err) });
        // One report lost at a continue-as-new is routine; reports lost for good are the fleet's one rate lost.
        // (Reports a lease apart are not in a row: the worker had no calls to make between them.)
        const now = Date.now();
        if (now - alone.last > LEASE_MS) alone.since = now;
        alone.last = now;
        if (!alone.warned && now - alone.since >= ALONE_WARN_MS) {
          alone.warned = true;
          log.warn(`fleet pace: no share from the account workflow for ${ALONE_WARN_MS / 1000} s, this worker paces alone`, {
            error: String(err),
          });
          onAlone?.(true);
        }
        if (alone.warned) {
          if (aloneIdle) clearTimeout(aloneIdle);
          aloneIdle = setTimeout(() => {
            log.info('fleet pace: no calls to pace for two leases, this worker no longer counts as pacing alone');
            onAlone?.(false);
            answered();
          }, 2 * LEASE_MS);
          aloneIdle.unref();
        }
        return null;
      }
    },
    async close() {
      if (readTimer) clearInterval(readTimer);
      if (aloneIdle) clearTimeout(aloneIdle);
      if (reportTimer) {
        clearTimeout(reportTimer);
        if (unreported.answers > 0) report();
      }
      stop.abort();
      // A waiting read may not end with the abort on every connection type: do not wait for it.
      await Promise.race([listening, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    },
  };
}
