/**
 * One account's pace for the whole fleet, kept in the account's workflow (workflows/account.ts):
 * the account's rate is decided here once, from every worker's answers, and handed out as shares
 * that follow where the calls wait.
 *
 * - **The rate** starts at INITIAL_RATE and grows by half each second while the fleet has calls
 *   waiting for it (slow start); the first overshoot (a 429 the fleet is told of) sets it to 90 %
 *   of what the API accepted of the whole fleet over the last reports (FEW_ACCEPTED where that is
 *   little), and from then on it grows by half a percent a second (less for an account under 20
 *   calls a second: PROBE_CALLS; slower where its overshoots cost more than PROBE_BUDGET of the
 *   answers) and shrinks by a tenth at each overshoot, from what the API accepted when that is
 *   most of the rate (AIMD for one flow: the fleet). An account under 10 a second grows no
 *   further than just under where it last overshot, as the API accepted it over the 10 s before
 *   (PLATEAU_SHARE, PEAK_SPAN_MS). After a minute without an overshoot while calls wait (a minute
 *   and a half under 10 a second) it grows by a tenth a second again, so a limit that rises is
 *   found.
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
 *   their 429s beside their accepted calls, and their fresh answers; the fleet's noise floor is
 *   learned from them (fleet-noise-floor.ts) and handed out with every share. A worker takes a
 *   429 within it as noise (that call waits its Retry-After, nothing is relayed); the rate, which
 *   the noise cut before it was known, searches for the limit again (slow start), where the
 *   fleet's own answers show the limit (FleetNoiseFloor.limitInNoise).
 *
 * Pure and deterministic (no clock of its own, no I/O): the workflow runs it on its own time.
 */
import { LEASE_MS, REPORT_MS, type PaceGrant, type PaceReport } from '../workflow-definitions/account';
import { FleetNoiseFloor, NONE, nonNegative, type FleetNoiseState, type FleetView } from './fleet-noise-floor';
import type { Answers } from './noise-floor';

export { LEASE_MS, REPORT_MS };
export type { PaceGrant, PaceReport };

/** The account's rate before anything is known (the whole fleet's, calls a second). */
export const INITIAL_RATE = 5;
/** The slowest the account is paced. */
export const MIN_RATE = 0.25;
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
/**
 * The probe grows a rate cut by a tenth back to the limit in no fewer calls than this: each
 * overshoot costs about two 429s (the first, and another worker's call before the hold reaches
 * it; more where a refused call is charged), a larger share of a small account's calls. At half
 * a percent a second (a quarter under 10 a second) accounts of 5-12 a second with a limiter that
 * charges refused calls met their limit every 20-30 s: 1.2-2 % 429s on 4 workers. (At 400, a
 * loaded machine's relays of 3 s left an account of 5 a second at 0.94 of its limit.)
 */
const PROBE_CALLS = 250;
/**
 * The share of the fleet's answers the limit's 429s may take while probing: at each overshoot the
 * probe's speed is scaled by this over the share the last cycle (cut to cut) had, between
 * MIN_PROBE_SCALE and 1 (not beside a noise floor). Each overshoot costs a 429 per worker whose call
 * went out before the hold reached it (more where a refused call is charged): 4 workers on an
 * account of 20 a second met the limit every 20 s at half a percent a second, 1 % 429s.
 */
const PROBE_BUDGET = 0.005;
const MIN_PROBE_SCALE = 0.125;
/** Fewer answers than this in a cycle tell too little to scale the probe by. */
const PROBE_CYCLE_ANSWERS = 50;
/** A small account: its probe waits at a plateau, and its quiet spell is longer. */
const GENTLE_BELOW = 10;
/**
 * An overshoot while probing cuts from what the API accepted of the fleet when that is at least
 * this share of the rate (no hold among the counts): a limit's burst lets the rate run about a
 * tenth over it before the first 429, and a tenth off the rate left it over the limit (an
 * account of 10 a second on 4 workers: an overshoot every 20 s, 2 % 429s). Less accepted is
 * holds (429s no pace causes, before they are known), far under the limit: the rate is cut.
 */
const ACCEPTED_SHARE = 0.85;
const SETTLE_GROWTH = 1.02;
/**
 * A small account (under GENTLE_BELOW) grows back to this share of where it last overshot and
 * waits there for the quiet spell: each of its overshoots' 429s is a large share of its calls
 * (probing on, an account of 2 a second met its limit every 20-40 s: 2 % 429s).
 */
const PLATEAU_SHARE = 0.98;
/**
 * This overshoot of a slow start ends it: however few 429s and whatever was accepted, the limit
 * was met that many times (see overshoot). At the fourth or fifth, 10 % noise that cut the rate
 * to 1-2 a second at its first calls ended it there, and the fleet learned the noise 25 s later
 * (simulated, 20 a second: 0.46 -> 0.20 of the clean account).
 */
const SLOW_START_CUTS = 6;
/**
 * Fewer calls a second than this accepted of the fleet at slow start's end tell too little of the
 * limit: the rate is then set no lower than halving would have, but no higher than 0.9 of this,
 * as the limit may be about that low. At half a rate far over it (2.85 a second on an account of
 * 2, one worker with one caller beside a busy one, relays of 800 ms) the calls right after the
 * hold went over the limit, and their 429s were learned as noise (bench pacing, the limit's own
 * 429s taken for noise: 1 run of 208).
 */
const FEW_ACCEPTED = 2;
/** An overshoot at a rate the API accepted at least this share of shows the limit (notePeak). */
const PEAK_ACCEPTED_SHARE = 0.9;
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
 * For this long after the floor is learned, a relayed hold holds but does not cut: a worker
 * learns the floor at its next grant (a report and its relay later) and relays its noise 429s
 * until then. One such hold ended the restarted slow start at 2 a second on an account of 20,
 * whose small-account plateau then held it there (simulated, 10 % noise: 0.10 of the clean account).
 */
const LEARNED_MS = LEASE_MS;
/**
 * The fleet's grid of slots runs this much over the rate (so the shares' spans fit in it), and
 * moves only when the rate leaves [grid ÷ GRID_ROOM², grid]: a grid that moved at every grant,
 * under the workers' schedules, let one worker's calls out faster than its share.
 */
const GRID_ROOM = 1.02;
/**
 * A small account's plateau goes by what the API accepted of the fleet over the reports of this
 * span before its overshoot, not by the last report's counts alone: a rate growing past the limit
 * is accepted whole until the limit's burst has drained, so the last counts show the rate that
 * met the 429, not where it passed the limit, and a plateau from them sat over the limit and met
 * it again and again (a limiter that charges a refused call, 4-10 a second on two and four
 * workers, 96 runs: 37 within both 0.95 of the limit and 1 % 429s; 63 from the span). Not across a
 * hold, nor in slow start, and only the reports at a rate within PEAK_STEADY_SHARE of the one that
 * overshot: across the quiet spell's growth (a tenth a second) the span counted far under the
 * limit, and the plateau ratcheted down (noise that stops, 5 a second, one worker: a quarter of 60
 * runs under 0.95 of the limit).
 */
const PEAK_SPAN_MS = 10_000;
const PEAK_STEADY_SHARE = 0.85;
/**
 * ... and only where the last counts show the fleet spending this share of its rate or more: then
 * they show the rate, not the limit. Under it they are under the rate already, and the workers'
 * uneven use of their shares (a worker with one caller) took the span's mean further under the
 * limit: an account of 2 a second on two real workers waited at a plateau of 1.84 (0.85 of its
 * limit). (In the simulation every table then did as well as the last counts alone or better, but
 * for one seed of noise that stops: 5 a second on two workers, 0.964 -> 0.870.)
 */
const PEAK_USED_SHARE = 0.95;
/**
 * ... and only from this rate (calls a second): under it a report counts under 9 calls over its
 * 3 s, the workers' uneven use of their shares takes the span's mean under the limit, and through
 * four real workers an account of 2 a second waited at a plateau of 1.81 from it (the last counts
 * showed 2.0; the account ran at 0.905 of its limit).
 */
const PEAK_SPAN_FROM = 3;

/** What is carried over a continue-as-new. */
export interface FleetPaceState extends FleetNoiseState {
  rate: number;
  slowStart: boolean;
  lastCutAt: number;
  cutFor: number;
  settling?: boolean;
  /** Overshoots met in this slow start (from the third, a limit of 2 a second is found). */
  slowStartCuts?: number;
  /** Where a small account last overshot (0 or absent: not since slow start). */
  peak?: number;
  /** The probe's speed, scaled to PROBE_BUDGET (absent: 1). */
  probeScale?: number;
  /**
   * The workers' leases and the grid. A run that started without them gave its first reporter the
   * whole rate and the others none until their next reports, on a grid of its own: four workers
   * on an account of 5 a second met a 429 and a second of next to nothing at every continue-as-new.
   */
  leases?: CarriedLease[];
  grid?: { rate: number; origin: number };
}

/**
 * A lease as carried: its worker's id beside it (no Infinity in JSON: a ceiling of none is left
 * out; a run of an older build carried no need).
 */
export type CarriedLease = Omit<Lease, 'maxRate' | 'need'> & { worker: string; maxRate?: number; need?: number };

/** At most this many leases are carried (a lease lasts LEASE_MS: one per worker reporting). */
const MAX_CARRIED_LEASES = 1000;

interface Lease {
  want: number;
  /** Its last PaceReport.need. */
  need: number;
  /** What its shares go by: its need, or the higher of its last two (STEADY_BELOW). */
  demand: number;
  accepted: number;
  limited: number;
  rate: number;
  until: number;
  maxRate: number;
  /** Its first report: its counts span less than LEASE_MS before LEASE_MS after it. */
  since: number;
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
  private readonly leases: Map<string, Lease>;
  private readonly noise: FleetNoiseFloor;
  /** Where a small account last overshot (calls a second; 0: not since slow start), see PLATEAU_SHARE. */
  private peak: number;
  /** The probe's speed (PROBE_BUDGET), and the fleet's answers since the last cut. */
  private probeScale: number;
  private cycle: Answers = NONE;
  /** The fleet's slots (PaceGrant.grid). */
  private grid = { rate: 0, origin: 0 };
  /** What the API accepted of the fleet at each report of the last PEAK_SPAN_MS, and the rate then (not carried over a continue-as-new). */
  private lately: Array<{ at: number; accepted: number; rate: number }> = [];

  /**
   * `heldUntil`: the account workflow's hold (epoch ms), which it carries over a continue-as-new
   * itself. A run that started without it took the last hold for none: a small account's quiet
   * spell, counted from a cut 100 s before, grew the rate a tenth a second from the end of a 30 s
   * Retry-After, and the 429 that met it cut to 0.6 of the limit.
   */
  constructor(state?: Partial<FleetPaceState>, heldUntil = 0) {
    this.noise = new FleetNoiseFloor(state);
    this.leases = carriedLeases(state?.leases);
    const grid = state?.grid;
    if (positive(grid?.rate) !== undefined && Number.isFinite(grid?.origin)) this.grid = { rate: grid!.rate, origin: grid!.origin };
    this.rate = positive(state?.rate) ?? INITIAL_RATE;
    this.slowStart = state?.slowStart ?? true;
    this.settling = state?.settling ?? false;
    this.slowStartCuts = Math.min(100, Math.floor(nonNegative(state?.slowStartCuts)));
    this.lastCutAt = state?.lastCutAt ?? 0;
    this.cutFor = state?.cutFor ?? 0;
    this.peak = nonNegative(state?.peak);
    this.probeScale = Math.min(1, Math.max(MIN_PROBE_SCALE, positive(state?.probeScale) ?? 1));
    this.heldUntil = positive(heldUntil) ?? 0;
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
      probeScale: this.probeScale,
      leases: [...this.leases].map(([worker, { maxRate, ...lease }]) => ({
        worker,
        ...lease,
        ...(Number.isFinite(maxRate) ? { maxRate } : {}),
      })),
      grid: { ...this.grid },
      ...this.noise.state(),
    };
  }

  /** The share of 429s no pace causes (0: none known), and how many answers it rests on. */
  noiseFloor(): { share: number; answers: number } {
    return this.noise.floor();
  }

  /** A worker's report: its share until its next one. */
  report(report: PaceReport, now: number): PaceGrant {
    this.expire(now);
    const ceiling = positive(report.maxRate) ?? Number.POSITIVE_INFINITY;
    const lease: Lease = this.leases.get(report.worker) ?? {
      want: 0,
      need: 0,
      demand: 0,
      accepted: 0,
      limited: 0,
      rate: 0,
      until: 0,
      maxRate: ceiling,
      since: now,
    };
    const want = nonNegative(report.want);
    const need = needOr(report.need, want);
    const steady = this.leases.has(report.worker) && this.rate < STEADY_BELOW * (this.leases.size || 1);
    lease.demand = steady ? Math.max(need, lease.need) : need;
    lease.want = want;
    lease.need = need;
    lease.accepted = nonNegative(report.accepted);
    lease.limited = nonNegative(report.limited);
    lease.maxRate = ceiling;
    lease.until = now + LEASE_MS;
    this.leases.set(report.worker, lease);
    this.lately.push({ at: now, accepted: this.total('accepted'), rate: this.rate });
    while (this.lately[0]!.at < now - PEAK_SPAN_MS) this.lately.shift();
    const sample = sampleOf(lease);
    this.cycle = { answers: this.cycle.answers + sample.answers, limited: this.cycle.limited + sample.limited };
    this.learnNoise(sample, freshOf(report.fresh), now);
    this.grow(now);
    this.rate = Math.min(this.rate, this.ceiling());
    const rate = Math.min(this.rate, this.noise.checkRate() ?? Number.POSITIVE_INFINITY);
    const others = [...this.leases].filter(([id]) => id !== report.worker).reduce((n, [, l]) => n + l.rate, 0);
    lease.rate = Math.max(0, Math.min(this.fairShare(report.worker, rate), rate - others));
    if (this.rate > this.grid.rate || this.rate * GRID_ROOM * GRID_ROOM < this.grid.rate)
      this.grid = { rate: this.rate * GRID_ROOM, origin: now };
    // This worker's span of the grid's slots starts where the shares of the workers before it end:
    // the spans add up to the rate, under the grid's, so no slot is two workers' among the spans of
    // one moment. A span granted earlier stays where the shares then put it until its worker reports,
    // so spans overlap between reports (fleet-slots.ts); laying them clear of each other did worse in
    // the simulation (docs/benchmarks.md, calls at once).
    const before = [...this.leases].filter(([id]) => id < report.worker).reduce((n, [, l]) => n + l.rate, 0);
    return {
      rate: lease.rate,
      phase: (before / this.grid.rate) % 1,
      grid: { ...this.grid },
      accountRate: this.rate,
      slowStart: this.slowStart,
      noise: this.noise.floor(),
      freshShare: this.noise.freshShare(this.rate, this.slowStart),
    };
  }

  /**
   * A report's answers to the noise floor: a floor just learned restarts the search for the
   * limit, and a limit the fleet's answers show in the floor's margin is an overshoot.
   */
  private learnNoise(sample: Answers, fresh: Answers, now: number): void {
    if (this.noise.learn(sample, fresh, this.view(now))) this.restartSearch();
    // After the restart: a floor just learned is not checked at once (the rate the noise cut is no limit's).
    if (sample.answers > 0) this.noise.checkFloor(sample, this.view(now));
    const ceiling = this.noise.limitInNoise(sample, this.view(now));
    if (ceiling !== undefined) this.overshoot(now + REPORT_MS, now, ceiling);
  }

  private view(now: number): FleetView {
    return {
      now,
      rate: this.rate,
      want: this.total('want'),
      accepted: this.total('accepted'),
      limited: this.total('limited'),
      searching: this.slowStart || this.settling,
      heldUntil: this.heldUntil,
      lastCutAt: this.lastCutAt,
    };
  }

  /** A floor just learned: the noise made cuts no limit asked for, so the limit is searched for again from here. */
  private restartSearch(): void {
    this.slowStart = true;
    this.slowStartCuts = 0;
    this.settling = false;
    this.peak = 0;
    // The noise's 429s slowed the probe too.
    this.probeScale = 1;
  }

  /**
   * The fleet was told to hold until `holdEnd` (a 429 a worker took as the limit's): the rate is
   * over the limit. Once per overshoot; a long hold is the API holding the account, not the pace.
   */
  overshoot(holdEnd: number, now: number, ceiling = Number.POSITIVE_INFINITY): void {
    const heldBefore = this.heldUntil;
    this.heldUntil = Math.max(this.heldUntil, holdEnd);
    this.noise.held();
    if (holdEnd - now > LONG_HOLD_MS || holdEnd <= this.cutFor + SAME_OVERSHOOT_MS) return;
    if (now - this.noise.learnedAt < LEARNED_MS) return;
    this.cutFor = holdEnd;
    this.lastCutAt = now;
    this.lastIncreaseAt = now;
    // Not expired here: every worker's last report is what the API accepted of the fleet. Reports
    // come each second and expire the leases that ran out; an account workflow whose task waited
    // (four workers on two cores: 3 s) runs the holds before the reports queued behind them, and
    // with the leases gone by its clock an account of 20 a second ended slow start at 2.4 (the one
    // report left) and waited at that plateau for its quiet spell.
    const before = this.rate;
    // Calls refused as noise did not use the limit.
    const accepted = this.total('accepted') / (1 - this.noise.floor().share);
    // Too few calls accepted to tell (a 429 on the first calls) halves and searches on; but from
    // the third overshoot of a slow start on, a call a second accepted with a third of the answers
    // 429 (more than noise may be: NOISE_CAP) is a limit found. An account of 2 a second accepts
    // under 2 a second, and halved at each overshoot its rate searched for good (two workers:
    // 4.6-5.4 % 429s; 37 % with their calls evenly spaced). Ending slow start at the second
    // overshoot whatever was accepted pinned a rate that 10 % noise cut at its first calls near
    // 1-2 a second, too low for the floor ever to be learned. And the sixth ends it whatever was
    // accepted (SLOW_START_CUTS): an account of 2 a second on one worker, relays of 0.4 s, met each
    // overshoot with one 429 and a hold, accepted 1.3-1.7 a second and searched for good (20 %
    // 429s in the simulation); four workers and a limiter that charges a refused call accepted
    // under one a second, each burst after a hold emptying the bucket, and searched for 38 s (26 %;
    // tracking polls due by their cadence, tried 2026-12-05).
    const limited = this.total('limited');
    const shown = accepted >= FEW_ACCEPTED || (this.slowStartCuts >= 2 && accepted >= 1 && limited >= (accepted + limited) / 3);
    const repeated = !shown && this.slowStartCuts >= SLOW_START_CUTS - 1;
    const found = shown || repeated;
    if (this.slowStart) this.slowStartCuts++;
    const wasSlowStart = this.slowStart;
    const endsSlowStart = this.slowStart && found;
    const wasSettling = this.settling;
    // Every worker's counts span a whole lease and no hold: what the API accepted of a rate let run.
    const steady = this.countedFully(now) && now - LEASE_MS >= heldBefore;
    if (endsSlowStart) {
      this.slowStart = false;
      this.settling = true;
      // Under FEW_ACCEPTED, no lower than halving would have set it, nor higher than 0.9 of it.
      const floor = accepted >= FEW_ACCEPTED ? 0 : Math.min(this.rate / 2, FEW_ACCEPTED);
      this.rate = Math.max(MIN_RATE, 0.9 * Math.min(this.rate, Math.max(accepted, floor)));
    } else if (this.slowStart) {
      this.rate = Math.max(MIN_RATE, this.rate * 0.5);
    } else {
      // (Not from what the API accepted over a window with holds in it: that is far below the
      // limit, and 429s no pace causes cut the rate to nothing before they were learned.)
      // Settling's overshoot over steady counts found the limit: cut from under the 0.85 that
      // cuts from what was accepted (2 a second, 2 accepted at 2.38: 2.14 left met it twice more).
      if (!this.settling) this.scaleProbe(before);
      this.settling = false;
      const from =
        accepted >= ACCEPTED_SHARE * before
          ? Math.min(this.rate, accepted)
          : wasSettling && steady
            ? Math.min(this.rate, ACCEPTED_SHARE * before)
            : this.rate;
      this.rate = Math.max(MIN_RATE, Math.min(from * 0.9, ceiling));
    }
    this.cycle = NONE;
    // Slow start's end takes a plateau only from steady counts: over a hold, or over holds
    // (repeated), they are far under the limit (an account of 5 a second whose shipments reached
    // tracking one by one counted 4.33 over the hold before, and its plateau held it at 4.25 for
    // the 90 s quiet spell, at 3 in one CI run; 2 a second at 0.73). Settling's first overshoot
    // over steady counts shows the limit in them.
    const shows = endsSlowStart || (wasSettling && steady);
    const peakAccepted =
      accepted >= PEAK_USED_SHARE * before && before >= PEAK_SPAN_FROM
        ? Math.min(accepted, this.acceptedOverSpan(now, before, heldBefore, wasSlowStart) / (1 - this.noise.floor().share))
        : accepted;
    if (!this.slowStart && (!endsSlowStart || (steady && !repeated))) this.notePeak(before, peakAccepted, shows);
    else this.peak = 0;
    // Every share shrinks with it (each worker also slows by itself when the hold reaches it).
    const scale = this.rate / Math.max(this.rate, this.total('rate'));
    for (const lease of this.leases.values()) lease.rate *= scale;
  }

  /**
   * What the API accepted of the fleet a second over the reports of PEAK_SPAN_MS before an
   * overshoot at `rate`, if they were made with no hold among them, past slow start, and at a rate
   * within PEAK_STEADY_SHARE of it; infinity if not.
   */
  private acceptedOverSpan(now: number, rate: number, heldBefore: number, slowStart: boolean): number {
    if (slowStart || now - PEAK_SPAN_MS < heldBefore) return Number.POSITIVE_INFINITY;
    let sum = 0;
    let count = 0;
    let from = now;
    for (let i = this.lately.length - 1; i >= 0 && this.lately[i]!.rate >= PEAK_STEADY_SHARE * rate; i--) {
      sum += this.lately[i]!.accepted;
      count++;
      from = this.lately[i]!.at;
    }
    // Reports come each second: the first of the span may be a report or two into it.
    return count > 0 && now - from >= PEAK_SPAN_MS - 2 * REPORT_MS ? sum / count : Number.POSITIVE_INFINITY;
  }

  /**
   * A probing cycle's 429s, over PROBE_BUDGET, slow the next one's probe (fewer speed it up),
   * straight to the budget: slowed by half at most a cycle, four workers with a limiter charging
   * refused calls met 10-12 a second three times in 75 s (1-1.6 % 429s). Not a small account's:
   * its probe is gentle already (PROBE_CALLS) and waits at its plateau, and slower it was further
   * under the limit (2-5 a second, 4 workers: 0.93-0.95).
   */
  private scaleProbe(before: number): void {
    // Beside 429s no pace causes, the limit's hide among them: the floor's own margin rules (limitInNoise).
    if (before < GENTLE_BELOW || this.cycle.answers < PROBE_CYCLE_ANSWERS || this.noise.floor().share > 0) return;
    const share = this.cycle.limited / this.cycle.answers;
    const ratio = Math.min(2, PROBE_BUDGET / Math.max(share, PROBE_BUDGET / 2));
    this.probeScale = Math.min(1, Math.max(MIN_PROBE_SCALE, this.probeScale * ratio));
  }

  /**
   * A small account's overshoot (outside slow start) sets where it waits (PLATEAU_SHARE): no
   * higher than the API accepted (settling ran 10 s past an account of 2 a second, within its
   * burst). Only an overshoot that shows the limit: slow start's end or settling's (from steady
   * counts, see overshoot), growth past the last one, or a rate the API accepted nearly all of,
   * PEAK_ACCEPTED_SHARE (under 429s no pace causes, holds leave far less accepted, and a plateau
   * under that ratcheted the rate down: bench noise row 0.71 -> 0.57; a rate a few percent over a
   * small limit runs for many seconds on its burst, the API accepting 0.94 of it, and at 0.95 four
   * workers on an account of 2 a second probed past it: 0.68 % 429s).
   * Growth past the last overshoot (the quiet spell's, a tenth a second) is cut to under what
   * the API accepted: cut by a tenth at a time, it met the limit five times over (2 a second).
   * After slow start's end (there settling was just set), an overshoot's plateau is no lower than
   * half the rate it met, as a cut is no deeper than halving: a charging limiter's deficit let
   * 0.33 a second of an account of 2 through, and the plateau from it held the rate at 0.30.
   */
  private notePeak(before: number, accepted: number, shows: boolean): void {
    const grewPast = this.peak > 0 && before > this.peak;
    const limits = shows || grewPast || accepted >= PEAK_ACCEPTED_SHARE * before;
    const floor = this.settling ? 0 : before / 2;
    this.peak = before < GENTLE_BELOW && limits ? Math.min(before, Math.max(accepted, floor)) : 0;
    if (grewPast && this.peak > 0) this.rate = Math.max(MIN_RATE, Math.min(this.rate, 0.9 * this.peak));
  }

  /** While the fleet wants more than the rate, it grows (once a second). */
  private grow(now: number): void {
    if (now - this.lastIncreaseAt < REPORT_MS || now < this.heldUntil) return;
    const want = this.total('want');
    if (want <= this.rate) return;
    this.lastIncreaseAt = now;
    const gentle = Math.min(1, (0.1 * this.rate) / (PROBE_CALLS * PROBE_SHARE));
    // A hold is no room found: the quiet spell counts from its end.
    const quiet = now - Math.max(this.lastCutAt, this.heldUntil) >= (this.rate < GENTLE_BELOW ? SMALL_QUIET_MS : QUIET_MS);
    const scale = this.rate < GENTLE_BELOW ? 1 : this.probeScale;
    const probe = this.rate + scale * Math.max(MIN_PROBE, this.rate * PROBE_SHARE * gentle);
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

  /**
   * Water-filling by need: the workers that need less than an equal share get it; the rest share
   * what is left evenly. What the needs leave goes to the workers whose calls wait (their want over
   * their need), then evenly, as headroom for demand that grows before the next report: spread
   * evenly at once, it gave a worker a share over what it sends, within whose 90 % its calls after
   * a hold counted as fresh while the fleet ran over the limit, and a charging limiter's 429s were
   * learned as noise (four workers at 6 and 10 a second, varied timings: 3 of 96 runs).
   */
  private fairShare(worker: string, rate: number): number {
    const needs = waterFill(
      rate,
      [...this.leases].map(([id, lease]) => [id, lease.demand]),
    );
    let left = rate - [...needs.values()].reduce((a, b) => a + b, 0);
    const more = waterFill(
      left,
      [...this.leases].map(([id, lease]) => [id, Math.max(0, lease.want - needs.get(id)!)]),
    );
    left -= [...more.values()].reduce((a, b) => a + b, 0);
    return needs.get(worker)! + more.get(worker)! + left / this.leases.size;
  }

  /** Every worker's counts span a whole lease. */
  private countedFully(now: number): boolean {
    for (const lease of this.leases.values()) if (now - lease.since < LEASE_MS) return false;
    return true;
  }

  private ceiling(): number {
    return Math.min(...[...this.leases.values()].map((l) => l.maxRate));
  }

  private expire(now: number): void {
    for (const [id, lease] of this.leases) if (lease.until <= now) this.leases.delete(id);
  }
}

/** Water-filling: each gets what it asks for when that is under an equal share of what is left. */
function waterFill(total: number, asks: Array<[string, number]>): Map<string, number> {
  const sorted = [...asks].sort(([, a], [, b]) => a - b);
  let left = total;
  let count = sorted.length;
  const got = new Map<string, number>();
  for (const [id, ask] of sorted) {
    const share = Math.min(ask, left / count);
    got.set(id, share);
    left -= share;
    count--;
  }
  return got;
}

/** A report's or carried lease's need; none that is a number (an older build's, or a malformed one): its want. */
function needOr(need: unknown, want: number): number {
  return typeof need === 'number' && Number.isFinite(need) ? nonNegative(need) : want;
}

/** The leases a run was started with; one that is not a lease is left out (the worker's next report makes it again). */
function carriedLeases(leases: unknown): Map<string, Lease> {
  const carried = new Map<string, Lease>();
  if (!Array.isArray(leases)) return carried;
  for (const l of leases.slice(0, MAX_CARRIED_LEASES) as Array<Partial<CarriedLease> | null>) {
    const worker = l?.worker;
    if (typeof worker !== 'string' || worker.length === 0 || worker.length > 200 || !Number.isFinite(l?.until)) continue;
    carried.set(worker, {
      want: nonNegative(l!.want),
      // A lease carried by an older build has no need: its shares went by its want.
      need: needOr(l!.need, nonNegative(l!.want)),
      demand: nonNegative(l!.demand),
      accepted: nonNegative(l!.accepted),
      limited: nonNegative(l!.limited),
      rate: nonNegative(l!.rate),
      until: l!.until!,
      maxRate: positive(l!.maxRate) ?? Number.POSITIVE_INFINITY,
      since: Number.isFinite(l!.since) ? l!.since! : l!.until!,
    });
  }
  return carried;
}

function positive(n: unknown): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
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
