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
 *   (fleet-plateau.ts), and climbs back at settling's speed to a rate it held 20 s before an
 *   overshoot that grew past it. After a minute without an overshoot while calls wait (a minute
 *   and a half under 10 a second) it grows by a tenth a second again, so a limit that rises is
 *   found.
 * - **Shares** (fleet-leases.ts) go by demand (water-filling): each worker reports the calls a
 *   second it would send (those it sent over its last report's period and those waiting now;
 *   under a call a second per worker, the higher of its last two reports' counts; none once the
 *   single call it began reporting for is sent); a worker that needs less than an equal share
 *   gets what it needs, the rest is split among the others. A share is a lease of LEASE_MS: a
 *   worker that stops reporting leaves its share to the others, and a new grant never makes the
 *   leases out exceed the rate (a worker whose share shrinks gives it up at its next report,
 *   within REPORT_MS, and the worker whose share grows takes it at its own).
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
import { FleetLeases, type CarriedLease, type Lease } from './fleet-leases';
import { GENTLE_BELOW, SmallAccountPlateau } from './fleet-plateau';
import { FleetNoiseFloor, NONE, nonNegative, positive, type FleetNoiseState, type FleetView } from './fleet-noise-floor';
import type { Answers } from './noise-floor';

export { LEASE_MS, REPORT_MS };
export type { CarriedLease, PaceGrant, PaceReport };

/** The account's rate before anything is known (the whole fleet's, calls a second). */
export const INITIAL_RATE = 5;
/** The slowest the account is paced. */
export const MIN_RATE = 0.25;
/** Holds ending within this of each other answer one overshoot (a Retry-After is whole seconds). */
const SAME_OVERSHOOT_MS = 2000;
/**
 * No overshoot for this long while calls wait for the rate: it grows faster again. Only time with
 * calls waiting counts: a fleet idle for a minute beside a rate the limit refused had found no
 * room, and grew a tenth a second from it when work came back (the rate-limit bench's second
 * batch: 27 to 36 a second on an account of 20, its 429s hidden in a noise floor of 0.12).
 */
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
/**
 * An overshoot while probing cuts from what the API accepted of the fleet when that is at least
 * this share of the rate (no hold among the counts): a limit's burst lets the rate run about a
 * tenth over it before the first 429, and a tenth off the rate left it over the limit (an
 * account of 10 a second on 4 workers: an overshoot every 20 s, 2 % 429s). Less accepted is
 * holds (429s no pace causes, before they are known), far under the limit: the rate is cut.
 */
const ACCEPTED_SHARE = 0.85;
const SETTLE_GROWTH = 1.02;
/** Slow start's growth, each second calls wait for the rate. */
const SLOW_START_GROWTH = 1.5;
/** Slow start ends at this share of what the API accepted of the fleet (and where that is read again: STALE_SHARE). */
const END_SHARE = 0.9;
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
/**
 * Slow start ended on counts under this share of the step before the one that overshot is read
 * again from the reports of the next LEASE_MS (REREAD_MS): reports come a second apart and reach
 * the fleet a relay later, so counts of the seconds before are under what the step before was
 * let send. A busy worker whose first grant came late (every worker but it with one caller)
 * reported 1 accepted a second while the API accepted 9, and slow start ended at 2.25 on an
 * account of 5, then settled 2 % a second for 40 s (bench pacing, one caller on each worker but
 * the first: 0.86-0.88 of the limit at 5 a second on four workers). Not from counts over it: the
 * next reports hold the limit's burst, and read again they set a ramp's rate over the limit,
 * whose 429s right after the holds were learned as noise (8 a second on four workers, charged:
 * 15.7 % 429s).
 */
const STALE_SHARE = 0.5;
const REREAD_MS = LEASE_MS;
/**
 * An overshoot past a quiet spell of this long (calls waiting, no hold) over steady counts shows
 * the limit to the noise floor's known-good pace (FleetNoiseFloor.limitShown): noise not yet
 * known holds the fleet every few seconds, so it never shows one (told at every steady overshoot,
 * the noise row's lower quartile at 20 a second fell from 0.65 of the clean account to 0.55).
 */
const SHOWS_LIMIT_MS = 20_000;
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
 * A small account's overshoot from this rate on (and under GENTLE_BELOW) sets its plateau no higher
 * than what the API accepted of the fleet since the last cut: a token bucket is empty at both
 * overshoots, so what it accepted between them is at most its limit, whatever its burst, where the
 * last counts may hold the burst a rate over the limit drained (a charging limiter, four workers,
 * 6 a second: a plateau read from them met the limit again and again, 1.35 % 429s). Only over at
 * least MIN_SINCE_CUT_MS, calls waiting for the rate most of it (SINCE_CUT_PRESSED), the fleet
 * sending most of the rate (SINCE_CUT_SENT: else it counts what a worker with one caller left
 * unused) and no noise floor known (its checks hold the rate under the limit: noise that stops
 * left 0.73 of an account of 5). Not under 6 a second: the hold and the cut's climb back weigh more
 * there, and at 3-5 a second more runs of bench pacing's stress tables sat under 0.95 of the limit.
 */
const SINCE_CUT_FROM = 6;
const MIN_SINCE_CUT_MS = 10_000;
const SINCE_CUT_PRESSED = 0.7;
const SINCE_CUT_SENT = 0.8;

/** An overshoot as read when it comes (FleetPace.readOvershoot). */
interface OvershootRead {
  /** The rate that met the limit. */
  before: number;
  /** What the API accepted of the fleet a second by every worker's last report, calls refused as noise counted in. */
  accepted: number;
  /** What the API accepted when a floor this search refutes was learned (0: none). */
  learnedAccepted: number;
  noiseShare: number;
  /** The rate was in slow start. */
  slowStart: boolean;
  /** The rate was settling after slow start's end. */
  settling: boolean;
  /** Every worker's counts span a whole lease and no hold. */
  steady: boolean;
  /** The end of the hold before this overshoot's. */
  heldBefore: number;
  /** How long calls waited for the rate since that hold. */
  pressedMs: number;
  /** What the API accepted of the fleet a second since the last cut, where that shows the limit. */
  sinceCut: number | undefined;
}

/** How an overshoot in slow start ended it, if it did; `repeated`: by SLOW_START_CUTS alone. */
interface SlowStartEnd {
  ends: boolean;
  repeated: boolean;
}
const NOT_ENDED: Readonly<SlowStartEnd> = { ends: false, repeated: false };

/** What is carried over a continue-as-new. */
export interface FleetPaceState extends FleetNoiseState {
  rate: number;
  slowStart: boolean;
  lastCutAt: number;
  cutFor: number;
  settling?: boolean;
  /** Overshoots met in this slow start (from the third, a limit of 2 a second is found). */
  slowStartCuts?: number;
  /** Where a small account last overshot (0 or absent: not since slow start), and the noise floor it was read beside. */
  peak?: number;
  peakNoise?: number;
  /** The probe's speed, scaled to PROBE_BUDGET (absent: 1). */
  probeScale?: number;
  /** How long calls waited for the rate since the last hold (the quiet spell; absent: 0). */
  pressedMs?: number;
  /**
   * The workers' leases and the grid. A run that started without them gave its first reporter the
   * whole rate and the others none until their next reports, on a grid of its own: four workers
   * on an account of 5 a second met a 429 and a second of next to nothing at every continue-as-new.
   */
  leases?: CarriedLease[];
  grid?: { rate: number; origin: number };
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
  /**
   * Until when slow start's end is read again (STALE_SHARE), and the most the API accepted of the
   * fleet as read so far; null: not read again. Not carried over a continue-as-new: it lasts a lease.
   */
  private reread: { until: number; accepted: number } | null = null;
  private lastIncreaseAt = 0;
  private lastCutAt: number;
  /** How long calls waited for the rate since the last hold, and the last report that found them waiting (0: none). */
  private pressedMs: number;
  private pressedAt = 0;
  /** The end of the hold of the overshoot last cut for. */
  private cutFor: number;
  /** The account is held until then: calls wait for the hold, not for the rate. */
  private heldUntil = 0;
  private readonly leases: FleetLeases;
  private readonly noise: FleetNoiseFloor;
  /** Where a small account waits for its quiet spell (fleet-plateau.ts). */
  private readonly plateau: SmallAccountPlateau;
  /** The probe's speed (PROBE_BUDGET), and the fleet's answers since the last cut. */
  private probeScale: number;
  private cycle: Answers = NONE;
  /** A noise floor was known during the cycle: its 429s are among the cycle's. */
  private cycleNoisy = false;
  /**
   * The calls the API accepted of the fleet since the last cut, and those it answered (its leases'
   * rates over the time between reports, so a late report counts its time); whether a cut of this
   * run began the count (a run continued as new counts from no cut); the last report counted.
   */
  private acceptedSinceCut = 0;
  private sentSinceCut = 0;
  private countedSinceCut = false;
  private countedAt = 0;
  /** The fleet's slots (PaceGrant.grid). */
  private grid = { rate: 0, origin: 0 };

  /**
   * `heldUntil`: the account workflow's hold (epoch ms), which it carries over a continue-as-new
   * itself. A run that started without it took the last hold for none: a small account's quiet
   * spell, counted from a cut 100 s before, grew the rate a tenth a second from the end of a 30 s
   * Retry-After, and the 429 that met it cut to 0.6 of the limit.
   */
  constructor(state?: Partial<FleetPaceState>, heldUntil = 0) {
    this.noise = new FleetNoiseFloor(state);
    this.leases = new FleetLeases(state?.leases);
    const grid = state?.grid;
    if (positive(grid?.rate) !== undefined && Number.isFinite(grid?.origin)) this.grid = { rate: grid!.rate, origin: grid!.origin };
    this.rate = positive(state?.rate) ?? INITIAL_RATE;
    this.slowStart = state?.slowStart ?? true;
    this.settling = state?.settling ?? false;
    this.slowStartCuts = Math.min(100, Math.floor(nonNegative(state?.slowStartCuts)));
    this.lastCutAt = state?.lastCutAt ?? 0;
    this.pressedMs = nonNegative(state?.pressedMs);
    this.cutFor = state?.cutFor ?? 0;
    this.plateau = new SmallAccountPlateau(state?.peak, state?.peakNoise);
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
      peak: this.plateau.peak,
      peakNoise: this.plateau.peakNoise,
      probeScale: this.probeScale,
      pressedMs: this.pressedMs,
      leases: this.leases.carried(),
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
    this.leases.expire(now);
    const lease = this.leases.renew(report, now, this.rate);
    this.plateau.record(now, this.leases.total('accepted'), this.rate);
    this.countSinceCut(now);
    const sample = sampleOf(lease);
    this.cycle = { answers: this.cycle.answers + sample.answers, limited: this.cycle.limited + sample.limited };
    this.cycleNoisy ||= this.noise.floor().share > 0;
    this.learnNoise(sample, freshOf(report.fresh), now);
    this.plateau.noiseFloor(this.noise.floor().share);
    this.press(now);
    this.readEndAgain(now);
    this.grow(now);
    this.rate = Math.min(this.rate, this.leases.ceiling());
    const rate = Math.min(this.rate, this.noise.checkRate() ?? Number.POSITIVE_INFINITY);
    const share = this.leases.grant(report.worker, rate);
    if (this.rate > this.grid.rate || this.rate * GRID_ROOM * GRID_ROOM < this.grid.rate)
      this.grid = { rate: this.rate * GRID_ROOM, origin: now };
    // This worker's span of the grid's slots starts where the shares of the workers before it end:
    // the spans add up to the rate, under the grid's, so no slot is two workers' among the spans of
    // one moment. A span granted earlier stays where the shares then put it until its worker reports,
    // so spans overlap between reports (fleet-slots.ts); laying them clear of each other did worse in
    // the simulation (docs/benchmarks.md, calls at once).
    const before = this.leases.before(report.worker);
    return {
      rate: share,
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
      want: this.leases.total('want'),
      accepted: this.leases.total('accepted'),
      limited: this.leases.total('limited'),
      searching: this.slowStart || this.settling,
      heldUntil: this.heldUntil,
      lastCutAt: this.lastCutAt,
      countedFully: this.leases.countedFully(now),
    };
  }

  /**
   * A floor just learned: the noise made cuts no limit asked for, so the limit is searched for
   * again; where the floor is the first thing found, from no lower than slow start's next step over
   * the most the API accepted of the fleet lately (FleetNoiseFloor.restartFrom): the noise had cut
   * the rate under that (to 0.15-0.2 of an account of 20 a second), and slow start from there took
   * 5 s to come back (bench pacing's noise row over 120 seeds, with the young floor's checks at
   * what the noise refused added back: 0.786 -> 0.807 of the clean account at 20 a second, 0.814 ->
   * 0.805 at 5, where the limit is met a step sooner).
   */
  private restartSearch(): void {
    this.slowStart = true;
    this.slowStartCuts = 0;
    this.settling = false;
    this.plateau.forget();
    this.rate = Math.max(this.rate, SLOW_START_GROWTH * this.noise.restartFrom);
    // The noise's 429s slowed the probe too.
    this.probeScale = 1;
  }

  /**
   * The fleet was told to hold until `holdEnd` (a 429 a worker took as the limit's): the rate is
   * over the limit. Once per overshoot; a long hold is the API holding the account, not the pace.
   */
  overshoot(holdEnd: number, now: number, ceiling = Number.POSITIVE_INFINITY): void {
    const heldBefore = this.heldUntil;
    const pressedMs = this.hold(holdEnd);
    if (holdEnd - now > LONG_HOLD_MS || holdEnd <= this.cutFor + SAME_OVERSHOOT_MS) return;
    if (now - this.noise.learnedAt < LEARNED_MS) return;
    const read = this.readOvershoot(holdEnd, now, heldBefore, pressedMs);
    let ended: Readonly<SlowStartEnd> = NOT_ENDED;
    if (read.slowStart) ended = this.endSlowStartAt(read, now);
    else this.cutPastSlowStart(read, now, ceiling);
    this.cycle = NONE;
    this.cycleNoisy = false;
    this.acceptedSinceCut = 0;
    this.sentSinceCut = 0;
    this.countedSinceCut = true;
    this.placePlateau(read, ended, now);
    // Every share shrinks with it (each worker also slows by itself when the hold reaches it).
    this.leases.fit(this.rate);
  }

  /** The fleet holds until `holdEnd`; how long calls had waited for the rate (the quiet spell counts anew after a hold). */
  private hold(holdEnd: number): number {
    this.heldUntil = Math.max(this.heldUntil, holdEnd);
    this.noise.held();
    const pressedMs = this.pressedMs;
    this.pressedMs = 0;
    this.pressedAt = 0;
    return pressedMs;
  }

  /** What an overshoot is read from (the rate that met the limit and what the API accepted of it); the cut's time marked. */
  private readOvershoot(holdEnd: number, now: number, heldBefore: number, pressedMs: number): OvershootRead {
    this.cutFor = holdEnd;
    const sinceCut = this.acceptedSinceLastCut(now, pressedMs);
    this.lastCutAt = now;
    this.lastIncreaseAt = now;
    // Not expired here: every worker's last report is what the API accepted of the fleet. Reports
    // come each second and expire the leases that ran out; an account workflow whose task waited
    // (four workers on two cores: 3 s) runs the holds before the reports queued behind them, and
    // with the leases gone by its clock an account of 20 a second ended slow start at 2.4 (the one
    // report left) and waited at that plateau for its quiet spell.
    // The first overshoot of a search a floor restarted may show the floor was a limit's: then
    // what the API accepted when the floor was learned (0: not refuted).
    const learnedAccepted = this.slowStart && this.slowStartCuts === 0 ? this.noise.refuted(this.leases.total('accepted')) : 0;
    // Calls refused as noise did not use the limit.
    const noiseShare = this.noise.floor().share;
    return {
      before: this.rate,
      accepted: this.leases.total('accepted') / (1 - noiseShare),
      learnedAccepted,
      noiseShare,
      slowStart: this.slowStart,
      settling: this.settling,
      // Every worker's counts span a whole lease and no hold: what the API accepted of a rate let run.
      steady: this.leases.countedFully(now) && now - LEASE_MS >= heldBefore,
      heldBefore,
      pressedMs,
      sinceCut,
    };
  }

  /**
   * An overshoot in slow start. A refuted floor's search ends from no less than what the API
   * accepted when it was learned: its own counts are of the deficit its blind growth (no count
   * judged for 4.5 s after a cut) dug under a limiter charging refused calls. From them, 40 to 20 a
   * second on four workers ended slow start at 4.2-5.4 and settled 2 % a second for a minute
   * (0.80-0.88 of the new limit at four of five moments of the fall).
   */
  private endSlowStartAt(o: OvershootRead, now: number): SlowStartEnd {
    const read = Math.max(o.accepted, o.learnedAccepted);
    const ended = this.slowStartOvershoot(read);
    this.reread =
      ended.ends && !ended.repeated && read >= FEW_ACCEPTED && read < (STALE_SHARE * o.before) / SLOW_START_GROWTH
        ? { until: now + REREAD_MS, accepted: read }
        : null;
    return ended;
  }

  /** An overshoot past slow start: the limit shown, and the cut. */
  private cutPastSlowStart(o: OvershootRead, now: number, ceiling: number): void {
    this.reread = null;
    // The limit as the cut reads it from steady counts (see cut), no lower than ACCEPTED_SHARE of the rate.
    if (o.steady && o.pressedMs >= SHOWS_LIMIT_MS && o.noiseShare === 0)
      this.noise.limitShown(Math.max(o.accepted, ACCEPTED_SHARE * o.before), now);
    // Settling climbed through the limit's burst: what the API accepted over the 10 s before (see cut).
    const span = o.settling && o.steady && o.before >= GENTLE_BELOW ? this.plateau.steadyAccepted(now, o.before, o.heldBefore) : Infinity;
    this.cut(o.before, o.accepted, o.settling && o.steady, ceiling, span / (1 - o.noiseShare));
  }

  /**
   * A small account's plateau from the overshoot (fleet-plateau.ts). Slow start's end takes one
   * only from steady counts: over a hold, or over holds (repeated), they are far under the limit
   * (an account of 5 a second whose shipments reached tracking one by one counted 4.33 over the
   * hold before, and its plateau held it at 4.25 for the 90 s quiet spell, at 3 in one CI run; 2 a
   * second at 0.73). Settling's first overshoot over steady counts shows the limit in them.
   */
  private placePlateau(o: OvershootRead, ended: Readonly<SlowStartEnd>, now: number): void {
    if (this.slowStart || (ended.ends && (!o.steady || ended.repeated))) {
      this.plateau.forget();
      return;
    }
    const below = this.plateau.overshoot({
      now,
      rate: o.before,
      accepted: o.accepted,
      heldBefore: o.heldBefore,
      slowStart: o.slowStart,
      noiseShare: o.noiseShare,
      shows: ended.ends || (o.settling && o.steady),
      settling: this.settling,
      pressedMs: o.pressedMs,
      acceptedSinceCut: o.sinceCut,
    });
    if (below !== undefined) this.rate = Math.max(MIN_RATE, Math.min(this.rate, below));
  }

  /**
   * Slow start's end read again (STALE_SHARE): where the fleet's reports since show more accepted
   * than it went by, the rate is no lower than END_SHARE of that, as the end would have set it.
   */
  private readEndAgain(now: number): void {
    const read = this.reread;
    if (!read) return;
    if (now > read.until || !this.settling) {
      this.reread = null;
      return;
    }
    const accepted = this.leases.total('accepted') / (1 - this.noise.floor().share);
    if (accepted <= read.accepted) return;
    read.accepted = accepted;
    this.rate = Math.max(this.rate, END_SHARE * accepted);
  }

  /** The fleet's calls since the last cut: its leases' rates over the time since the last report. */
  private countSinceCut(now: number): void {
    const seconds = this.countedAt > 0 ? Math.min(now - this.countedAt, LEASE_MS) / 1000 : 0;
    const accepted = this.leases.total('accepted');
    this.acceptedSinceCut += accepted * seconds;
    this.sentSinceCut += (accepted + this.leases.total('limited')) * seconds;
    this.countedAt = now;
  }

  /**
   * What the API accepted of the fleet a second since the last cut, where that shows a small
   * account's limit (SINCE_CUT_FROM); undefined where it does not.
   */
  private acceptedSinceLastCut(now: number, pressedMs: number): number | undefined {
    const ms = now - this.lastCutAt;
    if (!this.countedSinceCut || this.slowStart || this.cycleNoisy || this.rate < SINCE_CUT_FROM || ms < MIN_SINCE_CUT_MS) return undefined;
    const sent = (1000 * this.sentSinceCut) / ms >= SINCE_CUT_SENT * this.rate;
    return pressedMs >= SINCE_CUT_PRESSED * ms && sent ? (1000 * this.acceptedSinceCut) / ms : undefined;
  }

  /**
   * An overshoot in slow start: one that found the limit ends it (0.9 of what the API accepted),
   * else the rate halves and the search goes on. `repeated`: ended by SLOW_START_CUTS alone.
   */
  private slowStartOvershoot(accepted: number): SlowStartEnd {
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
    const limited = this.leases.total('limited');
    const shown = accepted >= FEW_ACCEPTED || (this.slowStartCuts >= 2 && accepted >= 1 && limited >= (accepted + limited) / 3);
    const repeated = !shown && this.slowStartCuts >= SLOW_START_CUTS - 1;
    this.slowStartCuts++;
    if (!shown && !repeated) {
      this.rate = Math.max(MIN_RATE, this.rate * 0.5);
      return { ends: false, repeated };
    }
    this.slowStart = false;
    this.settling = true;
    // Under FEW_ACCEPTED, no lower than halving would have set it, nor higher than 0.9 of it.
    const floor = accepted >= FEW_ACCEPTED ? 0 : Math.min(this.rate / 2, FEW_ACCEPTED);
    this.rate = Math.max(MIN_RATE, END_SHARE * Math.min(this.rate, Math.max(accepted, floor)));
    return { ends: true, repeated };
  }

  /**
   * An overshoot past slow start cuts a tenth: off what the API accepted when that is most of the
   * rate (ACCEPTED_SHARE), off 0.85 of the rate where settling's counts were steady, else off the rate.
   * Settling's overshoot from GENTLE_BELOW on cuts off no more than `spanAccepted`, what the API
   * accepted over the steady 10 s before it (SmallAccountPlateau.steadyAccepted; no lower than
   * ACCEPTED_SHARE of the rate): settling grows 2 % a second through the limit's burst, all of it
   * accepted until the burst has drained, so its last counts read the rate that met the 429, not
   * the limit, and the cut left the rate over it (a limiter charging refused calls, four workers at
   * 10 a second: 1.06-1.08 % 429s; 0.67-0.80 % from the span, bench pacing).
   */
  private cut(before: number, accepted: number, settledSteady: boolean, ceiling: number, spanAccepted = Infinity): void {
    // (Not from what the API accepted over a window with holds in it: that is far below the
    // limit, and 429s no pace causes cut the rate to nothing before they were learned.)
    // Settling's overshoot over steady counts found the limit: cut from under the 0.85 that
    // cuts from what was accepted (2 a second, 2 accepted at 2.38: 2.14 left met it twice more).
    if (!this.settling) this.scaleProbe(before);
    this.settling = false;
    const from =
      accepted >= ACCEPTED_SHARE * before
        ? Math.min(this.rate, accepted, Math.max(spanAccepted, ACCEPTED_SHARE * before))
        : settledSteady
          ? Math.min(this.rate, ACCEPTED_SHARE * before)
          : this.rate;
    this.rate = Math.max(MIN_RATE, Math.min(from * 0.9, ceiling));
  }

  /**
   * A probing cycle's 429s, over PROBE_BUDGET, slow the next one's probe (fewer speed it up),
   * straight to the budget: slowed by half at most a cycle, four workers with a limiter charging
   * refused calls met 10-12 a second three times in 75 s (1-1.6 % 429s). Not a small account's:
   * its probe is gentle already (PROBE_CALLS) and waits at its plateau, and slower it was further
   * under the limit (2-5 a second, 4 workers: 0.93-0.95).
   */
  private scaleProbe(before: number): void {
    // Beside 429s no pace causes, the limit's hide among them: the floor's own margin rules
    // (limitInNoise). So in a cycle that had a floor, gone by its end: its 429s counted the noise's.
    if (before < GENTLE_BELOW || this.cycle.answers < PROBE_CYCLE_ANSWERS || this.cycleNoisy || this.noise.floor().share > 0) return;
    const share = this.cycle.limited / this.cycle.answers;
    const ratio = Math.min(2, PROBE_BUDGET / Math.max(share, PROBE_BUDGET / 2));
    this.probeScale = Math.min(1, Math.max(MIN_PROBE_SCALE, this.probeScale * ratio));
  }

  /** Counts the time calls wait for the rate (reports a lease apart at most; a held account's calls wait for the hold). */
  private press(now: number): void {
    const pressed = now >= this.heldUntil && this.leases.total('want') > this.rate;
    if (pressed && this.pressedAt > 0) this.pressedMs += Math.min(now - this.pressedAt, LEASE_MS);
    this.pressedAt = pressed ? now : 0;
  }

  /** While the fleet wants more than the rate, it grows (once a second). */
  private grow(now: number): void {
    if (now - this.lastIncreaseAt < REPORT_MS || now < this.heldUntil) return;
    // Nor fast while a check holds the shares under the rate: it would grow blind (slow start from
    // 40 to 60 a second on an account of 20 during one, a quiet spell to twice an account of 5).
    const checking = this.noise.checkRate() !== undefined;
    if (checking && (this.slowStart || this.settling)) return;
    const want = this.leases.total('want');
    if (want <= this.rate) return;
    this.lastIncreaseAt = now;
    const gentle = Math.min(1, (0.1 * this.rate) / (PROBE_CALLS * PROBE_SHARE));
    // Not beside more 429s than a known floor explains: those are the limit's, which no worker relays.
    const quiet =
      !checking && this.pressedMs >= (this.rate < GENTLE_BELOW ? SMALL_QUIET_MS : QUIET_MS) && !this.noise.crowded(this.view(now));
    const scale = this.rate < GENTLE_BELOW ? 1 : this.probeScale;
    const probe = this.rate + scale * Math.max(MIN_PROBE, this.rate * PROBE_SHARE * gentle);
    // A small account probes up to just under its last overshoot, and no further before the quiet spell.
    const plateau = this.plateau.ceiling(this.rate);
    // Back to a rate it held before growing past it, at settling's speed (fleet-plateau.ts, KEPT_MS).
    const back = Math.min(this.rate * SETTLE_GROWTH, this.plateau.kept);
    if (this.slowStart) this.rate *= SLOW_START_GROWTH;
    else if (quiet) this.rate *= 1.1;
    else this.rate = Math.max(this.rate, Math.min(this.settling ? this.rate * SETTLE_GROWTH : Math.max(probe, back), plateau));
  }
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
