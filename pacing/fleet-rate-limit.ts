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

/** What one event of an account's history says: a hold, a fresh-answers report, or a run's input (both carried). */
type EventRead = { hold?: number; fresh?: FreshAnswers; carriedFresh?: FreshAnswers };

/** What fleetRateLimits needs: the Temporal client, the account's workflow, and where to log. */
export interface FleetRateLimitsOptions {
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
}

export function fleetRateLimits(options: FleetRateLimitsOptions): FleetRateLimits {
  return new FleetChannel(options);
}

/** One worker's channel to the fleet of one account (FleetRateLimits). */
class FleetChannel implements FleetRateLimits {
  private readonly client: Client;
  private readonly workflowId: string;
  private readonly log: FleetRateLimitsOptions['log'];
  private readonly listeners: Array<(until: number) => void> = [];
  private readonly stop = new AbortController();
  /** The latest hold heard, and the latest this worker relayed. */
  private known = 0;
  private published = 0;
  private started: Promise<WorkflowHandle> | null = null;
  private mailboxStarted: Promise<unknown> | null = null;
  private readonly mailboxOptions: { taskQueue: string; workflowId: string; args: []; workflowRunTimeout: number };
  private pool: FreshAnswers | null = null;
  private unreported: Answers = { answers: 0, limited: 0 };
  private reportTimer: NodeJS.Timeout | null = null;
  private readTimer: NodeJS.Timeout | null = null;
  /** This process's lease in the account's pace. */
  private readonly worker = randomUUID();
  /** Since when the account workflow has answered none of this worker's reports in a row (0: it answers), the last, and whether that was warned of. */
  private alone = { since: 0, last: 0, warned: false };
  /** Clears a warning when the reports stop: a worker with no calls to make paces nothing, alone or not. */
  private aloneIdle: NodeJS.Timeout | null = null;
  /** Events already warned of as unreadable (each history is read again at every start and pool read). */
  private readonly unreadable = new Set<string>();
  private listening: Promise<void> | null = null;

  constructor(private readonly options: FleetRateLimitsOptions) {
    this.client = options.client;
    this.workflowId = options.workflowId;
    this.log = options.log;
    this.mailboxOptions = {
      taskQueue: ACCOUNT_HOLDS_TASK_QUEUE,
      workflowId: accountHoldsWorkflowId(options.workflowId),
      args: [],
      workflowRunTimeout: options.holdsRunMs ?? ACCOUNT_HOLDS_RUN_MS,
    };
  }

  publish(until: number): void {
    // Calls in flight when the 429 came get 429s too: relay a new time, not each of them.
    if (until <= Math.max(this.known, this.published) + 100) return;
    this.published = until;
    // The mailbox reaches the other workers at once; the account workflow cuts the rate from it,
    // and a worker started later reads the hold recorded there.
    void this.client.workflow
      .signalWithStart(ACCOUNT_HOLDS_WORKFLOW_TYPE, { ...this.mailboxOptions, signal: accountRateLimitedSignal, signalArgs: [until] })
      .catch((err: unknown) => this.log.warn('fleet rate-limit relay: could not tell the fleet', { error: String(err) }));
    void this.handle()
      .then((account) => account.signal(accountRateLimitedSignal, until))
      .catch((err: unknown) => this.log.warn('fleet rate-limit relay: could not tell the account workflow', { error: String(err) }));
  }

  async subscribe(listener: (until: number) => void): Promise<void> {
    this.listeners.push(listener);
    // The mailbox has a hold first; the account workflow's history has it once its task let it in.
    const recorded = Math.max(...(await Promise.all([this.readAccountHistory(), this.readMailboxHold()])));
    if (recorded > Date.now()) {
      this.known = Math.max(this.known, recorded);
      listener(recorded);
      this.log.info('account held by the fleet', { until: new Date(recorded).toISOString(), recorded: true });
    }
    this.listening ??= this.listen();
  }

  reportFresh(answers: Answers): void {
    this.unreported = { answers: this.unreported.answers + answers.answers, limited: this.unreported.limited + answers.limited };
    if (!this.reportTimer && !this.stop.signal.aborted) {
      this.reportTimer = setTimeout(() => this.report(), FRESH_REPORT_MS);
      this.reportTimer.unref();
    }
  }

  recordedFresh(): Answers {
    return this.pool ? { answers: this.pool.answers, limited: this.pool.limited } : { answers: 0, limited: 0 };
  }

  watchFresh(wanted: () => boolean, adopt: (answers: Answers) => void): void {
    if (this.readTimer) clearInterval(this.readTimer);
    this.readTimer = setInterval(() => {
      if (!wanted()) return;
      // The hold read again is known already (or passed): only the pool is new here.
      void this.readAccountHistory().then(() => {
        if (this.pool && !this.stop.signal.aborted) adopt({ answers: this.pool.answers, limited: this.pool.limited });
      });
    }, FRESH_READ_MS);
    this.readTimer.unref();
  }

  async pace(report: Omit<PaceReport, 'worker'>): Promise<FleetShare | null> {
    try {
      const account = await this.handle();
      const answer = await this.client.withAbortSignal(AbortSignal.any([this.stop.signal, AbortSignal.timeout(2000)]), () =>
        account.executeUpdate(accountPaceUpdate, { args: [{ ...report, worker: this.worker }] }),
      );
      const checked = paceGrant.safeParse(answer);
      if (!checked.success) {
        // Not a share to pace by: this worker paces alone until a grant is.
        this.log.warn('fleet pace: a grant that is no pace, ignored', { issue: checked.error.issues[0]?.path.join('.') ?? '' });
        return null;
      }
      if (this.alone.warned) {
        this.log.info('fleet pace: the account workflow answers again, this worker shares its rate');
        this.options.onAlone?.(false);
      }
      this.answered();
      // What the fleet's rate did, report by report: a trace of a pace that runs away needs it.
      const { rate, accountRate, slowStart, noise } = checked.data;
      this.log.debug('fleet pace: share', { rate, accountRate, slowStart, noiseShare: noise?.share ?? 0, want: report.want });
      return checked.data;
    } catch (err) {
      // The run continued as new, or an older build runs it: the next report finds it again; meanwhile the worker paces alone.
      this.started = null;
      if (!this.stop.signal.aborted) this.unanswered(err);
      return null;
    }
  }

  async close(): Promise<void> {
    if (this.readTimer) clearInterval(this.readTimer);
    if (this.aloneIdle) clearTimeout(this.aloneIdle);
    if (this.reportTimer) {
      clearTimeout(this.reportTimer);
      if (this.unreported.answers > 0) this.report();
    }
    this.stop.abort();
    // A waiting read may not end with the abort on every connection type: do not wait for it.
    await Promise.race([this.listening, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  }

  /**
   * A report the account workflow did not answer. One lost at a continue-as-new is routine;
   * reports lost for good are the fleet's one rate lost. (Reports a lease apart are not in a row:
   * the worker had no calls to make between them.)
   */
  private unanswered(err: unknown): void {
    this.log.debug('fleet pace: no share', { error: String(err) });
    const now = Date.now();
    if (now - this.alone.last > LEASE_MS) this.alone.since = now;
    this.alone.last = now;
    if (!this.alone.warned && now - this.alone.since >= ALONE_WARN_MS) {
      this.alone.warned = true;
      this.log.warn(`fleet pace: no share from the account workflow for ${ALONE_WARN_MS / 1000} s, this worker paces alone`, {
        error: String(err),
      });
      this.options.onAlone?.(true);
    }
    if (this.alone.warned) {
      if (this.aloneIdle) clearTimeout(this.aloneIdle);
      this.aloneIdle = setTimeout(() => {
        this.log.info('fleet pace: no calls to pace for two leases, this worker no longer counts as pacing alone');
        this.options.onAlone?.(false);
        this.answered();
      }, 2 * LEASE_MS);
      this.aloneIdle.unref();
    }
  }

  private answered(): void {
    if (this.aloneIdle) clearTimeout(this.aloneIdle);
    this.aloneIdle = null;
    this.alone = { since: 0, last: 0, warned: false };
  }

  private report(): void {
    this.reportTimer = null;
    const batch = { ...this.unreported, at: Date.now() };
    this.unreported = { answers: 0, limited: 0 };
    void this.handle()
      .then((account) => account.signal(accountFreshAnswersSignal, batch))
      .catch((err: unknown) => this.log.debug('fleet rate-limit relay: fresh answers not reported', { error: String(err) }));
  }

  private handle(): Promise<WorkflowHandle> {
    this.started ??= this.client.workflow
      .start(ACCOUNT_WORKFLOW_TYPE, {
        taskQueue: this.options.taskQueue,
        workflowId: this.workflowId,
        args: [],
        workflowIdConflictPolicy: 'USE_EXISTING',
        priority: { priorityKey: ACCOUNT_PRIORITY_KEY },
      })
      // Not start's own handle: it names the run it found as the first of its chain, and an update
      // through it reaches no run once that one has continued as new (the server finds no chain
      // that starts there), so a worker started, or finding the workflow again, after the first
      // continue-as-new paced alone for good (four workers on an account of 2 a second: 23 % 429s).
      .then(() => this.client.workflow.getHandle(this.workflowId))
      .catch((err: unknown) => {
        this.started = null;
        throw err;
      });
    return this.started;
  }

  /** The account's hold mailbox, started if no run of it is (one that timed out is followed by a new one). */
  private mailbox(): Promise<unknown> {
    this.mailboxStarted ??= this.client.workflow
      .start(ACCOUNT_HOLDS_WORKFLOW_TYPE, { ...this.mailboxOptions, workflowIdConflictPolicy: 'USE_EXISTING' })
      .catch((err: unknown) => {
        this.mailboxStarted = null;
        throw err;
      });
    return this.mailboxStarted;
  }

  /** What one event of the account workflow's history says: a hold, a fresh-answers report, or a run's input (both carried). */
  private async readEvent(event: temporal.api.history.v1.IHistoryEvent): Promise<EventRead> {
    const signaled = event.workflowExecutionSignaledEventAttributes;
    const payloads = signaled ? signaled.input?.payloads : event.workflowExecutionStartedEventAttributes?.input?.payloads;
    if (!payloads || payloads.length === 0) return {};
    let value: unknown;
    try {
      value = await decodeFromPayloadsAtIndex<unknown>(this.client.options.loadedDataConverter, 0, payloads);
    } catch (err) {
      // One event this worker cannot read (a key it lacks, a payload it does not know) is skipped:
      // thrown, the relay would read the run again from its start and meet it again, for good.
      const key = `${String(event.eventId ?? '')}@${String(event.eventTime?.seconds ?? '')}`;
      if (!this.unreadable.has(key) && this.unreadable.size < 100) {
        this.unreadable.add(key);
        this.log.warn('fleet rate-limit relay: an event of the account workflow could not be read', {
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

  /** A hold read from a history: passed on to the listeners if it is later than any known and not over. */
  private hear(hold: number | undefined): void {
    if (hold === undefined) return;
    const until = boundHold(hold, Date.now());
    if (until <= this.known || until <= Date.now()) return;
    this.known = until;
    for (const listener of this.listeners) listener(until);
    // One line per relayed 429 and worker: when this worker learned of the hold.
    this.log.info('account held by the fleet', { until: new Date(until).toISOString() });
  }

  /**
   * Follows a workflow's history as the server writes it (a long poll, as a tracking span follows
   * its shard's), passing on each hold in it. At a run's close (a continue-as-new, a mailbox's
   * timeout) it reads the next run from its start; it backs off only while reading fails.
   */
  private async follow(id: string, ensure: () => Promise<unknown>, closed: () => void): Promise<void> {
    const namespace = this.client.options.namespace;
    let failures = 0;
    let nextPageToken: Uint8Array | undefined;
    while (!this.stop.signal.aborted) {
      try {
        if (!nextPageToken) await ensure(); // the run to read exists: started, or found running
        const page = await this.client.connection.withAbortSignal(this.stop.signal, () =>
          this.client.workflowService.getWorkflowExecutionHistory({
            namespace,
            execution: { workflowId: id },
            nextPageToken,
            waitNewEvent: true,
          }),
        );
        failures = 0;
        for (const event of page.history?.events ?? []) this.hear((await this.readEvent(event)).hold);
        nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
        if (!nextPageToken) closed();
      } catch (err) {
        if (this.stop.signal.aborted) return;
        closed();
        nextPageToken = undefined;
        this.log.debug('fleet rate-limit relay: retrying', { workflowId: id, error: String(err) });
        await new Promise((resolve) => setTimeout(resolve, listenRetryMs(++failures)).unref());
      }
    }
  }

  /**
   * Hears every hold as soon as the server has it: from the account's hold mailbox, whose signals
   * no workflow task holds back (ACCOUNT_HOLDS_WORKFLOW_TYPE), and from the account workflow's
   * history too, where workers of builds before the mailbox relay theirs.
   */
  private listen(): Promise<void> {
    return Promise.all([
      this.follow(
        this.mailboxOptions.workflowId,
        () => this.mailbox(),
        () => (this.mailboxStarted = null),
      ),
      this.follow(
        this.workflowId,
        () => this.handle(),
        () => (this.started = null),
      ),
    ]).then(() => undefined);
  }

  /**
   * The hold recorded before this worker started, read from the account workflow's history (and
   * the mailbox's, readMailboxHold): a worker (re)started right after a 429 knows it before its
   * first call. Sets `pool` from the same history: the fresh answers of the last FRESH_MAX_AGE_MS,
   * carried and reported.
   */
  private async readAccountHistory(): Promise<number> {
    const recent = (fresh: FreshAnswers | undefined) => (fresh && fresh.at >= Date.now() - FRESH_MAX_AGE_MS ? fresh : null);
    let pool: FreshAnswers | null = null;
    const until = await this.readHolds(
      this.workflowId,
      'fleet rate-limit relay: no recorded hold read',
      (event, { fresh, carriedFresh }) => {
        if (event.workflowExecutionStartedEventAttributes) pool = recent(carriedFresh) ? poolFresh(null, carriedFresh!) : null;
        const reported = recent(fresh);
        if (reported) pool = poolFresh(pool, reported);
      },
    );
    if (until === null) return 0;
    this.pool = pool;
    return until;
  }

  /** The latest hold the mailbox's history holds (its running run, or its last): 0 if none. */
  private async readMailboxHold(): Promise<number> {
    return (await this.readHolds(this.mailboxOptions.workflowId, 'fleet rate-limit relay: no hold read from the mailbox')) ?? 0;
  }

  /**
   * Reads a workflow's history (its running run, or its last) event by event, each also handed to
   * `each`: the latest hold in it, bounded (0: none), or null if it could not be read.
   */
  private async readHolds(
    workflowId: string,
    unread: string,
    each?: (event: temporal.api.history.v1.IHistoryEvent, read: EventRead) => void,
  ): Promise<number | null> {
    try {
      const history = await this.client.workflow.getHandle(workflowId).fetchHistory();
      let until = 0;
      for (const event of history.events ?? []) {
        const read = await this.readEvent(event);
        if (read.hold !== undefined && read.hold > until) until = read.hold;
        each?.(event, read);
      }
      return boundHold(until, Date.now());
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) this.log.debug(unread, { error: String(err) });
      return null;
    }
  }
}
