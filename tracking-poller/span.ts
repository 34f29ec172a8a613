/**
 * One span of a tracking poller shard: polls each label of the shard when its stage's interval
 * is up, with the client and pacer of the label's own shipping account, and signals a shipment
 * only when its tracking changed. One long-running activity rather than one per poll, so a poll
 * without news costs Temporal nothing (a heartbeat every 30 s and one continue-as-new per span
 * is what the fleet pays). News goes out under a request id made of what is told, so a span
 * retried after its worker died tells nothing twice. docs/workflow.md, "Tracking polled per
 * fleet, told per change".
 */
import { createHash } from 'node:crypto';
import type { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { decodeFromPayloadsAtIndex, encodeToPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { isChange, nextPollDue, pollIntervalOf, snapshotOfRecord } from '../domain/tracking';
import type { TrackingRecord } from '../shipping-api/contract';
import { ShippingApiError } from '../shipping-api/errors';
import {
  joinTrackingUpdate,
  trackingNewsSignal,
  unwatchTrackingSignal,
  watchTrackingSignal,
  type JoinRequest,
  type LabelProgress,
  type PollerInput,
  type SpanResult,
  type TrackingNews,
  type WatchedLabel,
  type WatchRequest,
} from '../workflow-definitions/tracking-poller';
import { isSameLabel, PollerShard } from '../workflow-definitions/tracking-poller-shard';
import { afterFailure } from '../workflow-definitions/activity-failures';
import { accountCalls, type AccountCalls, type AccountDirectory } from '../shipping-accounts/directory';
import { trackingOrNull } from '../shipping-api/tracking';
import { outcomeOfTag } from '../domain/shipment';
import { rateLimited, trackingCompleted } from '../metrics/counters';

export interface TrackingPollerSettings {
  /** Shards per task queue: each is one workflow and, while it has labels, one running activity. */
  shards: number;
  /** How long one span polls before its shard continues as new with what it did. */
  spanMs: number;
  /** Labels a shard takes before a new one overflows to the next shard; default TRACKING_SHARD_BOUND. */
  maxLabels?: number;
  /** Bytes of a shard's continue-as-new input before a new label overflows; default TRACKING_SHARD_BOUND. */
  maxBytes?: number;
}

/**
 * A shard's bound: about 250 bytes a label, so 4,000 labels carry about 1 MB of continue-as-new
 * input, half Temporal's 2 MB payload limit (past it the shard's task fails and the server
 * terminates the run); the bytes bound holds whatever the labels' size.
 */
export const TRACKING_SHARD_BOUND = { maxLabels: 4000, maxBytes: 1_000_000 } as const;

export interface TrackingPollerDeps {
  /** Every shipping account this worker serves: each label is polled with its own. */
  accounts: AccountDirectory;
  client: Client;
  settings: TrackingPollerSettings;
  /** The queue whose pollers a shipment joins; unset: its own. A live shipment joins the shipments' queue's. */
  taskQueue?: string;
}

/** Polls of one shard in flight at once (the pacer decides when each goes out). */
const POLLS_IN_FLIGHT = 8;
/**
 * A heartbeat every 30 s, inside the 40 s heartbeat timeout; the SDK's throttle (32 s) only
 * delays each a little, so each one asked for is one sent (a billed action on Temporal Cloud).
 */
const HEARTBEAT_EVERY_MS = 30_000;
/** The loop looks at the clock at least this often (a timer held for hours would drift from the members). */
const LOOK_AGAIN_MS = 30_000;
/** A shipment that could not be told (Temporal unreachable) is polled and told again after this. */
const TELL_RETRY_MS = 5_000;

/** What a retried attempt of the span needs from the one before: what was told, which labels it dropped, the news ids' counts. */
type SpanProgress = { told: LabelProgress[]; ids?: NewsIdsSnapshot } & Pick<SpanResult, 'dropped' | 'droppedLabels'>;

type NewsIdsSnapshot = Array<[key: string, base: number, told: string[]]>;
type Telling = Pick<WatchedLabel, 'workflowId' | 'labelId' | 'membership' | 'told'>;

/**
 * The request ids of a span's news, the same in every attempt of the span. An id names the
 * shipment, the label, the membership, what is told, and how many news the membership had told
 * when the span began (`base`, from the shard's run: the same for every attempt) plus how often
 * this span told the same thing before (a state the tracking returns to is told again, under a
 * new id). Before, it named the count of news told so far: a retried attempt resumes from the
 * last heartbeat (every 30 s), so when the killed attempt had told two changes since, the retry
 * found the tracking at the second one with the count of the first and told it again under a new
 * id (fleet-tracking.crash.test.ts, 3 of 8 runs after both workers were killed). Now the same
 * change has the same id unless the tracking returned to that exact state between the last
 * heartbeat and the kill.
 */
export class NewsIds {
  private readonly base = new Map<string, number>();
  private readonly told = new Map<string, string[]>();

  /** A member as the shard's run has it (input or join), before this attempt told it anything. */
  begin(member: Telling): void {
    const key = keyOf(member);
    if (!this.base.has(key)) this.base.set(key, member.told ?? 0);
  }

  id(member: Telling, what: unknown[]): string {
    const key = keyOf(member);
    const state = digestOf(what);
    const before = (this.told.get(key) ?? []).filter((d) => d === state).length;
    const named = ['news-v2', member.labelId, member.membership ?? null, this.base.get(key) ?? member.told ?? 0, before, ...what];
    return createHash('sha256').update(member.workflowId).update('\u0000').update(JSON.stringify(named)).digest('hex').slice(0, 32);
  }

  /** Told: the same thing told again later in this span gets a new id. */
  tellOf(member: Telling, what: unknown[]): void {
    const key = keyOf(member);
    this.base.set(key, this.base.get(key) ?? member.told ?? 0);
    this.told.set(key, [...(this.told.get(key) ?? []), digestOf(what)]);
  }

  /** The labels this span told (the others' base a retried attempt reads from the shard's run again). */
  snapshot(): NewsIdsSnapshot {
    return [...this.told].map(([key, told]) => [key, this.base.get(key) ?? 0, told]);
  }

  /** An earlier attempt's counts (its last heartbeat) replace this attempt's. */
  resume(snapshot: NewsIdsSnapshot | undefined): void {
    for (const [key, base, told] of snapshot ?? []) {
      this.base.set(key, base);
      this.told.set(key, [...told]);
    }
  }
}

const keyOf = (m: Telling) => JSON.stringify([m.workflowId, m.labelId, m.membership ?? null]);
const digestOf = (what: unknown[]) => createHash('sha256').update(JSON.stringify(what)).digest('hex').slice(0, 12);

export class TrackingSpan {
  private shard = new PollerShard(undefined);
  private readonly touched = new Set<string>();
  private readonly told = new Map<string, LabelProgress>();
  /** The span's own drops (terminal, past the deadline, shipment gone): workflow id → the label dropped. */
  private readonly dropped = new Map<string, string>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly stats = { polls: 0, told: 0, heartbeats: 0 };
  private readonly ids = new NewsIds();
  /** A label's account is unknown to this worker: the span fails with it (see above). */
  private unknownAccount: Error | null = null;
  /** Wakes the loop when a poll ends or a shipment joins. */
  private kick: () => void = () => {};

  constructor(
    private readonly deps: TrackingPollerDeps,
    private readonly ctx: Context,
  ) {}

  async run(): Promise<SpanResult> {
    const endAt = Date.now() + this.deps.settings.spanMs;
    const stopFollowing = new AbortController();
    const stop = AbortSignal.any([stopFollowing.signal, this.ctx.cancellationSignal]);
    const following = this.followMembers(stop);
    // Following the history failed mid-span (Temporal unreachable): the span ends with what it did, and the next one reads it all again.
    let lostTrack = false;
    following.done.catch(() => {
      lostTrack = !stop.aborted;
      this.kick();
    });
    const heartbeat = setInterval(() => this.heartbeat(), HEARTBEAT_EVERY_MS);
    try {
      await following.caughtUp;
      this.resume();
      while (Date.now() < endAt && this.shard.size > 0 && !lostTrack && !this.unknownAccount) {
        this.ctx.cancellationSignal.throwIfAborted();
        this.startDuePolls();
        await this.sleepUntil(Math.min(endAt, this.nextDueAt()));
      }
      await Promise.all(this.inFlight.values());
    } finally {
      clearInterval(heartbeat);
      // A long poll over the worker's native connection may not end with the abort: not waited for.
      stopFollowing.abort();
    }
    this.ctx.cancellationSignal.throwIfAborted();
    if (this.unknownAccount) throw this.unknownAccount;
    return {
      progress: [...this.touched].flatMap((id) => {
        const member = this.shard.get(id);
        return member && !this.dropped.has(id) ? [progressOf(member)] : [];
      }),
      ...this.droppedLists(),
      stats: this.stats,
    };
  }

  // ---------------------------------------------------------------- polling

  private startDuePolls(): void {
    const now = Date.now();
    const due = [...this.shard.labels()]
      .filter((m) => m.nextPollAt <= now && !this.inFlight.has(m.workflowId))
      .sort((a, b) => a.nextPollAt - b.nextPollAt);
    for (const member of due.slice(0, POLLS_IN_FLIGHT - this.inFlight.size)) {
      const poll = this.poll(member)
        .catch((err: unknown) => {
          if (this.ctx.cancellationSignal.aborted) return;
          // Temporal unreachable while telling, or a bug: the label is polled (and told) again shortly.
          this.ctx.log.warn('tracking poll not finished', { workflowId: member.workflowId, error: String(err) });
          member.nextPollAt = Date.now() + TELL_RETRY_MS;
        })
        .finally(() => {
          this.inFlight.delete(member.workflowId);
          this.kick();
        });
      this.inFlight.set(member.workflowId, poll);
    }
  }

  private nextDueAt(): number {
    let next = Number.POSITIVE_INFINITY;
    for (const m of this.shard.labels()) if (!this.inFlight.has(m.workflowId)) next = Math.min(next, m.nextPollAt);
    return next;
  }

  /** One poll of one label, and what follows from it. */
  private async poll(member: WatchedLabel): Promise<void> {
    const now = Date.now();
    const dueAt = member.nextPollAt;
    if (now >= member.deadline) return this.drop(member);
    const cadence = this.shard.cadenceOf(member);
    const calls = this.callsOf(member);
    if (!calls) return;
    const polledAt = new Date(now).toISOString();
    this.touched.add(member.workflowId);
    let record: TrackingRecord | null;
    try {
      record = await calls.pacing.run(
        'tracking',
        (signal) => trackingOrNull(calls.api, member.labelId, signal),
        this.ctx.cancellationSignal,
      );
    } catch (err) {
      if (!(err instanceof ShippingApiError)) throw err;
      return this.failed(member, err, pollIntervalOf(cadence, member.known));
    }
    this.stats.polls++;
    member.polls++;
    member.failures = 0;
    const seen = snapshotOfRecord(record);
    if (isChange(member.known, seen)) {
      const change = { ...seen, subtagMessage: record?.subtagMessage ?? null, lastCheckpoint: record?.checkpoints.at(-1) ?? null };
      if (!(await this.tell(member, { change: { ...change, polls: member.polls, polledAt } }))) return;
      // Relabelled while it was polled: the new label's membership is not this label's to move.
      if (!this.current(member)) return;
      Object.assign(member, { known: seen, polls: 0, failureTold: null });
      this.told.set(member.workflowId, progressOf(member));
      if (seen.tag !== null && cadence.terminalTags.includes(seen.tag)) {
        // Counted here, as it is told (the span's own result comes at its end): metrics/counters.ts.
        trackingCompleted.inc({ outcome: outcomeOfTag(seen.tag), tag: seen.tag });
        return this.drop(member);
      }
    }
    member.nextPollAt = nextPollDue(dueAt, Date.now(), pollIntervalOf(cadence, seen));
  }

  /** The label's account's client and pacer; none (and the span ends, failing) when this worker does not know it. */
  private callsOf(member: WatchedLabel): AccountCalls | undefined {
    try {
      return accountCalls(this.deps.accounts, member.account);
    } catch (err) {
      this.ctx.log.warn('tracking poll: unknown shipping account', { workflowId: member.workflowId, account: member.account });
      this.unknownAccount ??= err as Error;
      this.kick();
      return undefined;
    }
  }

  /** The one rule for a failed call (workflow-definitions/activity-failures.ts), per label; told once per kind when retrying cannot fix it. */
  private async failed(member: WatchedLabel, err: ShippingApiError, intervalMs: number): Promise<void> {
    if (err.kind === 'rate_limited') rateLimited.inc({ activity: 'pollTrackingSpan' });
    const next = afterFailure(err, { failuresInARow: member.failures }, Date.now(), intervalMs);
    member.failures = next.failuresInARow;
    if (next.retryable) {
      member.nextPollAt = Date.now() + (err.kind === 'rate_limited' ? next.delayMs : Math.min(next.delayMs, intervalMs));
      return;
    }
    this.ctx.log.warn('tracking poll failed', { ...err.toJSON(), labelId: member.labelId, workflowId: member.workflowId });
    if (member.failureTold !== err.kind) {
      if (!(await this.tell(member, { failure: err.toJSON() })) || !this.current(member)) return;
      member.failureTold = err.kind;
      this.told.set(member.workflowId, progressOf(member));
    }
    member.nextPollAt = Date.now() + intervalMs;
  }

  /**
   * Signals the shipment, with a request id the server de-duplicates (the same news told again by
   * a retried span is dropped there). False when the shipment is gone (completed): it leaves.
   */
  private async tell(member: WatchedLabel, about: Omit<TrackingNews, 'labelId'>): Promise<boolean> {
    const { client } = this.deps;
    // Named by label: a shipment relabelled since drops the old label's news, and the two labels' news never share a request id.
    const news: TrackingNews = { labelId: member.labelId, ...about };
    // What is told, in its membership (NewsIds): a state the tracking returns to is told again
    // under a new id, while a retried span tells the same news under the same one.
    const what = news.change
      ? [news.change.tag, news.change.subtag, news.change.trackingNumber, news.change.checkpoints, news.change.lastCheckpointTime]
      : [news.failure?.kind, news.failure?.message];
    const requestId = this.ids.id(member, what);
    try {
      await client.workflowService.signalWorkflowExecution({
        namespace: client.options.namespace,
        workflowExecution: { workflowId: member.workflowId },
        signalName: trackingNewsSignal.name,
        input: { payloads: await encodeToPayloads(client.options.loadedDataConverter, news) },
        identity: client.options.identity,
        requestId,
      });
    } catch (err) {
      if (isNotFound(err)) {
        this.drop(member);
        return false;
      }
      throw err;
    }
    this.stats.told++;
    this.ids.tellOf(member, what);
    if (this.current(member)) member.told = (member.told ?? 0) + 1;
    return true;
  }

  /** Whether `member` is still its shipment's membership (a relabel replaces it with the new label's). */
  private current(member: WatchedLabel): boolean {
    return this.shard.get(member.workflowId) === member;
  }

  /** The span is done with this label. Only with this label: a shipment that joined again with a new one stays. */
  private drop(member: WatchedLabel): void {
    if (!this.current(member)) return;
    this.shard.unwatch(member.workflowId);
    this.dropped.set(member.workflowId, member.labelId);
    this.told.delete(member.workflowId);
  }

  private droppedLists(): Pick<SpanResult, 'dropped' | 'droppedLabels'> {
    return { dropped: [...this.dropped.keys()], droppedLabels: [...this.dropped.values()] };
  }

  // ---------------------------------------------------------------- members, from the shard's history

  /**
   * Reads the shard's run from its start (the input: the members carried over) and applies its
   * watch and unwatch signals in order, as the workflow does; then follows new events (a long
   * poll, which Temporal does not bill) until the span ends. `caughtUp`: every event up to the
   * span's start is applied.
   */
  private followMembers(signal: AbortSignal): { caughtUp: Promise<void>; done: Promise<void> } {
    const { client } = this.deps;
    const execution = this.ctx.info.workflowExecution;
    const namespace = client.options.namespace;
    let caughtUp!: () => void;
    const caught = new Promise<void>((resolve) => (caughtUp = resolve));
    const done = (async () => {
      const { workflowExecutionInfo } = await client.workflowService.describeWorkflowExecution({ namespace, execution });
      const upTo = Number(workflowExecutionInfo?.historyLength ?? 0);
      let nextPageToken: Uint8Array | undefined;
      while (!signal.aborted) {
        const page = await client.connection.withAbortSignal(signal, () =>
          client.workflowService.getWorkflowExecutionHistory({ namespace, execution, nextPageToken, waitNewEvent: true }),
        );
        let last = 0;
        for (const event of page.history?.events ?? []) {
          await this.apply(event);
          last = Number(event.eventId ?? 0);
        }
        if (last >= upTo) caughtUp();
        if (!page.nextPageToken?.length) break; // the run has closed
        nextPageToken = page.nextPageToken;
      }
      caughtUp();
    })();
    // A failed read must not leave the span waiting: it fails, and its retry reads again.
    return { caughtUp: Promise.race([caught, done.then(() => undefined)]), done };
  }

  private async apply(event: temporal.api.history.v1.IHistoryEvent): Promise<void> {
    const converter = this.deps.client.options.loadedDataConverter;
    const started = event.workflowExecutionStartedEventAttributes;
    if (started) {
      this.shard = new PollerShard(await decodeFromPayloadsAtIndex<PollerInput | undefined>(converter, 0, started.input?.payloads));
      return;
    }
    const joined = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    if (joined?.input?.name === joinTrackingUpdate.name) {
      const { bound: _bound, ...request } = await decodeFromPayloadsAtIndex<JoinRequest>(converter, 0, joined.input?.args?.payloads);
      return this.watch(request);
    }
    const signaled = event.workflowExecutionSignaledEventAttributes;
    if (signaled?.signalName === watchTrackingSignal.name) {
      this.watch(await decodeFromPayloadsAtIndex<WatchRequest>(converter, 0, signaled.input?.payloads));
    } else if (signaled?.signalName === unwatchTrackingSignal.name) {
      const { workflowId } = await decodeFromPayloadsAtIndex<{ workflowId: string }>(converter, 0, signaled.input?.payloads);
      // The shard's workflow applies its own unwatch: the span stops polling, and reports no drop
      // (the shipment may join again, with a new label, before the span ends: a relabel).
      this.shard.unwatch(workflowId);
      this.told.delete(workflowId);
    }
  }

  /** A shipment joined (by signal, or by the update a full shard would refuse), as the shard's workflow applies it. */
  private watch(request: WatchRequest): void {
    this.shard.watch(request);
    this.ids.begin(this.shard.get(request.workflowId)!);
    this.dropped.delete(request.workflowId);
    this.kick();
  }

  // ---------------------------------------------------------------- progress

  /** What an earlier attempt of this span told, and who left, on top of the members read back. */
  private resume(): void {
    const previous = this.ctx.info.heartbeatDetails as SpanProgress | undefined;
    // The run's input members, as the run has them (a join read back began its own in `watch`).
    for (const member of this.shard.labels()) this.ids.begin(member);
    this.ids.resume(previous?.ids);
    for (const progress of previous?.told ?? []) {
      const member = this.shard.get(progress.workflowId);
      if (!member || !isSameLabel(member, progress.labelId)) continue;
      Object.assign(member, progress);
      this.told.set(member.workflowId, progress);
      this.touched.add(member.workflowId);
    }
    previous?.dropped.forEach((workflowId, i) => {
      const member = this.shard.get(workflowId);
      if (member && isSameLabel(member, previous.droppedLabels?.[i])) this.drop(member);
    });
  }

  private heartbeat(): void {
    this.stats.heartbeats++;
    this.ctx.heartbeat({ told: [...this.told.values()], ids: this.ids.snapshot(), ...this.droppedLists() } satisfies SpanProgress);
  }

  /** Until `at`, a poll ends, a shipment joins, or the span is cancelled (at most 30 s, to look again). */
  private sleepUntil(at: number): Promise<void> {
    const abort = this.ctx.cancellationSignal;
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        abort.removeEventListener('abort', done);
        this.kick = () => {};
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, Math.min(at - Date.now(), LOOK_AGAIN_MS)));
      abort.addEventListener('abort', done, { once: true });
      this.kick = done;
    });
  }
}

function progressOf({ workflowId, labelId, known, nextPollAt, polls, failures, failureTold, told }: WatchedLabel): LabelProgress {
  return { workflowId, labelId, known, nextPollAt, polls, failures, failureTold, ...(told === undefined ? {} : { told }) };
}

/** The shipment is not running any more (completed, or never existed). */
function isNotFound(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || (err as { code?: number })?.code === 5; // gRPC NOT_FOUND
}
