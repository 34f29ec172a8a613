/**
 * One account's pace for the whole fleet, kept in the account's workflow (workflows/account.ts):
 * the account's rate is decided here once, from every worker's answers, and handed out as shares
 * that follow where the calls wait.
 *
 * - **The rate** starts at INITIAL_RATE and grows by half each second while the fleet has calls
 *   waiting for it (slow start); the first overshoot (a 429 the fleet is told of) sets it to 90 %
 *   of what the API accepted of the whole fleet over the last reports, and from then on it grows
 *   by half a percent a second (down to a quarter for an account under 10 calls a second) and
 *   shrinks by a tenth at each overshoot (AIMD for one flow: the fleet). An account under 10 a
 *   second grows no further than just under where it last overshot (PLATEAU_SHARE). After a
 *   minute without an overshoot while calls wait (a minute and a half under 10 a second) it grows
 *   by a tenth a second again, so a limit that rises is found.
 * - **Shares** go by demand (water-filling): each worker reports the calls a second it would send
 *   (those it sent over its last report's period and those waiting now; under a call a second per
 *   worker, the higher of its last two reports' counts); a worker that needs less
 *   than an equal share gets what it needs, the rest is split among the others. A share is a lease
 *   of LEASE_MS: a worker that stops reporting leaves its share to the others, and a new grant
 *   never makes the leases out exceed the rate (a worker whose share shrinks gives it up at its
 *   next report, within REPORT_MS, and the worker whose share grows takes it at its own).
 * - **A ceiling** (`maxRequestsPerSecond`) is the account's: the lowest any worker reports caps
 *   the rate, whatever the number of workers.
 * - **429s no pace causes** (a quota shared with other clients, a flaky proxy): the workers report
 *   their 429s beside their accepted calls, and their fresh answers (right after a hold: no limit
 *   refuses them). Those, and the answers reported while the rate is under KNOWN_GOOD_SHARE of
 *   what the API lately accepted of the fleet (no limit that did not fall that far refuses them),
 *   are pooled: noise refuses its share of any call. Their 429 share is the fleet's noise floor,
 *   handed out with every share; a worker takes a 429 within it as noise (that call waits its
 *   Retry-After, nothing is relayed) and the rate, which the noise cut before it was known,
 *   searches for the limit again (slow start), where the fleet's own answers show the limit
 *   (limitInNoise).
 *
 * Pure and deterministic (no clock of its own, no I/O): the workflow runs it on its own time.
 */
import type { PaceGrant, PaceReport } from '../workflow-definitions/account';
import { below, floorOf, moreThan, onlyStrays, overFloor, type Answers } from './noise-floor';

export type { PaceGrant, PaceReport };

/** The account's rate before anything is known (the whole fleet's, calls a second). */
export const INITIAL_RATE = 5;
/** The slowest the account is paced. */
export const MIN_RATE = 0.25;
/** Each worker reports this often while it has calls to make. */
export const REPORT_MS = 1000;
/** A share lasts this long without a new report. */
export const LEASE_MS = 3000;
/** Holds ending within this of each other answer one overshoot (a Retry-After is whole seconds). */
const SAME_OVERSHOOT_MS = 2000;
/** No overshoot for this long while calls wait: the rate grows faster again. */
const QUIET_MS = 60_000;
/**
 * A small account's (under GENTLE_BELOW) quiet spell: each of its quiet spell's overshoots is a
 * large share of its calls (at 60 s, 2-4 % 429s at 2 a second); at 120 s, a slow start's end that
 * counted far less than the limit (relays of 3 s) left it at 0.67 of it for two minutes.
 */
const SMALL_QUIET_MS = 90_000;
const PROBE_SHARE = 0.005;
const MIN_PROBE = 0.005;
/** Under this rate the probe is gentler (an overshoot's one 429 is a larger share of a small account's calls). */
const GENTLE_BELOW = 10;
const SETTLE_GROWTH = 1.02;
/**
 * A small account (under GENTLE_BELOW) grows back to this share of where it last overshot and
 * waits there for the quiet spell: each of its overshoots' 429s is a large share of its calls
 * (probing on, an account of 2 a second met its limit every 20-40 s: 2 % 429s).
 */
const PLATEAU_SHARE = 0.98;
/**
 * While the rate per worker is under this (calls a second), a worker's shares go by the higher of
 * its last two wants: a call waiting or not at its report swings its want by more than its share,
 * and shares that moved at every report left part of the rate to nobody until the others' next
 * reports (an account of 2 a second, 4 workers: 0.89 of it spent).
 */
const STEADY_BELOW = 1;
/** A hold longer than this is the API holding the account, not the pace's doing. */
const LONG_HOLD_MS = 10_000;
/**
 * Answers count toward the noise floor while the rate is at most this share of the known-good
 * pace. Low enough that a limit's own overshoots (a tenth over, then cut, or a limit's burst
 * counted in what it accepted) and a limit that halves are never under it: only a rate that
 * 429s unrelated to the pace cut again and again (at 0.5 an account of 2 a second shared by 4
 * workers taught a floor, in the simulation; at 0.9 most small accounts did).
 */
const KNOWN_GOOD_SHARE = 0.45;
/** The known-good pace (the most the fleet's reports showed accepted) is replaced by the next report's after this long. */
const KNOWN_GOOD_MS = 300_000;
/** The pools keep the proportion of this many answers at most: they follow noise that changes. */
const NOISE_POOL_ANSWERS = 300;
/** A floor rests on at least this many pooled answers and 429s among them. */
const MIN_NOISE_ANSWERS = 20;
const MIN_NOISE_LIMITED = 3;
/** Fresh answers are surer: as few as a worker learns its own floor from (pacing/noise-floor.ts). */
const MIN_FRESH_ANSWERS = 15;
const MIN_FRESH_LIMITED = 2;
/**
 * The fleet's grid of slots runs this much over the rate (so the shares' spans fit in it), and
 * moves only when the rate leaves [grid ÷ GRID_ROOM², grid]: a grid that moved at every grant,
 * under the workers' schedules, let one worker's calls out faster than its share.
 */
const GRID_ROOM = 1.02;

/** A report's counts span LEASE_MS: its answers were all made at a rate set this long before (a report, its relay, a lease). */
const SAMPLE_SETTLE_MS = LEASE_MS + REPORT_MS + 500;
/** While a floor is known and the fleet is beside a limit, the floor is checked this often ... */
const CHECK_EVERY_MS = 30_000;
/** ... at this share of what the fleet's reports show the API accepting now, ... */
const CHECK_SHARE = 0.9;
/** ... for this long (SAMPLE_SETTLE_MS, then a lease's worth of counts). */
const CHECK_MS = SAMPLE_SETTLE_MS + LEASE_MS;

/** What is carried over a continue-as-new. */
export interface FleetPaceState {
  rate: number;
  slowStart: boolean;
  lastCutAt: number;
  cutFor: number;
  settling?: boolean;
  /** Overshoots met in this slow start (from the third, a limit of 2 a second is found). */
  slowStartCuts?: number;
  /** Where a small account last overshot (0 or absent: not since slow start). */
  peak?: number;
  /** The answers the noise floor is learned from, and every answer lately (to forget noise that stopped). */
  noise?: Answers;
  all?: Answers;
  /** The workers' fresh answers (PaceReport.fresh), pooled. */
  fresh?: Answers;
}

interface Lease {
  want: number;
  /** What its shares go by: its want, or the higher of its last two (STEADY_BELOW). */
  demand: number;
  accepted: number;
  limited: number;
  rate: number;
  until: number;
  maxRate: number;
}

export class FleetPace {
  private rate: number;
  private slowStart: boolean;
  /**
   * Between slow start's end and the next overshoot: the fleet's first counts of what the API
   * accepted are short and uneven, so the rate may have been set well under the limit; it grows
   * by SETTLE_GROWTH a second until the next overshoot (a small account's to its plateau), then probes gently.
   */
  private settling: boolean;
  /** Overshoots met in this slow start. */
  private slowStartCuts = 0;
  private lastIncreaseAt = 0;
  private lastCutAt: number;
  /** The end of the hold of the overshoot last cut for. */
  private cutFor: number;
  /** The account is held until then: calls wait for the hold, not for the rate. */
  private heldUntil = 0;
  private readonly leases = new Map<string, Lease>();
  private noise: Answers;
  private all: Answers;
  private fresh: Answers;
  /** The most the fleet's reports showed the API accepting lately (calls a second), and when. */
  private good = { rate: 0, at: 0 };
  /** Since when the rate is under KNOWN_GOOD_SHARE of the known-good pace (infinity: it is not). */
  private lowSince = Number.POSITIVE_INFINITY;
  /**
   * The floor's check beside a limit (see checkFloor): shares are held under `rate` until `until`,
   * and the answers counted wholly under it pool in `answers`, over as many checks as it takes.
   */
  private check: { rate: number; from: number; until: number } | null = null;
  private checkAt = 0;
  private checked: Answers = { answers: 0, limited: 0 };
  /** The fleet's answers counted wholly since the last cut, relayed hold or check (limitInNoise). */
  private sinceCut: Answers = { answers: 0, limited: 0 };
  /** Where a small account last overshot (calls a second; 0: not since slow start), see PLATEAU_SHARE. */
  private peak: number;
  /** The fleet's slots (PaceGrant.grid); not carried over a continue-as-new (the next run's first report sets it). */
  private grid = { rate: 0, origin: 0 };

  constructor(state?: Partial<FleetPaceState>) {
    this.noise = answersOf(state?.noise);
    this.all = answersOf(state?.all);
    this.fresh = answersOf(state?.fresh);
    this.rate = positive(state?.rate) ?? INITIAL_RATE;
    this.slowStart = state?.slowStart ?? true;
    this.settling = state?.settling ?? false;
    this.slowStartCuts = Math.min(100, Math.floor(nonNegative(state?.slowStartCuts)));
    this.lastCutAt = state?.lastCutAt ?? 0;
    this.cutFor = state?.cutFor ?? 0;
    this.peak = nonNegative(state?.peak);
  }

  state(): FleetPaceState {
    return {
      rate: this.rate,
      slowStart: this.slowStart,
      lastCutAt: this.lastCutAt,
      cutFor: this.cutFor,
      settling: this.settling,
      slowStartCuts: this.slowStartCuts,
      peak: this.peak,
      noise: this.noise,
      all: this.all,
      fresh: this.fresh,
    };
  }

  /** The share of 429s no pace causes (0: none known), and how many answers it rests on. */
  noiseFloor(): { share: number; answers: number } {
    // Every answer no limit refused (fresh, at a low rate, in a check), pooled: a floor learned
    // young from a few fresh answers matures, and falls when the noise does.
    const all = { answers: this.noise.answers + this.fresh.answers, limited: this.noise.limited + this.fresh.limited };
    const share = floorOf(all, MIN_NOISE_ANSWERS, MIN_NOISE_LIMITED);
    if (share > 0) return { share, answers: all.answers };
    // A few fresh answers are enough to learn a floor from, unless the pool clearly shows less.
    const fresh = floorOf(this.fresh, MIN_FRESH_ANSWERS, MIN_FRESH_LIMITED);
    if (fresh <= 0 || (all.answers >= MIN_NOISE_ANSWERS && below(all, fresh))) return { share: 0, answers: 0 };
    return { share: fresh, answers: this.fresh.answers };
  }

  /** Both pools start over (noise that stopped, or a floor the check found too high). */
  private forget(noise: Answers = { answers: 0, limited: 0 }): void {
    this.noise = noise;
    this.fresh = { answers: 0, limited: 0 };
  }

  /** A worker's report: its share until its next one. */
  report(report: PaceReport, now: number): PaceGrant {
    this.expire(now);
    const ceiling = positive(report.maxRate) ?? Number.POSITIVE_INFINITY;
    const lease: Lease = this.leases.get(report.worker) ?? {
      want: 0,
      demand: 0,
      accepted: 0,
      limited: 0,
      rate: 0,
      until: 0,
      maxRate: ceiling,
    };
    const want = nonNegative(report.want);
    const steady = this.leases.has(report.worker) && this.rate < STEADY_BELOW * (this.leases.size || 1);
    lease.demand = steady ? Math.max(want, lease.want) : want;
    lease.want = want;
    lease.accepted = nonNegative(report.accepted);
    lease.limited = nonNegative(report.limited);
    lease.maxRate = ceiling;
    lease.until = now + LEASE_MS;
    this.leases.set(report.worker, lease);
    this.learnNoise(lease, freshOf(report.fresh), now);
    this.limitInNoise(sampleOf(lease), now);
    this.grow(now);
    this.rate = Math.min(this.rate, this.ceiling());
    const rate = this.check ? Math.min(this.rate, this.check.rate) : this.rate;
    const others = [...this.leases].filter(([id]) => id !== report.worker).reduce((n, [, l]) => n + l.rate, 0);
    lease.rate = Math.max(0, Math.min(this.fairShare(report.worker, rate), rate - others));
    if (this.rate > this.grid.rate || this.rate * GRID_ROOM * GRID_ROOM < this.grid.rate)
      this.grid = { rate: this.rate * GRID_ROOM, origin: now };
    // This worker's span of the grid's slots starts where the shares of the workers before it end:
    // the spans add up to the rate, under the grid's, so no slot is two workers'.
    const before = [...this.leases].filter(([id]) => id < report.worker).reduce((n, [, l]) => n + l.rate, 0);
    return {
      rate: lease.rate,
      phase: (before / this.grid.rate) % 1,
      grid: { ...this.grid },
      accountRate: this.rate,
      slowStart: this.slowStart,
      noise: this.noiseFloor(),
      freshShare: this.freshShare(),
    };
  }

  /**
   * The share of its rate at which a worker's calls after a hold may count as fresh (0: the
   * worker's own bound alone): the share that keeps the fleet's rate under KNOWN_GOOD_SHARE of
   * the known-good pace, where no limit that did not fall that far refuses a call (the noise pool
   * trusts every answer there), let alone right after a hold. Before the floor is known the noise
   * cuts the rate to 1-3 calls a second, where the worker's own bound (half its rate, or what the
   * API accepted of it with the holds counted) left 1-2 fresh calls a hold: 14-18 fresh answers
   * in 80 s (bench `pacing`). (All or nothing, once the whole rate was under it: 0.55 and 0.48 of
   * the clean account over 15 seeds, instead of 0.61 and 0.55.)
   */
  private freshShare(): number {
    if (this.slowStart || this.good.rate <= 0) return 0;
    return Math.min(1, (KNOWN_GOOD_SHARE * this.good.rate) / this.rate);
  }

  /** Pools a report's answers (see the head comment); a floor just learned restarts the search for the limit. */
  private learnNoise(lease: Lease, fresh: Answers, now: number): void {
    const sample = sampleOf(lease);
    const knownBefore = this.noiseFloor().share > 0;
    // Fresh answers: no limit refused them, whatever the rate.
    if (fresh.answers > 0) this.fresh = pool(this.fresh, fresh);
    if (sample.answers <= 0) return this.restartIfLearned(knownBefore);
    this.all = pool(this.all, sample);
    // What the API accepted of the whole fleet: the limit allowed at least that (give or take its burst).
    const accepted = this.total('accepted');
    if (accepted >= this.good.rate || now - this.good.at > KNOWN_GOOD_MS) this.good = { rate: accepted, at: now };
    // Only counts made wholly at such a rate: a report counts the worker's answers of the last
    // LEASE_MS, and a rate just halved by slow start still counts the overshoot's 429s.
    if (this.rate > KNOWN_GOOD_SHARE * this.good.rate) this.lowSince = Number.POSITIVE_INFINITY;
    else if (this.lowSince === Number.POSITIVE_INFINITY) this.lowSince = now;
    if (now - this.lowSince >= SAMPLE_SETTLE_MS) this.noise = pool(this.noise, sample);
    // Noise that stopped: the fleet's last answers hold no more 429s than a limit's strays.
    if (this.noise.answers + this.fresh.answers > 0 && this.all.answers >= 0.9 * NOISE_POOL_ANSWERS && onlyStrays(this.all)) this.forget();
    // Before the check: a floor just learned is not checked at once (the rate the noise cut is no limit's).
    this.restartIfLearned(knownBefore);
    this.checkFloor(sample, now);
  }

  /** A floor just learned: the noise made cuts no limit asked for, so the limit is searched for again from here. */
  private restartIfLearned(knownBefore: boolean): void {
    if (knownBefore || this.noiseFloor().share <= 0) return;
    this.slowStart = true;
    this.slowStartCuts = 0;
    this.settling = false;
    this.peak = 0;
  }

  /**
   * A floor learned while the rate was low is checked while the fleet sits beside a limit, where
   * the workers take 429s within it as noise: every CHECK_EVERY_MS the shares are held, for
   * CHECK_MS, under what the API accepts of the fleet now (under the limit). A limit's 429s only
   * add to noise's, so answers there are the floor's own kind: they pool into it (a young floor
   * matures), and clearly fewer 429s than the floor show noise that fell or stopped: the floor is
   * learned again from them (forgotten if they hold only strays). Without it a floor of 0.15-0.2
   * (10 % noise, then none) hid a limit's 429s of 3-45 % for good.
   */
  private checkFloor(sample: Answers, now: number): void {
    const floor = this.noiseFloor().share;
    if (floor <= 0) {
      this.check = null;
      this.checked = { answers: 0, limited: 0 };
      return;
    }
    if (this.check && now >= this.check.from + SAMPLE_SETTLE_MS) {
      // Under the limit: answers only noise refuses, the floor's own kind.
      this.noise = pool(this.noise, sample);
      this.checked = { answers: this.checked.answers + sample.answers, limited: this.checked.limited + sample.limited };
      if (below(this.checked, floor)) {
        this.forget(pool({ answers: 0, limited: 0 }, this.checked));
        this.checked = { answers: 0, limited: 0 };
      } else if (this.checked.answers >= NOISE_POOL_ANSWERS) {
        // As many answers as the floor rests on, and none clearly under it: it holds.
        this.checked = { answers: 0, limited: 0 };
      }
    }
    if (this.check && now >= this.check.until) this.check = null;
    const want = this.total('want');
    const accepted = this.total('accepted');
    // Calls waiting for the rate, or clearly more 429s than the floor (a rate over the limit whose
    // 429s hide in the floor's margin sends what is asked of it: waiting for nothing, it was never
    // checked, and 10-30 % of the calls of accounts of 5 and 20 a second were 429s for minutes
    // after the noise stopped).
    const pressed = want > this.rate || (this.sinceCut.answers >= MIN_NOISE_ANSWERS && moreThan(this.sinceCut, floor));
    const searching = this.slowStart || this.settling;
    if (!this.check && !searching && now >= this.checkAt && now >= this.heldUntil && pressed && accepted > 0) {
      this.check = { rate: CHECK_SHARE * accepted, from: now, until: now + CHECK_MS };
      this.checkAt = now + CHECK_EVERY_MS;
    }
  }

  /**
   * The fleet was told to hold until `holdEnd` (a 429 a worker took as the limit's): the rate is
   * over the limit. Once per overshoot; a long hold is the API holding the account, not the pace.
   */
  overshoot(holdEnd: number, now: number, ceiling = Number.POSITIVE_INFINITY): void {
    this.heldUntil = Math.max(this.heldUntil, holdEnd);
    this.sinceCut = { answers: 0, limited: 0 };
    if (holdEnd - now > LONG_HOLD_MS || holdEnd <= this.cutFor + SAME_OVERSHOOT_MS) return;
    this.cutFor = holdEnd;
    this.lastCutAt = now;
    this.lastIncreaseAt = now;
    this.expire(now);
    const before = this.rate;
    // Calls refused as noise did not use the limit.
    const accepted = this.total('accepted') / (1 - this.noiseFloor().share);
    // Too few calls accepted to tell (a 429 on the first calls) halves and searches on; but from
    // the third overshoot of a slow start on, a call a second accepted with a third of the answers
    // 429 (more than noise may be: NOISE_CAP) is a limit found. An account of 2 a second accepts
    // under 2 a second, and halved at each overshoot its rate searched for good (two workers:
    // 4.6-5.4 % 429s; 37 % with their calls evenly spaced). Ending slow start at the second
    // overshoot whatever was accepted pinned a rate that 10 % noise cut at its first calls near
    // 1-2 a second, too low for the floor ever to be learned.
    const limited = this.total('limited');
    const found = accepted >= 2 || (this.slowStartCuts >= 2 && accepted >= 1 && limited >= (accepted + limited) / 3);
    if (this.slowStart) this.slowStartCuts++;
    if (this.slowStart && found) {
      this.slowStart = false;
      this.settling = true;
      // No lower than halving would have set it.
      this.rate = Math.max(MIN_RATE, 0.9 * Math.min(this.rate, Math.max(accepted, accepted >= 2 ? 0 : this.rate / 2)));
    } else if (this.slowStart) {
      this.rate = Math.max(MIN_RATE, this.rate * 0.5);
    } else {
      // (Not to what the API accepted: over a window with holds in it, that is far below the
      // limit, and 429s no pace causes cut the rate to nothing before they were learned.)
      this.settling = false;
      this.rate = Math.max(MIN_RATE, Math.min(this.rate * 0.9, ceiling));
    }
    if (!this.slowStart) this.notePeak(before, accepted);
    // Every share shrinks with it (each worker also slows by itself when the hold reaches it).
    const scale = this.rate / Math.max(this.rate, this.total('rate'));
    for (const lease of this.leases.values()) lease.rate *= scale;
  }

  /**
   * A limit beside a known floor: the workers take 429s within the floor's margin as noise and
   * relay none, and a young floor's margin is wide (2 429s of 15 answers: a limit's 429s of 40 %
   * hid in it while slow start went on to 2.5 times the limit). The fleet's answers, every
   * worker's, show the limit first: clearly more 429s than the floor explains are an overshoot.
   * While the rate searches (slow start, then settling) they are weighed against the floor itself:
   * that ends the search, after which the rate grows on gently. Probing, with the floor's margin
   * (a young floor can be half the noise: cut at each such "overshoot", a fleet with no limit in
   * reach went from 68 calls a second to 24).
   */
  private limitInNoise(sample: Answers, now: number): void {
    // Counts wholly since the last cut, and with no hold relayed among them (those 429s were
    // told), nor a check (held under the limit).
    if (now - Math.max(this.lastCutAt, this.heldUntil, this.check?.from ?? 0) < SAMPLE_SETTLE_MS) return;
    if (this.check) return;
    this.sinceCut = pool(this.sinceCut, sample);
    const floor = this.noiseFloor();
    const seconds = LEASE_MS / 1000;
    const lately = { answers: (this.total('accepted') + this.total('limited')) * seconds, limited: this.total('limited') * seconds };
    let over: boolean;
    if (this.slowStart || this.settling) {
      // One standard deviation of a young floor over it: at the floor itself, 10 % noise over a
      // floor of 2 in 32 (0.063) ended the slow start of a fleet with no limit in reach at 60 a
      // second of the 100 due, and its backlog waited 27 s.
      over = floor.share > 0 && [lately, this.sinceCut].some((a) => overFloor(a, floor.share, floor.answers, 1));
    } else {
      // Probing, over every answer since the cut: a small account's few seconds hold too few to
      // tell (an account of 5 a second at twice its limit, a quarter of its calls 429s, hid in a
      // floor of 0.1 for minutes after the noise stopped). Without a floor every 429 is relayed.
      over = floor.share > 0 && this.sinceCut.answers >= MIN_NOISE_ANSWERS && overFloor(this.sinceCut, floor.share, floor.answers);
    }
    // No hold in these counts: what the API accepted of the fleet is what the limit lets through.
    if (over) this.overshoot(now + REPORT_MS, now, this.total('accepted') / (1 - floor.share));
  }

  /**
   * A small account's overshoot (outside slow start) sets where it waits (PLATEAU_SHARE): no
   * higher than the API accepted (settling ran 10 s past an account of 2 a second, within its
   * burst). Only an overshoot that shows the limit: slow start's end, growth past the last one,
   * or a rate the API accepted nearly all of (under 429s no pace causes, holds leave far less
   * accepted, and a plateau under that ratcheted the rate down: bench noise row 0.71 -> 0.57).
   * Growth past the last overshoot (the quiet spell's, a tenth a second) is cut to under what
   * the API accepted: cut by a tenth at a time, it met the limit five times over (2 a second).
   */
  private notePeak(before: number, accepted: number): void {
    const grewPast = this.peak > 0 && before > this.peak;
    const limits = this.settling || grewPast || accepted >= 0.95 * before;
    this.peak = before < GENTLE_BELOW && limits ? Math.min(before, accepted) : 0;
    if (grewPast && this.peak > 0) this.rate = Math.max(MIN_RATE, Math.min(this.rate, 0.9 * this.peak));
  }

  /** While the fleet wants more than the rate, it grows (once a second). */
  private grow(now: number): void {
    if (now - this.lastIncreaseAt < REPORT_MS || now < this.heldUntil) return;
    const want = this.total('want');
    if (want <= this.rate) return;
    this.lastIncreaseAt = now;
    const gentle = Math.min(1, Math.max(0.5, this.rate / GENTLE_BELOW));
    // A hold is no room found: the quiet spell counts from its end.
    const quiet = now - Math.max(this.lastCutAt, this.heldUntil) >= (this.rate < GENTLE_BELOW ? SMALL_QUIET_MS : QUIET_MS);
    const probe = this.rate + Math.max(MIN_PROBE, this.rate * PROBE_SHARE * gentle);
    // A small account probes up to just under its last overshoot, and no further before the quiet spell.
    const plateau = this.peak > 0 && this.rate < GENTLE_BELOW ? PLATEAU_SHARE * this.peak : Number.POSITIVE_INFINITY;
    if (this.slowStart) this.rate *= 1.5;
    else if (quiet) this.rate *= 1.1;
    else this.rate = Math.max(this.rate, Math.min(this.settling ? this.rate * SETTLE_GROWTH : probe, plateau));
  }

  /** The fleet's leases summed: rates granted, calls wanted, accepted or refused a second. */
  private total(of: 'rate' | 'want' | 'accepted' | 'limited'): number {
    let sum = 0;
    for (const lease of this.leases.values()) sum += lease[of];
    return sum;
  }

  /** Water-filling by demand: the workers that need less than an equal share get it; the rest share what is left evenly. */
  private fairShare(worker: string, rate: number): number {
    const wants = [...this.leases].sort(([, a], [, b]) => a.demand - b.demand);
    let left = rate;
    let count = wants.length;
    const shares = new Map<string, number>();
    for (const [id, lease] of wants) {
      const share = Math.min(lease.demand, left / count);
      shares.set(id, share);
      left -= share;
      count--;
    }
    // What nobody asked for goes evenly, as headroom for demand that grows before the next report.
    return shares.get(worker)! + left / wants.length;
  }

  private ceiling(): number {
    return Math.min(...[...this.leases.values()].map((l) => l.maxRate));
  }

  private expire(now: number): void {
    for (const [id, lease] of this.leases) if (lease.until <= now) this.leases.delete(id);
  }
}

function positive(n: unknown): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Adds a sample to a pool, scaled down to NOISE_POOL_ANSWERS answers at most. */
function pool(into: Answers, sample: Answers): Answers {
  const sum = { answers: into.answers + sample.answers, limited: into.limited + sample.limited };
  const scale = Math.min(1, NOISE_POOL_ANSWERS / sum.answers);
  return { answers: sum.answers * scale, limited: sum.limited * scale };
}

/** A report's counts, a second's worth of its period's rates. */
function sampleOf(lease: Lease): Answers {
  return { answers: ((lease.accepted + lease.limited) * REPORT_MS) / 1000, limited: (lease.limited * REPORT_MS) / 1000 };
}

/** A report's fresh answers, or none if they are not counts. */
function freshOf(fresh: Partial<Answers> | undefined): Answers {
  const answers = Math.min(1000, nonNegative(fresh?.answers));
  const limited = nonNegative(fresh?.limited);
  return limited <= answers ? { answers, limited } : { answers: 0, limited: 0 };
}

/** A carried pool, or an empty one if it is not one. */
function answersOf(a: Partial<Answers> | undefined): Answers {
  const answers = nonNegative(a?.answers);
  return { answers, limited: Math.min(answers, nonNegative(a?.limited)) };
}

function nonNegative(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.min(n, 1e6) : 0;
}
