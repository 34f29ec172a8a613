/**
 * A small account's plateau (under GENTLE_BELOW calls a second): after an overshoot that shows
 * its limit, the account's rate (fleet-pace.ts) grows back to just under where it overshot and
 * waits there for its quiet spell, as each overshoot's 429s are a large share of its few calls.
 * Where it overshot is what the API accepted of the fleet, over the 10 s before the overshoot
 * where those show it. Pure and deterministic: the account workflow runs it.
 */
import { REPORT_MS } from '../workflow-definitions/account';
import { nonNegative } from './fleet-noise-floor';

/** A small account: its probe waits at a plateau, and its quiet spell is longer. */
export const GENTLE_BELOW = 10;
/**
 * A small account (under GENTLE_BELOW) grows back to this share of where it last overshot and
 * waits there for the quiet spell: each of its overshoots' 429s is a large share of its calls
 * (probing on, an account of 2 a second met its limit every 20-40 s: 2 % 429s).
 */
const PLATEAU_SHARE = 0.98;
/** An overshoot at a rate the API accepted at least this share of shows the limit (overshoot). */
const PEAK_ACCEPTED_SHARE = 0.9;
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
/**
 * A rate the fleet held this long with calls waiting and no 429 is one the limit allows. An
 * overshoot that came of growing past it (the quiet spell's tenth a second, the probe) lets a
 * small account come back to it at settling's speed after the cut, not the probe's: at 2-5 a
 * second the probe took 30-60 s to climb the tenth the cut took (the accounts bench: a5 at 0.92
 * of its limit for a window, from 4.44 to 4.8 a second). At 20 s, over `npm run bench:pacing`'s
 * varied timings and ramps, the runs under 0.95 of the limit went 11 -> 1 and 81 -> 65, those
 * over 1 % 429s 29 -> 30 and 63 -> 65. Nor is the plateau such an overshoot sets lower than it:
 * read from the last counts, it held an account of 2 a second at 1.63 after 200 s at 1.96 with no
 * 429 (two real workers, a quiet spell's overshoot; the counts read 5 calls over 3 s).
 */
const KEPT_MS = 20_000;
/** ... and only past it by this much: an overshoot at the rate it held is no sign that rate was safe. */
const KEPT_PAST = 1.02;

/** An overshoot as the plateau reads it. */
export interface PlateauOvershoot {
  now: number;
  /** The account's rate that overshot. */
  rate: number;
  /** What the API accepted of the fleet a second by every worker's last report, noise refused included. */
  accepted: number;
  /** The end of the hold before this overshoot's. */
  heldBefore: number;
  /** The rate was in slow start. */
  slowStart: boolean;
  /** The share of 429s no pace causes (0: none known). */
  noiseShare: number;
  /** The overshoot shows the limit: slow start's end, or settling's over steady counts. */
  shows: boolean;
  /** The rate settles after this overshoot (slow start just ended). */
  settling: boolean;
  /** How long calls waited for the rate since the hold before this overshoot (the quiet spell's count). */
  pressedMs: number;
  /** What the API accepted of the fleet a second since the last cut, where that shows the limit (fleet-pace.ts, SINCE_CUT_FROM). */
  acceptedSinceCut?: number;
}

export class SmallAccountPlateau {
  /** Where the account last overshot (calls a second; 0: not since slow start), carried over a continue-as-new. */
  peak: number;
  /** The noise floor the peak was read beside (its calls the noise refused counted in), carried with it. */
  peakNoise: number | undefined;
  /**
   * What the API accepted of the fleet at each report of the last KEPT_MS (PEAK_SPAN_MS of them for
   * the plateau), and the rate then (not carried over a continue-as-new).
   */
  private lately: Array<{ at: number; accepted: number; rate: number }> = [];
  /** The rate held KEPT_MS before the last overshoot grew past it (0: none): the rate comes back to it at settling's speed. */
  kept = 0;

  constructor(peak?: unknown, peakNoise?: unknown) {
    this.peak = nonNegative(peak);
    // Absent (a run of an older build): read beside the floor the next report finds.
    const noise = typeof peakNoise === 'number' && peakNoise >= 0 && peakNoise < 1 ? peakNoise : undefined;
    this.peakNoise = this.peak > 0 ? noise : undefined;
  }

  /** A report: what the API accepted of the fleet a second, and the account's rate then. */
  record(now: number, accepted: number, rate: number): void {
    this.lately.push({ at: now, accepted, rate });
    while (this.lately[0]!.at < now - KEPT_MS - 2 * REPORT_MS) this.lately.shift();
  }

  /** The search for the limit starts again (slow start): no plateau. */
  forget(): void {
    this.peak = 0;
    this.peakNoise = undefined;
    this.kept = 0;
  }

  /**
   * The noise floor now: a peak read beside a lower one took the calls the noise refused for the
   * limit's, so it rises with the floor (a young floor of 0.04 from 2 fresh 429s of 24, 10 %
   * noise: an account of 5 a second waited at 4.1 until its quiet spell once the floor had grown
   * to 0.12; bench pacing's noise row at 5 a second 0.805 -> 0.811 of the clean account over 120
   * seeds). Not down with it: a floor that falls is noise that fell, and the peak was read while
   * it lasted.
   */
  noiseFloor(share: number): void {
    if (this.peak <= 0) return;
    if (this.peakNoise !== undefined && share > this.peakNoise) this.peak = (this.peak * (1 - this.peakNoise)) / (1 - share);
    this.peakNoise = Math.max(this.peakNoise ?? 0, share);
  }

  /** The most a rate of `rate` grows to before its quiet spell (infinity: no plateau). */
  ceiling(rate: number): number {
    return this.peak > 0 && rate < GENTLE_BELOW ? PLATEAU_SHARE * this.peak : Number.POSITIVE_INFINITY;
  }

  /**
   * A small account's overshoot (outside slow start) at `rate` sets where it waits (PLATEAU_SHARE): no
   * higher than the API accepted (settling ran 10 s past an account of 2 a second, within its
   * burst). Only an overshoot that shows the limit (`shows`: slow start's end or settling's from
   * steady counts, fleet-pace.ts), growth past the last one, or a rate the API accepted nearly all of,
   * PEAK_ACCEPTED_SHARE (under 429s no pace causes, holds leave far less accepted, and a plateau
   * under that ratcheted the rate down: bench noise row 0.71 -> 0.57; a rate a few percent over a
   * small limit runs for many seconds on its burst, the API accepting 0.94 of it, and at 0.95 four
   * workers on an account of 2 a second probed past it: 0.68 % 429s).
   * Growth past the last overshoot (the quiet spell's, a tenth a second) is cut to under what
   * the API accepted (the rate returned): cut by a tenth at a time, it met the limit five times
   * over (2 a second). After slow start's end (`settling` just set), an overshoot's plateau is no
   * lower than half the rate it met, as a cut is no deeper than halving: a charging limiter's
   * deficit let 0.33 a second of an account of 2 through, and the plateau from it held the rate at 0.30.
   * Nor, after growth past a rate held KEPT_MS, lower than that rate.
   */
  overshoot(o: PlateauOvershoot): number | undefined {
    const { rate: before, accepted } = o;
    const span = o.slowStart ? Number.POSITIVE_INFINITY : this.steadyAccepted(o.now, before, o.heldBefore);
    const peakAccepted =
      accepted >= PEAK_USED_SHARE * before && before >= PEAK_SPAN_FROM ? Math.min(accepted, span / (1 - o.noiseShare)) : accepted;
    const grewPast = this.peak > 0 && before > this.peak;
    const limits = o.shows || grewPast || peakAccepted >= PEAK_ACCEPTED_SHARE * before;
    const kept = this.heldFor(o.now, o.pressedMs);
    this.kept = before < GENTLE_BELOW && before >= KEPT_PAST * kept && o.noiseShare === 0 ? kept : 0;
    const floor = Math.max(o.settling ? 0 : before / 2, this.kept / PLATEAU_SHARE);
    this.peak = before < GENTLE_BELOW && limits ? Math.min(before, Math.max(peakAccepted, floor)) : 0;
    // Where it waits is no higher than what the API accepted between the last two cuts.
    if (this.peak > 0 && o.acceptedSinceCut !== undefined) this.peak = Math.min(this.peak, o.acceptedSinceCut / PLATEAU_SHARE);
    this.peakNoise = this.peak > 0 ? o.noiseShare : undefined;
    return grewPast && this.peak > 0 ? 0.9 * this.peak : undefined;
  }

  /** The lowest rate of the last KEPT_MS, if calls waited for the rate all that time (0: not). */
  private heldFor(now: number, pressedMs: number): number {
    const span = this.lately.filter((r) => r.at >= now - KEPT_MS);
    // Reports come each second: the first of the span may be a report or two into it.
    if (pressedMs < KEPT_MS - 2 * REPORT_MS || span.length === 0 || span[0]!.at > now - KEPT_MS + 2 * REPORT_MS) return 0;
    return Math.min(...span.map((r) => r.rate));
  }

  /**
   * What the API accepted of the fleet a second over the reports of PEAK_SPAN_MS before an
   * overshoot at `rate`, if they were made with no hold among them and at a rate within
   * PEAK_STEADY_SHARE of it; infinity if not. Asked past slow start only; also by settling's cut
   * from 10 a second on (FleetPace.cut).
   */
  steadyAccepted(now: number, rate: number, heldBefore: number): number {
    if (now - PEAK_SPAN_MS < heldBefore) return Number.POSITIVE_INFINITY;
    let sum = 0;
    let count = 0;
    let from = now;
    const since = (this.lately.at(-1)?.at ?? now) - PEAK_SPAN_MS;
    for (let i = this.lately.length - 1; i >= 0 && this.lately[i]!.at >= since && this.lately[i]!.rate >= PEAK_STEADY_SHARE * rate; i--) {
      sum += this.lately[i]!.accepted;
      count++;
      from = this.lately[i]!.at;
    }
    // Reports come each second: the first of the span may be a report or two into it.
    return count > 0 && now - from >= PEAK_SPAN_MS - 2 * REPORT_MS ? sum / count : Number.POSITIVE_INFINITY;
  }
}
