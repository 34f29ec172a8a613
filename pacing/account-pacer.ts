/**
 * Paces one worker's calls to the shipping API account, so the fleet spends the account's rate
 * limit without being told the limit:
 *
 * - **Retry-After holds the account**: after a 429 (this worker's, or another worker's relayed
 *   by the fleet channel), no call goes out before the time the API named.
 * - **Adaptive rate**: calls are spaced at `rate` per second. From `initialRate` the rate grows
 *   by half each second while calls wait for it (slow start); the first 429 sets it to 90 % of
 *   the rate the API actually accepted over the last seconds, and from then on it grows by 0.5 %
 *   a second (down to 0.25 % for a worker of a small account) and shrinks by 10 % at each 429,
 *   relayed ones too, once per overshoot (additive increase, multiplicative decrease); after a
 *   minute without a 429 while calls wait it grows by a tenth a second. A 429 naming more than
 *   10 s is the API holding the account: it holds, but does not slow the pace. Each worker converges on
 *   its share of the account's limit, as TCP flows share a link.
 * - **429s it did not cause**: some accounts answer a share of 429s whatever the pace (a quota
 *   shared with other clients, a flaky proxy). Until such noise is known every 429 holds and
 *   slows as above. Its share is learned from the calls sent right after a hold of the fleet,
 *   when a limit has just refilled (noise-floor.ts); once known, a 429 holds, slows and is
 *   relayed only while the last seconds' share is clearly above it, and one within it costs
 *   only its own call's retry. Learning it starts a new slow start, to undo the cuts it made.
 * - **Labels first**: a free slot goes to a label creation before an order read, and to an order
 *   read before a tracking poll; so polls are not starved, one slot in `fairShareEvery` goes to
 *   the oldest waiter of a lower class while one waits.
 * - **Live orders first within a class**: a call waits behind those of a lower Temporal priority
 *   key (its activity's, domain/priority.ts), then by arrival; so a live order's label is not
 *   sent after a backlog's labels that were waiting before it.
 *
 * In memory, per worker process: the API's own answers are the truth it adapts to.
 */
import { DEFAULT_PRIORITY_KEY } from '../domain/priority';
import { boundHold } from '../shipping-api/retry-after';
import { AnswerTally } from './answer-tally';
import { NoiseFloor, type Answers } from './noise-floor';
import { LEASE_MS, REPORT_MS, type PaceReport } from './fleet-pace';
import { FleetSlots, type Grid } from './fleet-slots';

export type CallClass = 'label' | 'order' | 'tracking';
const INITIAL_RATE = 5;
/**
 * A worker's slowest pace. Below a call a second, so that four workers can share an account of
 * 2 a second: at 1 each they overran it for good, and its 429s were taken for noise.
 */
const MIN_RATE = 0.25;
/** No 429 for this long while calls wait: the pace grows faster again. */
const QUIET_MS = 60_000;
const CLASSES: readonly CallClass[] = ['label', 'order', 'tracking'];
/**
 * A call sent within FRESH_MS after a hold of at least FRESH_HOLD_MS ended is fresh while this
 * worker's calls since the hold stay within what the API accepted of it a second over the
 * FRESH_RATE_MS before (holds included), or half the pace the hold found if more: that
 * once (a limit refilled at least a second's worth while the fleet held) and once more for every
 * second since (what it refills meanwhile). A limit cannot refuse such calls, even one that just
 * fell by half; noise refuses its share.
 */
const FRESH_MS = 3000;
const FRESH_HOLD_MS = 1000;
/**
 * Sharing the fleet's rate, for this long: the bound above is then at most 0.9 of this worker's
 * share (the shares add up to the account's rate, which the hold's cut put under what the API
 * accepted) or the fleet's (under half of what the API lately accepted, 0.7 before a limit or a
 * floor was found: fleet-noise-floor.ts), so a limit that did not fall refuses none of them,
 * however long after. Before the noise is known each 429 holds the fleet 1-5 s and it sends 2-3
 * calls a second: in bench pacing's noise row (accounts of 5 and 20 a second, two workers, seven
 * seeds) the slowest two learned it at second 43-87 with 3 s, 29-48 with 10 (the median at 20-26
 * either way).
 */
const FLEET_FRESH_MS = 10_000;
/**
 * ... and after FRESH_MS, only while the fleet's rate stands within this of its lowest since the
 * hold (the probe grows it half a percent a second): each worker's bound assumes the others stay
 * within theirs, and a rate that grew (settling after slow start, 2 % a second, from a cut that
 * counted the limit's burst as accepted) sends their calls past it. Without it, 2 of 550 perturbed
 * simulated runs (a limiter charging refused calls, 4 workers) took the limit's 429s, 5-7 s after
 * such a hold, for noise: 9 % 429s.
 */
const FLEET_FRESH_GROWTH = 1.05;
/** What the API accepted of this worker before a hold: the calls a second over this long (holds included). */
const FRESH_RATE_MS = 5000;
/**
 * Or this share of the pace the hold found, if more. Under a limit alone the pace stands near
 * what the API accepts (and the calls after a hold go at the pace its 429 cut), so a limit that
 * did not fall to under half at once refills at least that. Without it, 429s that held the fleet
 * every few seconds (holds counted) left so few fresh calls that learning 10 % noise took 20-75 s
 * in the simulation and 90-200 s in the bench, the fleet sending 2 calls a second meanwhile.
 */
const FRESH_PACE_SHARE = 0.5;
/**
 * A 429 naming a longer Retry-After is the API holding the account: it holds the fleet, but is
 * neither noise (it does not count among the fresh answers; noise names a few seconds) nor the
 * pace's doing (it does not slow it), and a minute without a 429 counts from the end of a hold.
 * An account held by 30 s, answered again after each hold, otherwise taught a 5-a-second
 * account a floor of 0.19; and its three cuts, then a minute's quiet (the hold) that grew the
 * pace by a tenth a second, overshot while relays took a second, whose 429s were taken for noise:
 * a third to half of the calls 429 for minutes after the hold, in the simulation.
 */
const LONG_HOLD_MS = 10_000;
/** Holds ending within this of each other answer one overshoot (the limit's Retry-After is whole seconds). */
const SAME_OVERSHOOT_MS = 2000;
/**
 * A relayed hold that ended longer ago than this says nothing of the pace now: the fleet
 * channel's first answer to a worker that just started is the last hold ever recorded.
 */
const LATE_RELAY_MS = 10_000;
/** The last 429s' Retry-After, for the limit's among them. */
const RETRY_AFTERS_KEPT = 10;
/**
 * A worker that began reporting less than this long ago for a single call (a label on a worker
 * with nothing else for the account) and has sent it needs no share until another comes.
 * Counted as a stream of one call over its span, it held a third to half of an account of 2 a
 * second for two leases, and the other workers' shares shrank to make room: the accounts bench's
 * a2 on four workers spent 0.911 of its limit with no 429 (simulated, a call every 10 s on a
 * fourth worker: 0.878 of the limit, 0.922 with this; 0.965 with no such call).
 */
const SINGLE_CALL_MS = 2 * LEASE_MS;
/** Over a floor, a 429 is judged by the last 5 s of answers, or as far back as 30 s to have 50. */
const RECENT_MS = 5_000;
const RECENT_ANSWERS = 50;
const RECENT_MAX_MS = 30_000;
/** Past slow start the pace grows by this share a second (at least MIN_PROBE calls) ... */
const PROBE_SHARE = 0.005;
const MIN_PROBE = 0.005;
/** ... scaled down, to half at most, for a worker sending fewer calls a second than this. */
const GENTLE_BELOW = 10;
/** Once a second, the last minute's answers check that the floor still holds. */
const FLOOR_CHECK_MS = 60_000;
export interface AccountPacerOptions {
  /**
   * Calls per second at start; slow start grows it until the first 429. Default 5 (a worker
   * reaches 50 a second in 6 s): every worker of a fleet starts at it, and two workers at 10
   * each against an account of 5 a second sent four times its limit after a hold, whose
   * refusals the pacer took for noise (bench `accounts`: 35 % 429s).
   */
  initialRate?: number;
  /** Never faster than this many calls per second (a configured ceiling). Default: none. */
  maxRate?: number;
  /** Never slower than this. Default MIN_RATE. */
  minRate?: number;
  /** One grant in this many goes to a waiting lower class. Default 4. */
  fairShareEvery?: number;
  /** Learn the share of 429s no pace causes (default true); false: every 429 holds and slows. */
  learnNoise?: boolean;
  /**
   * Holds are relayed to the whole fleet by a channel that brings each back to this worker too
   * (pacing/fleet-rate-limit.ts). Then the calls after a hold are fresh only if the channel
   * brought the hold back before it ended: one slower than the hold (a loaded machine: 1.5-5 s
   * seen) means the other workers went on calling through it, so the limit did not refill and its
   * 429s among those calls are no noise. Default false: no channel, this worker is the fleet.
   */
  fleetRelays?: boolean;
  /** Told when a share of 429s no pace causes becomes known (the share), and when it is forgotten (null). */
  onNoise?: (share: number | null) => void;
  /** Told of each fresh answer (a 429 or not): the fleet pools them (pacing/fleet-rate-limit.ts). */
  onFresh?: (limited: boolean) => void;
  /**
   * The fleet's pace (fleet-pace.ts, kept by the account workflow): given this worker's report,
   * its share of the account's rate (null: not known now). With it, the account's rate is
   * decided once for the fleet and this worker paces at its share; without it, or while it does
   * not answer for LEASE_MS, this worker finds its own pace (AIMD) as if it were the fleet.
   */
  share?: (report: Omit<PaceReport, 'worker' | 'maxRate'>) => Promise<FleetShare | null>;
  now?: () => number;
  /** Draws the phase of this worker's first call after a hold (default Math.random). */
  random?: () => number;
}

/** This worker's share of the fleet's rate, its phase, and the fleet's noise floor (fleet-pace.ts, PaceGrant). */
export interface FleetShare {
  rate: number;
  /** Where this worker's span of the grid's slots starts (0 to 1); its span is rate ÷ grid.rate. */
  phase: number;
  /** The fleet's slots (PaceGrant.grid); without it (an account workflow of an older build), this worker's calls are spaced at its share. */
  grid?: Grid;
  /** The fleet's rate is still searching for the limit (slow start): it may be far over it, so no call is fresh. */
  slowStart?: boolean;
  noise?: { share: number; answers: number };
  /** The share of this worker's rate its calls after a hold may go at and still be fresh (PaceGrant.freshShare). */
  freshShare?: number;
  /** The account's rate for the whole fleet (PaceGrant.accountRate). */
  accountRate?: number;
}

/** A call's turn: whether it went out right after a hold (its answer teaches the noise floor). */
export interface Turn {
  fresh: boolean;
}

interface Waiter {
  cls: CallClass;
  /** Temporal's task priority key of the call's activity: lower goes first within its class (a live order's label before a backlog's). */
  priority: number;
  /** Rejected with AccountHeld when the account is held for longer than this while it waits. */
  releaseOverMs?: number;
  /** Arrival order: the oldest lower-class waiter gets the fair-share slot. */
  seq: number;
  resolve: (turn: Turn) => void;
  reject: (reason: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export interface PacerSnapshot {
  rate: number;
  slowStart: boolean;
  /** The share of 429s taken as noise (not the pace's doing), or null. */
  noiseShare: number | null;
  notBefore: number;
  waiting: Record<CallClass, number>;
}

export class AccountPacer {
  private rate: number;
  private slowStart = true;
  private notBefore = 0;
  /** When the hold ending at notBefore began. */
  private heldSince = 0;
  /** What the API accepted of this worker a second before the hold began, and the calls sent since the hold was last set. */
  private freshRate = 0;
  /** Fresh answers since the last report to the fleet's pace. */
  private freshSinceReport = { answers: 0, limited: 0 };
  private sentSinceHold = 0;
  /**
   * How long the fleet channel took to bring the hold back to the worker whose 429 set it: the
   * other workers went on calling that long, so the limit refilled that much less.
   */
  private relayLag = 0;
  /** Whether the fleet channel brought the hold ending at notBefore back in time (see fleetRelays). */
  private holdRelayed = false;
  private readonly fleetRelays: boolean;
  private nextSlotAt = 0;
  private lastIncreaseAt: number;
  private lastDecreaseAt = 0;
  /** The end of the hold of the overshoot this worker last slowed for. */
  private slowedFor = 0;
  /** The last 429 (own or relayed); a long quiet spell since means the limit left room. */
  private lastRateLimitedAt = 0;
  private readonly successes: number[] = [];
  /** When this worker's 429s of the last LEASE_MS came, but a long hold's (the API holding the account is no noise). */
  private readonly limitedTimes: number[] = [];
  private readonly retryAfters: number[] = [];
  private readonly tally = new AnswerTally(FLOOR_CHECK_MS + 5_000);
  private readonly floor = new NoiseFloor();
  private floorCheckedAt = 0;
  private knownNoise = false;
  /** The last 429 taken as a limit's: later ones are judged by the answers since. */
  private lastTakenAt = 0;
  /** The last 429 of any kind. */
  private lastLimitedAt = 0;
  private readonly queues: Record<CallClass, Waiter[]> = { label: [], order: [], tracking: [] };
  private streak = 0;
  private arrivals = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly maxRate: number;
  private readonly minRate: number;
  private readonly fairShareEvery: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly onNoise: (share: number | null) => void;
  private readonly onFresh: (limited: boolean) => void;
  private readonly learnNoise: boolean;
  private readonly share?: AccountPacerOptions['share'];
  /** The fleet's share holds until then; afterwards (or before any) this worker paces alone. */
  private shareUntil = 0;
  private reporting: NodeJS.Timeout | null = null;
  private asking = false;
  /** When this worker began reporting (its first counts span less than a lease). */
  private reportingSince = 0;
  /** When its calls of the last LEASE_MS went out. */
  private readonly sentTimes: number[] = [];
  private lastSentAt = 0;
  /** Since when this worker waits for its first share (the fleet is asked before it calls). */
  private askedFirstAt = 0;
  /** This worker's span of the fleet's slots. */
  private readonly slots = new FleetSlots();
  private fleetSlowStart = false;
  /** PaceGrant.freshShare: the fleet's bound on fresh calls, as a share of this worker's. */
  private fleetFreshShare = 0;
  /** The fleet's rate (PaceGrant.accountRate; 0: not told), and its lowest since the last hold began. */
  private accountRate = 0;
  private accountRateSinceHold = Number.POSITIVE_INFINITY;

  constructor(options: AccountPacerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.onNoise = options.onNoise ?? (() => {});
    this.onFresh = options.onFresh ?? (() => {});
    this.learnNoise = options.learnNoise ?? true;
    this.fleetRelays = options.fleetRelays ?? false;
    this.maxRate = options.maxRate ?? Number.POSITIVE_INFINITY;
    this.minRate = options.minRate ?? MIN_RATE;
    this.rate = Math.min(this.maxRate, options.initialRate ?? INITIAL_RATE);
    this.fairShareEvery = Math.max(2, options.fairShareEvery ?? 4);
    this.lastIncreaseAt = this.now();
    this.share = options.share;
  }

  /** Whether the fleet's share paces this worker now. */
  private shared(t: number): boolean {
    return this.share !== undefined && t < this.shareUntil;
  }

  /** Reports to the fleet's pace now and every REPORT_MS while this worker has calls to make. */
  private report(): void {
    if (!this.share) return;
    if (this.asking) return this.reportLater();
    const t = this.now();
    const active = this.waiting() > 0 || t - this.lastSentAt < LEASE_MS;
    // Not until the share lapses: each grant renews it, and an idle worker reported every second
    // for good (the account workflow's history filled with updates of nothing wanted, and the
    // fleet's leases counted the idle seconds). Its lease lapses at the account workflow.
    if (!active) return this.stopReporting();
    if (this.reportingSince === 0) this.reportingSince = t;
    // Over the lease's span, not a report's: at a call or two a second, a second's count is 0 or 2.
    while (this.sentTimes.length > 0 && this.sentTimes[0]! < t - LEASE_MS) this.sentTimes.shift();
    const span = Math.min(LEASE_MS, Math.max(REPORT_MS, t - this.reportingSince)) / 1000;
    const sentItsCall = this.waiting() === 0 && this.sentTimes.length <= 1 && t - this.reportingSince < SINGLE_CALL_MS;
    const report = {
      want: sentItsCall ? 0 : this.sentTimes.length / span + this.waiting(),
      need: sentItsCall ? 0 : (this.sentTimes.length + this.waiting()) / span,
      accepted: this.successes.filter((s) => s >= t - span * 1000).length / span,
      // Every 429, noise or not: the fleet learns its noise floor from them.
      limited: this.limitedTimes.filter((l) => l >= t - span * 1000).length / span,
      ...(this.freshSinceReport.answers > 0 ? { fresh: this.freshSinceReport } : {}),
    };
    this.freshSinceReport = { answers: 0, limited: 0 };
    this.asking = true;
    void this.share(report)
      .catch(() => null)
      .then((grant) => {
        this.asking = false;
        if (grant === null) {
          // The fleet's pace does not answer: this worker paces alone, on its own floor too.
          if (this.learnNoise) this.floor.setFleetFloor(null, false);
          return;
        }
        // The fleet's floor, pooled from every worker's answers: a worker alone sees too few
        // fresh calls under its share to learn it, and each noise 429 it relays cuts the rate.
        if (this.learnNoise) {
          this.floor.setFleetFloor(grant.noise);
          this.noiseKnownOrNot();
        }
        this.fleetSlowStart = grant.slowStart === true;
        this.fleetFreshShare = Number.isFinite(grant.freshShare) ? Math.min(1, Math.max(0, grant.freshShare!)) : 0;
        if (Number.isFinite(grant.accountRate) && grant.accountRate! > 0) {
          this.accountRate = grant.accountRate!;
          this.accountRateSinceHold = Math.min(this.accountRateSinceHold, this.accountRate);
        }
        this.setShare(grant.rate, grant.phase, grant.grid);
      });
    this.reportLater();
  }

  private reportLater(): void {
    if (this.reporting) clearTimeout(this.reporting);
    this.reporting = setTimeout(() => {
      this.reporting = null;
      this.report();
    }, REPORT_MS);
    this.reporting.unref?.();
  }

  private stopReporting(): void {
    if (this.reporting) clearTimeout(this.reporting);
    this.reporting = null;
    this.reportingSince = 0;
  }

  /** The fleet granted this worker `rate` calls a second of the account's rate. */
  private setShare(rate: number, phase: number, grid?: Grid): void {
    const t = this.now();
    this.slots.set(phase, grid);
    this.shareUntil = t + LEASE_MS;
    this.askedFirstAt = 0;
    const was = this.rate;
    this.rate = Math.max(0, Math.min(rate, this.maxRate));
    if (this.rate > 0) {
      // On the fleet's grid: this worker's first slot from now, after its last call and the hold's
      // end (the same slot again while the grid and the span stay put). Not one already passed: a
      // span that moved makes another worker's past slot this one's, and sending it now is off the grid.
      // Without a grid: one interval of the new share after the last call (a share that grew lets it out sooner).
      if (this.slots.known) this.nextSlotAt = this.onGrid(Math.max(this.notBefore, this.lastSentAt + this.slotMs() / 2, t));
      else if (was > 0 && this.lastSentAt > 0) this.nextSlotAt = Math.min(this.nextSlotAt, this.lastSentAt + 1000 / this.rate);
    }
    this.pump();
  }

  /** The interval of the fleet's slots, or of this worker's calls without a grid. */
  private slotMs(): number {
    return this.slots.interval(this.rate);
  }

  /** Sharing the fleet's rate: the first of this worker's slots of the fleet's grid from `t` on (fleet-slots.ts). */
  private onGrid(t: number): number {
    if (!this.shared(this.now()) || this.rate <= 0) return t;
    return this.slots.next(t, this.rate);
  }

  /** Stops reporting to the fleet (the worker is closing). */
  close(): void {
    this.stopReporting();
    if (this.timer) clearTimeout(this.timer);
  }

  /**
   * Resolves when this call may go out; rejects with the signal's reason if it aborts first, and
   * with AccountHeld if the account is held (now or while it waits) for longer than `releaseOverMs`.
   * Within its class a call waits behind those of a lower `priority` key, then by arrival.
   */
  acquire(cls: CallClass, signal?: AbortSignal, releaseOverMs?: number, priority = DEFAULT_PRIORITY_KEY): Promise<Turn> {
    signal?.throwIfAborted();
    if (releaseOverMs !== undefined && this.notBefore - this.now() > releaseOverMs) return Promise.reject(new AccountHeld(this.notBefore));
    return new Promise<Turn>((resolve, reject) => {
      const waiter: Waiter = { cls, priority, seq: this.arrivals++, resolve, reject, signal, releaseOverMs };
      if (signal) {
        waiter.onAbort = () => {
          const queue = this.queues[cls];
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          reject(signal.reason as Error); // an AbortSignal's reason, passed on as given
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      // Idle past its slot of the fleet's grid: the call waits for the next one, not off the grid
      // (where another worker's may be). A backlog's late slot (a late timer) is still taken.
      if (this.waiting() === 0 && this.slots.known && this.nextSlotAt < this.now() && this.shared(this.now()))
        this.nextSlotAt = this.onGrid(this.now());
      enqueue(this.queues[cls], waiter);
      if (this.share && !this.reporting) {
        if (!this.shared(this.now()) && this.askedFirstAt === 0) this.askedFirstAt = this.now();
        this.report();
      }
      this.pump();
    });
  }

  /** No call before `until` (epoch ms): a Retry-After, this worker's or the fleet's. */
  holdUntil(requested: number): void {
    // Bounded here, where every hold arrives (own 429, relayed, read back at start).
    const until = boundHold(requested, this.now());
    if (until <= this.notBefore) return;
    const t = this.now();
    if (this.notBefore <= t) {
      this.heldSince = t;
      const accepted = this.successes.filter((s) => s >= t - FRESH_RATE_MS).length / (FRESH_RATE_MS / 1000);
      // Sharing the fleet's rate, no more than this worker's share after the cut: the shares add
      // up to the account's rate, so the fleet's fresh calls stay within what the limit refilled
      // while it held, however many workers share it and whichever of them its calls go to.
      const fleetBound = this.shared(t) ? this.fleetFreshShare * this.rate : 0;
      const budget = Math.max(accepted, FRESH_PACE_SHARE * this.rate, fleetBound);
      this.freshRate = this.shared(t) ? 0.9 * Math.min(this.rate, budget) : budget;
    }
    this.notBefore = until;
    // Each worker's first call after the hold at its slot of the fleet's grid, or a random phase
    // of its interval: all at the hold's end, four workers sharing an account of 2 a second sent
    // twice its burst at once, met 429s, and held again (half the calls 429, in the simulation).
    if (this.share && this.rate > 0) {
      this.nextSlotAt =
        this.shared(t) && this.slots.known
          ? Math.max(this.nextSlotAt, this.onGrid(until))
          : Math.max(this.nextSlotAt, until + (this.random() * 1000) / this.rate);
    }
    this.sentSinceHold = 0;
    this.accountRateSinceHold = this.accountRate > 0 ? this.accountRate : Number.POSITIVE_INFINITY;
    this.holdRelayed = false;
    this.relayLag = 0;
    this.releaseWaiters(until - t);
    this.pump();
  }

  /** Waiters that would rather give their place up than wait `heldMs` (a worker slot they hold meanwhile). */
  private releaseWaiters(heldMs: number): void {
    for (const cls of CLASSES) {
      const queue = this.queues[cls];
      for (const waiter of queue.filter((w) => w.releaseOverMs !== undefined && heldMs > w.releaseOverMs)) {
        queue.splice(queue.indexOf(waiter), 1);
        if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
        waiter.reject(new AccountHeld(this.notBefore));
      }
    }
  }

  /** The API accepted a call (any answer but 429). */
  recordAccepted(turn?: Turn): void {
    const t = this.now();
    this.successes.push(t);
    while (this.successes.length > 0 && this.successes[0]! < t - FRESH_RATE_MS) this.successes.shift();
    this.noteAnswer(t, false, turn);
  }

  /**
   * The API answered 429 with this Retry-After: hold the account and slow down, unless known
   * noise explains it (then only the call itself waits). Returns the end of the hold taken,
   * which the fleet should be told, or null when the pace did not take the 429 as its own.
   */
  recordRateLimited(retryAfterMs: number, turn?: Turn): number | null {
    const t = this.now();
    this.lastLimitedAt = t;
    this.noteAnswer(t, true, retryAfterMs > LONG_HOLD_MS ? undefined : turn);
    this.retryAfters.push(retryAfterMs);
    if (retryAfterMs <= LONG_HOLD_MS) this.limitedTimes.push(t);
    while (this.limitedTimes.length > 0 && this.limitedTimes[0]! < t - LEASE_MS) this.limitedTimes.shift();
    if (this.retryAfters.length > RETRY_AFTERS_KEPT) this.retryAfters.shift();
    // The API holding the account is never noise (noise names a few seconds): whatever the floor
    // says, the fleet holds, and the calls meanwhile stay unsent instead of each meeting its 429.
    if (retryAfterMs > LONG_HOLD_MS) {
      this.holdUntil(t + retryAfterMs);
      return t + retryAfterMs;
    }
    const recent = this.tally.lately(t, { ms: RECENT_MS, answers: RECENT_ANSWERS, maxMs: RECENT_MAX_MS, notBefore: this.lastTakenAt });
    if (!this.floor.exceeded(recent)) return null;
    this.lastTakenAt = t;
    // Over a floor, which 429s are the limit's is unknown: its Retry-After is among the last
    // ones, and noise may name longer ones. The hold also gives the floor fresh calls to follow
    // the noise by (without it, noise that stopped beside a limit was never forgotten).
    // The fleet is told this hold, not the 429's own Retry-After: a noise 429 that tips the
    // count may name 5 s, and every worker (this one too, through the relay) would hold that long.
    const hold = this.knownNoise ? Math.min(...this.retryAfters) : retryAfterMs;
    this.holdUntil(t + hold);
    if (hold <= LONG_HOLD_MS) this.slowDown(t, hold, t + hold);
    return t + hold;
  }

  /** Another worker of the fleet was told to wait until `until`: the account is at its limit. */
  recordFleetRateLimited(until: number): void {
    const t = this.now();
    if (until > t) {
      const heldBefore = this.notBefore > t;
      this.holdUntil(until);
      // Sharing the fleet's rate, a hold this relay starts began at the 429, whose Retry-After is
      // a whole second or more: at least FRESH_HOLD_MS before its end, the relay's lag counted
      // against the calls after it as for the worker whose 429 it was. (Counted from the relay, a
      // Retry-After of 1 s left the other workers 0.7 s and no fresh call.) Not pacing alone: each
      // worker's own pace overruns a small account between relays (bench pacing, worker column:
      // 5 a second, 4 workers, a charging limiter, 0.435 -> 0.077 of it).
      if (!heldBefore && this.notBefore === until && this.shared(t)) this.heldSince = Math.min(t, until - FRESH_HOLD_MS);
      // Back before the hold ends: the channel is quick enough for the fleet to have held with it.
      if (until >= this.notBefore) {
        this.holdRelayed = true;
        this.relayLag = t - this.heldSince;
      }
      // The hold answers the overshoot this worker's last answers show too: its own 429s are
      // judged from here (else both workers held one after the other for the same overshoot, and
      // the second hold let a refilled limit's tokens go unspent) ...
      if (this.knownNoise) this.lastTakenAt = Math.max(this.lastTakenAt, t);
    }
    // ... and every worker that sends gives up its share of it, so the fleet's pace falls as one
    // (a worker that has not called lately, e.g. just started, learns nothing about its share),
    // once per overshoot: a hold ending soon after the one this worker last slowed for (its own,
    // relayed back) is the same overshoot. A hold relayed after it ended slows too: else, with
    // relays slower than a 1 s hold, only the worker whose call met the 429 slowed, the others'
    // pace grew on, and a 5-a-second account shared by two workers overshot twice as often.
    const overshootNow = until - t <= LONG_HOLD_MS && t - until <= LATE_RELAY_MS && until > this.slowedFor + SAME_OVERSHOOT_MS;
    if (this.acceptedPerSecond(t) > 0 && overshootNow) {
      this.slowDown(t, until - t, until);
    }
  }

  private acceptedPerSecond(t: number): number {
    return this.successes.filter((s) => s >= t - 2000).length / 2;
  }

  snapshot(): PacerSnapshot {
    return {
      rate: Math.round(this.rate * 100) / 100,
      slowStart: this.slowStart,
      noiseShare: this.knownNoise ? Math.round(this.floor.share * 1000) / 1000 : null,
      notBefore: this.notBefore,
      waiting: { label: this.queues.label.length, order: this.queues.order.length, tracking: this.queues.tracking.length },
    };
  }

  /** The time the next call could go out if one were waiting (for tests and status). */
  nextCallAt(): number {
    return Math.max(this.notBefore, this.nextSlotAt, this.now());
  }

  private noteAnswer(t: number, limited: boolean, turn?: Turn): void {
    this.tally.add(t, limited);
    if (turn?.fresh && this.learnNoise) {
      this.floor.noteFresh(limited);
      this.onFresh(limited);
      if (this.share)
        this.freshSinceReport = { answers: this.freshSinceReport.answers + 1, limited: this.freshSinceReport.limited + (limited ? 1 : 0) };
    }
    if (t - this.floorCheckedAt < 1000 && !turn?.fresh) return;
    this.floorCheckedAt = t;
    this.floor.check(this.tally.since(t - FLOOR_CHECK_MS));
    this.noiseKnownOrNot();
  }

  /** The fleet's fresh answers read at start (pacing/fleet-rate-limit.ts): noise the fleet learned is known before the first call. */
  seedFresh(answers: Answers): void {
    if (!this.learnNoise) return;
    this.floor.noteFreshCounts(answers);
    this.noiseKnownOrNot();
  }

  /**
   * Whether this worker has had 429s in the last minute: then the fleet's pool, which counts
   * every worker's fresh answers, knows the noise better than its own few (a worker slowed down
   * by its 429s sends too few fresh calls to learn alone; one whose floor came out high takes
   * the other workers' share of the limit).
   */
  wantsFleetFresh(): boolean {
    return this.learnNoise && this.lastLimitedAt > 0 && this.now() - this.lastLimitedAt < FLOOR_CHECK_MS;
  }

  /** The fleet's pool of fresh answers, this worker's reported ones among them, in place of its own. */
  adoptFleetFresh(answers: Answers): void {
    if (!this.learnNoise || answers.answers < this.floor.freshCount) return;
    this.floor.replaceFresh(answers);
    this.noiseKnownOrNot();
  }

  private noiseKnownOrNot(): void {
    const known = this.floor.share > 0;
    if (known === this.knownNoise) return;
    this.knownNoise = known;
    // Noise just learned made cuts no limit asked for: search for the limit again from here.
    if (known) this.slowStart = true;
    this.onNoise(known ? this.floor.share : null);
  }

  /** Slows for the overshoot whose hold ends at `holdEnd`. */
  private slowDown(t: number, windowMs: number, holdEnd: number): void {
    this.lastRateLimitedAt = t;
    // One decrease per Retry-After window: the 429s of calls already in flight say nothing new.
    if (t - this.lastDecreaseAt < Math.max(1000, windowMs)) return;
    this.lastDecreaseAt = t;
    this.slowedFor = holdEnd;
    if (this.slowStart) {
      // What the API actually accepted lately is the best estimate of this worker's share; with
      // too few calls to tell (a 429 on the first calls), halve and keep searching.
      // Calls refused as noise did not use the limit.
      const accepted = this.acceptedPerSecond(t) / (1 - this.floor.share);
      if (accepted < 2) {
        this.rate = Math.max(this.minRate, this.rate * 0.5);
      } else {
        this.slowStart = false;
        this.rate = Math.max(this.minRate, Math.min(accepted * 0.9, this.maxRate));
      }
    } else {
      this.rate = Math.max(this.minRate, this.rate * 0.9);
    }
    this.lastIncreaseAt = t;
  }

  private speedUp(t: number): void {
    // Sharing the fleet's rate, the fleet decides when the account's rate grows.
    if (this.shared(t) || t - this.lastIncreaseAt < 1000) return;
    this.lastIncreaseAt = t;
    // Near the limit, probe gently: half a percent a second, so a cut of a tenth is won back in
    // about 20 s and a limit sees about one overshoot in that time. (At 1 % or 0.05 call a
    // second, an account of 5 a second saw one every 5 s: 3 % of its calls 429.)
    // After a minute without any 429 while calls wait (e.g. a storm of 429s that pushed the pace
    // down is over), grow by a tenth a second to find it again; a hold is no room found.
    const quiet = t - Math.max(this.lastRateLimitedAt, this.notBefore) >= QUIET_MS;
    const grown = this.slowStart ? this.rate * 1.5 : quiet ? this.rate * 1.1 : this.rate + this.probe();
    this.rate = Math.min(this.maxRate, grown);
  }

  /**
   * The additive increase a second. An overshoot costs about one 429 whatever the limit, so the
   * smaller the account the larger its share: a worker sending under GENTLE_BELOW calls a second
   * (its account is at least that small) probes down to half as fast, a cut then won back in up
   * to 40 s. (Two workers on an account of 5 a second, at 0.5 % a second: 0.75-0.9 % 429s in the
   * simulation, 1.2-1.8 % in the bench; at 0.25 %: 0.42 %.)
   */
  private probe(): number {
    const gentle = Math.min(1, Math.max(0.5, this.rate / GENTLE_BELOW));
    return Math.max(MIN_PROBE, this.rate * PROBE_SHARE * gentle);
  }

  private waiting(): number {
    return this.queues.label.length + this.queues.order.length + this.queues.tracking.length;
  }

  private pick(): Waiter | undefined {
    const first = CLASSES.find((c) => this.queues[c].length > 0);
    if (!first) return undefined;
    const lower = CLASSES.slice(CLASSES.indexOf(first) + 1).filter((c) => this.queues[c].length > 0);
    if (lower.length > 0 && this.streak >= this.fairShareEvery - 1) {
      this.streak = 0;
      const oldest = lower.reduce((a, b) => (this.queues[a][0]!.seq <= this.queues[b][0]!.seq ? a : b));
      return this.queues[oldest].shift();
    }
    this.streak = lower.length > 0 ? this.streak + 1 : 0;
    return this.queues[first].shift();
  }

  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    for (;;) {
      if (this.waiting() === 0) return;
      const t = this.now();
      // Waiting for the fleet's first share (or a share of none): the next grant pumps again.
      // A fleet that does not answer within LEASE_MS leaves this worker to pace alone.
      const awaitingShare = this.askedFirstAt > 0 && t - this.askedFirstAt < LEASE_MS;
      if (awaitingShare || (this.shared(t) && this.rate <= 0)) {
        const retry = awaitingShare ? this.askedFirstAt + LEASE_MS : this.shareUntil;
        this.timer = setTimeout(() => this.pump(), Math.max(1, retry - t));
        this.timer.unref?.();
        return;
      }
      if (this.askedFirstAt > 0) this.askedFirstAt = 0;
      // A share of none that lapsed (the fleet stopped answering): pace alone from the slowest pace.
      if (!this.shared(t) && this.rate < this.minRate) this.rate = this.minRate;
      const gate = Math.max(this.notBefore, this.nextSlotAt);
      if (t < gate) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(gate - t));
        this.timer.unref?.();
        return;
      }
      const waiter = this.pick()!;
      this.sentSinceHold++;
      this.sentTimes.push(t);
      this.lastSentAt = t;
      const since = t - this.notBefore;
      const fresh =
        (this.holdRelayed || !this.fleetRelays) &&
        !(this.shared(t) && this.fleetSlowStart) &&
        (since < FRESH_MS || !this.shared(t) || this.accountRate <= FLEET_FRESH_GROWTH * this.accountRateSinceHold) &&
        this.notBefore - this.heldSince >= FRESH_HOLD_MS &&
        since < (this.shared(t) ? FLEET_FRESH_MS : FRESH_MS) &&
        this.sentSinceHold <= this.freshRate * (1 + (since - this.relayLag) / 1000);
      // No saved-up credit after an idle spell: the next call is one interval after this one
      // (sharing the fleet's rate: this worker's next slot of its grid).
      this.nextSlotAt =
        this.shared(t) && this.slots.known ? this.onGrid(t + this.slotMs() / 2) : Math.max(t, this.nextSlotAt) + 1000 / this.rate;
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve({ fresh });
      // Calls are waiting for the rate, not for the API: this worker could go faster.
      if (this.waiting() > 0) this.speedUp(t);
    }
  }
}

/** Behind every waiter of the same or a lower priority key, ahead of the rest (arrival order within a key). */
function enqueue(queue: Waiter[], waiter: Waiter): void {
  let at = queue.length;
  while (at > 0 && queue[at - 1]!.priority > waiter.priority) at--;
  queue.splice(at, 0, waiter);
}

/** How every shipping API call of a worker goes out: paced, or straight (pacing off). */
export interface CallPacing {
  /** Waits until `until` (epoch ms): a Retry-After an earlier attempt of this call recorded. */
  waitUntil(until: number, signal: AbortSignal): Promise<void>;
  /**
   * Waits for the call's turn, makes it, and learns from the answer. With `maxWaitMs`, a turn
   * that has not come by then throws PaceWaitExceeded, and no call is made. With
   * `releaseOverMs`, an account held for longer than that (when the call asks, or while it
   * waits) throws AccountHeld, and no call is made.
   */
  run<T>(cls: CallClass, call: (signal: AbortSignal) => Promise<T>, signal: AbortSignal, wait?: PaceWait): Promise<T>;
}

/** How long a call is willing to wait for its turn. */
export interface PaceWait {
  maxWaitMs?: number;
  releaseOverMs?: number;
  /** The call's task priority key (domain/priority.ts); default: Temporal's default, 3. */
  priority?: number;
}

/** The account is held (a Retry-After) until `until`, longer than the call would wait: it was not sent. */
export class AccountHeld extends Error {
  constructor(readonly until: number) {
    super(`the account is held by a Retry-After until ${new Date(until).toISOString()} (call not sent)`);
    this.name = 'AccountHeld';
  }
}

/** The call's turn under the account's pace did not come within the wait it was allowed. */
export class PaceWaitExceeded extends Error {
  constructor(
    readonly cls: CallClass,
    readonly waitedMs: number,
  ) {
    super(`no turn under the account's pace within ${waitedMs} ms (${cls} call not sent)`);
    this.name = 'PaceWaitExceeded';
  }
}

/** A shipping API answer that says "slow down": a 429 and its Retry-After. */
export type RateLimitOf = (err: unknown) => { retryAfterMs: number } | null;
/** Whether the API answered at all (a 4xx or 2xx uses the account's budget; a network failure may not). */
export type AnsweredOf = (err: unknown) => boolean;

export function pacedCalls(
  pacer: AccountPacer,
  classify: { rateLimitOf: RateLimitOf; answered: AnsweredOf },
  /** Tells the rest of the fleet (fire and forget). */
  onRateLimited?: (until: number) => void,
): CallPacing {
  return {
    async waitUntil(until, signal) {
      pacer.holdUntil(until);
      await sleepUntil(until, signal);
    },
    async run(cls, call, signal, { maxWaitMs, releaseOverMs, priority } = {}) {
      const turn = maxWaitMs === undefined ? signal : AbortSignal.any([signal, AbortSignal.timeout(maxWaitMs)]);
      let granted: Turn;
      try {
        granted = await pacer.acquire(cls, turn, releaseOverMs, priority);
      } catch (err) {
        if (!signal.aborted && turn.aborted) throw new PaceWaitExceeded(cls, maxWaitMs!);
        throw err;
      }
      try {
        const result = await call(signal);
        pacer.recordAccepted(granted);
        return result;
      } catch (err) {
        const limited = classify.rateLimitOf(err);
        if (limited) {
          // Known noise is this call's own business: the fleet is told only of a limit.
          const held = pacer.recordRateLimited(limited.retryAfterMs, granted);
          if (held !== null) onRateLimited?.(held);
        } else if (classify.answered(err)) {
          pacer.recordAccepted(granted);
        }
        throw err;
      }
    },
  };
}

/** Pacing off (SHIPPING_API_PACING=off): calls go out at once; an attempt's own Retry-After still holds. */
export const UNPACED: CallPacing = {
  waitUntil: (until, signal) => sleepUntil(until, signal),
  run: (_cls, call, signal) => call(signal),
};

/** Resolves at `until` (epoch ms), or rejects with the signal's reason if it aborts first. */
export function sleepUntil(until: number, signal: AbortSignal): Promise<void> {
  const ms = until - Date.now();
  if (ms <= 0) return Promise.resolve();
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error); // an AbortSignal's reason, passed on as given
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
