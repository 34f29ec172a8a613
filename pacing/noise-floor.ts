/**
 * The share of 429s a shipping API account answers whatever the pace (a quota shared with other
 * clients, a flaky proxy): the noise floor, learned by the account pacer (account-pacer.ts).
 *
 * It is learned from the answers to **fresh calls**: those sent in the first moments after the
 * whole fleet held the account for at least a second (a Retry-After is at least one). A rate
 * limit has just refilled then, whoever else shares it, so a limit's 429s are rare among them,
 * while noise refuses its share of them as of any call. Their 429 share is the floor. This needs
 * no guess at the other workers' paces, which one worker cannot see.
 *
 * A floor rests on enough fresh answers and 429s not to be a limit's strays, and is never higher
 * than the last minute's share of all answers. When that minute holds no more 429s than a limit's
 * strays, the noise has stopped and is forgotten. A share as high as a limit far below the pace
 * (a third) is never taken for noise: slowing down is the only answer to that.
 */

/** Answers in a stretch of time, and how many of them were 429s. */
export interface Answers {
  answers: number;
  limited: number;
}

/** Standard deviations a count must be above what a share explains to be another share. */
const Z = 3;
/**
 * ... and, for recent answers over a known floor, to say "too fast". A false alarm holds the
 * fleet a second, whose refilled tokens the pace never spends, and cuts the pace; a limit's 429s
 * hidden in the margin use no tokens (the bench: 2 fewer standard deviations, more false alarms,
 * 0.66-0.74 of the limit under noise instead of 0.8 and more).
 */
const Z_EXCEEDED = 3;
/** A share this low is a limit's stray 429s (a call racing a hold), not noise. */
const STRAY = 0.002;
/** A share this high is a limit far below the pace, never noise. */
export const NOISE_CAP = 1 / 3;
/** A floor rests on at least this many fresh answers and 429s among them, ... */
const MIN_FRESH = 15;
const MIN_FRESH_LIMITED = 2;
/** ... and on the last this many (it follows noise that changes). */
const FRESH_KEPT = 300;
/** The newest fresh answers are weighed against all kept in steps of this many. */
const RELEARN_STEP = 25;
/** Over a floor, a 429 is judged by at least this many recent answers. */
const MIN_RECENT_ANSWERS = 20;
/** The last minute's answers bound the floor once there are this many. */
const CEILING_ANSWERS = 300;

export class NoiseFloor {
  /** The fresh answers, newest last: true for a 429. */
  private readonly fresh: boolean[] = [];
  private freshLimited = 0;
  /** The last minute's answers at every pace: the floor is no higher than their share. */
  private lately: Answers = { answers: 0, limited: 0 };
  /** The fleet's floor (pacing/fleet-noise-floor.ts). */
  private fleet: { share: number; answers: number } | null = null;
  /**
   * Whether the fleet's pace answers this worker: its floor rests on every worker's fresh answers,
   * this one's among them, and is checked beside the limit, so this worker's own floor is not used.
   * (It was, above the fleet's: after noise stopped, a worker's own floor of 0.1-0.2, from fresh
   * answers no later hold renewed, hid a limit's 429s of 8-31 % for minutes.)
   */
  private fleetLed = false;

  /** The floor the fleet learned from every worker's answers (share 0 or null: none); null when the fleet's pace no longer answers. */
  setFleetFloor(floor: { share: number; answers: number } | null | undefined, led = true): void {
    this.fleet = floor && floor.share > 0 && floor.answers > 0 ? { share: floor.share, answers: floor.answers } : null;
    this.fleetLed = led;
  }

  /** How many fresh answers the floor rests on now. */
  get freshCount(): number {
    return this.fresh.length;
  }

  /** The answer to a fresh call. */
  noteFresh(limited: boolean): void {
    this.fresh.push(limited);
    if (limited) this.freshLimited++;
    if (this.fresh.length > FRESH_KEPT && this.fresh.shift()) this.freshLimited--;
    this.followFresh();
  }

  /**
   * The newest fresh answers (the last RELEARN_STEP, 2 x RELEARN_STEP, ...) clearly under the
   * share of the older ones kept: the noise fell, and the older answers are dropped (else the 300 kept
   * answers of 10 % noise that stopped were a floor of 0.02-0.1 for minutes).
   */
  private followFresh(): void {
    if (this.freshLimited === 0 || this.fresh.length < 2 * RELEARN_STEP) return;
    let limited = 0;
    for (let n = 1; n < this.fresh.length; n++) {
      if (this.fresh[this.fresh.length - n]) limited++;
      const older = (this.freshLimited - limited) / (this.fresh.length - n);
      if (n % RELEARN_STEP === 0 && below({ answers: n, limited }, older)) {
        this.fresh.splice(0, this.fresh.length - n);
        this.freshLimited = limited;
        return;
      }
    }
  }

  /**
   * Fresh answers counted by others (the fleet's pool, read at start), spread evenly; counts may
   * be fractions (the pool is scaled), and only the last FRESH_KEPT are kept.
   */
  noteFreshCounts({ answers, limited }: Answers): void {
    const n = Math.min(FRESH_KEPT, Math.round(answers));
    const k = n > 0 ? Math.round((limited / answers) * n) : 0;
    for (let i = 0; i < n; i++) this.noteFresh(Math.floor(((i + 1) * k) / n) > Math.floor((i * k) / n));
  }

  /**
   * The fleet's pool (which holds this worker's reported answers too) in place of this worker's
   * own; not while the last minute holds no more 429s than a limit's strays. The pool keeps its
   * last 300 answers, and beside a limit few holds bring new ones: read every 10 s after a
   * limit's 429, the noise that stopped minutes before came back each time check() forgot it
   * (floors of 0.005-0.008 flickering at second 260-299 of "when the noise stops").
   */
  replaceFresh(answers: Answers): void {
    if (this.noiseStopped()) return;
    this.fresh.length = 0;
    this.freshLimited = 0;
    this.noteFreshCounts(answers);
  }

  /** The share of 429s no pace causes, 0 while none is known. */
  get share(): number {
    return this.estimate().share;
  }

  /** Whether these recent answers hold more 429s than the floor explains: the pace is over a limit. */
  exceeded(recent: Answers): boolean {
    const { share, from } = this.estimate();
    if (share === 0) return recent.limited > 0;
    return overFloor(recent, share, from);
  }

  /**
   * The answers of the last minute, at every pace. When they hold no more 429s than a limit's
   * strays, the noise has stopped: it is forgotten (and learned again if 429s come back).
   */
  check(lately: Answers): void {
    this.lately = lately;
    if (this.fresh.length > 0 && this.noiseStopped()) {
      this.fresh.length = 0;
      this.freshLimited = 0;
    }
  }

  /** The last minute's answers, enough of them, hold no more 429s than a limit's strays. */
  private noiseStopped(): boolean {
    return this.lately.answers >= CEILING_ANSWERS && !above(this.lately, STRAY);
  }

  /** The floor, and how many answers it rests on (the fewer, the less sure it is). */
  private estimate(): { share: number; from: number } {
    const pooled: Answers = { answers: this.fresh.length, limited: this.freshLimited };
    // The last minute's share at every pace bounds any floor (noise that dropped): a limit's 429s
    // only add to noise's.
    const ceiling = this.lately.answers >= CEILING_ANSWERS ? upperBound(this.lately) : 1;
    const bounded = ({ share, from }: { share: number; from: number }) =>
      ceiling < share ? { share: ceiling, from: this.lately.answers } : { share, from };
    let fleet = this.fleet ? bounded({ share: this.fleet.share, from: this.fleet.answers }) : { share: 0, from: 0 };
    // This worker's own fresh answers, clearly under the fleet's floor, show noise that fell
    // since the fleet learned it: a floor they do not show is not used (else a worker whose
    // fresh answers came clean took the fleet's old floor again, and hid the limit's 429s in it).
    if (fleet.share > 0 && pooled.answers >= MIN_FRESH && below(pooled, fleet.share)) fleet = { share: 0, from: 0 };
    if (this.fleetLed) return fleet;
    if (pooled.answers < MIN_FRESH || pooled.limited < MIN_FRESH_LIMITED || !above(pooled, STRAY)) return fleet;
    const share = pooled.limited / pooled.answers;
    if (share >= NOISE_CAP) return fleet;
    return bounded({ share, from: pooled.answers });
  }
}

/**
 * Whether these recent answers hold more 429s than a floor of `share`, learned from `from`
 * answers, explains: the pace is over a limit. A floor from few 429s may be well below the noise
 * (2 of 54 answers for 10 %): judged against two standard deviations above it, so a young floor
 * does not call noise "too fast". (`sds` lower where a false "too fast" costs little.)
 */
export function overFloor(recent: Answers, share: number, from: number, sds = 2): boolean {
  if (recent.answers < MIN_RECENT_ANSWERS) return false;
  const sd = Math.sqrt(Math.max(share * (1 - share), 1 / from) / from);
  return above(recent, share + sds * sd, Z_EXCEEDED);
}

/** k 429s of n answers are more than a share p explains, by z standard deviations of the count, plus half a call. */
function above({ answers: n, limited: k }: Answers, p: number, z = Z): boolean {
  return k > n * p + z * Math.sqrt(n * p * (1 - p)) + 0.5;
}

/** The highest share these answers leave plausible (two standard deviations up). */
function upperBound(a: Answers): number {
  const p = a.limited / a.answers;
  return p + 2 * Math.sqrt(Math.max(p * (1 - p), 1 / a.answers) / a.answers);
}

/**
 * The floor these pooled answers show (0: none): enough answers and 429s not to be a limit's
 * strays, clearly above them, and below a share only a limit far below the pace causes.
 */
export function floorOf(pool: Answers, minAnswers: number, minLimited: number): number {
  if (pool.answers < minAnswers || pool.limited < minLimited || !above(pool, STRAY)) return 0;
  const share = pool.limited / pool.answers;
  return share < NOISE_CAP ? share : 0;
}

/**
 * Whether these answers hold clearly fewer 429s than a share p of noise explains (Z standard
 * deviations of the count, and half a call, below): the noise is less than p. A limit's 429s only
 * add to noise's, so this holds at any pace.
 */
export function below({ answers: n, limited: k }: Answers, p: number): boolean {
  return k < n * p - Z * Math.sqrt(n * p * (1 - p)) - 0.5;
}

/** Whether these answers hold clearly more 429s (Z standard deviations) than a share p explains. */
export function moreThan(answers: Answers, p: number, z = Z): boolean {
  return above(answers, p, z);
}

/** Whether these answers hold no more 429s than a limit's strays. */
export function onlyStrays(pool: Answers): boolean {
  return !above(pool, STRAY);
}
