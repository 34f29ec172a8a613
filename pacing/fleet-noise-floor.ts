/**
 * The fleet's noise floor (429s no pace causes: a quota shared with other clients, a flaky
 * proxy), kept beside the account's one rate (fleet-pace.ts) in the account workflow.
 *
 * - **Learned** from answers no limit refused: the workers' fresh answers (right after a hold),
 *   and the fleet's answers reported while its rate is under KNOWN_GOOD_SHARE of what the API
 *   lately accepted of it. Noise refuses its share of any call; their 429 share is the floor,
 *   handed out with every share.
 * - **Checked** beside a limit: while a floor is known, the shares are now and then held under
 *   what the API accepts of the fleet (checkFloor); answers there pool into the floor, and
 *   clearly fewer 429s than it show noise that fell or stopped.
 * - **A limit in it**: the workers take 429s within the floor's margin as noise and relay none;
 *   the fleet's own answers show a limit there first (limitInNoise).
 * - **Refuted** when the search a floor restarted finds no room over where it was learned: the
 *   429s were a limit's, one that fell under what the fresh calls assumed (refuted).
 *
 * Pure and deterministic, like FleetPace: every method is told the time and the fleet's state.
 */
import { LEASE_MS, REPORT_MS } from '../workflow-definitions/account';
import { below, floorOf, moreThan, NOISE_CAP, onlyStrays, overFloor, type Answers } from './noise-floor';

/** What the floor is told of the fleet's pace at each report. */
export interface FleetView {
  now: number;
  /** The account's rate, and the fleet's leases summed: calls wanted, accepted and refused a second. */
  rate: number;
  want: number;
  accepted: number;
  limited: number;
  /** The rate searches for the limit (slow start, then settling). */
  searching: boolean;
  /** The account is held until then. */
  heldUntil: number;
  lastCutAt: number;
  /** Every worker's counts span a whole lease (none just started reporting). */
  countedFully: boolean;
}

/** A fleet sending less than this share of its rate shows no limit in what the API accepted of it. */
const SENDING_SHARE = 0.5;
/** A report's counts span LEASE_MS: its answers were all made at a rate set this long before (a report, its relay, a lease). */
const SAMPLE_SETTLE_MS = LEASE_MS + REPORT_MS + 500;
/**
 * Answers count toward the noise floor while the rate is at most this share of the known-good
 * pace. Low enough that a limit's own overshoots (a tenth over, then cut, or a limit's burst
 * counted in what it accepted) and a limit that halves are never under it: only a rate that
 * 429s unrelated to the pace cut again and again (at 0.9 most small accounts taught a floor in
 * the simulation). At 0.45 the median seed of 10 % noise on an account of 20 a second learned its
 * floor later (0.686 of the clean account over seconds 15-90, 0.728 at 0.5). 0.5 taught an
 * account of 2 a second shared by 4 workers a floor in an earlier build; in this one none of
 * bench pacing's 208 runs without noise learns one, nor test/account-pacer.noise.test.ts's.
 */
const KNOWN_GOOD_SHARE = 0.5;
/**
 * The fresh calls' bound (freshShare) is this share of the known-good pace until the fleet has
 * first learned a floor or been shown a limit (limitShown): no limit was found yet, so only one
 * under 0.7 of what the API already accepted of the fleet refuses them (under the limit even where
 * that counted a whole second's burst over three, 0.93 of it), not a limit that falls from one
 * found. Before the noise is known its 429s cut the rate to 0.1-0.2 of the limit, often between
 * half the known-good pace and this, for 20-60 s: the noise row's median at 20 a second 0.735 of
 * the clean account at 0.5, 0.766 here (40 seeds). At 0.8 (1.07 of the limit with that burst) four
 * workers on an account of 2 limited by a window learned its calls at once as noise, 38 % 429s. Not
 * once either is known: a limit that falls to 0.6 of the one found (20 to 12, 10 to 6) refuses
 * calls at 0.7 of the old, and at 0.7 throughout the fleet learned them as a floor (24 % 429s in a
 * run). Nor for the fleet's answers at a low rate: many, a few 429s among them make a floor, and
 * at 0.7 one with no limit in reach learned 0.024 of 10 % noise from 3 in some 80 at second 54, and
 * relayed the rest as holds for 80 s (test/account-pacer.noise.test.ts, seed 3).
 */
const FIRST_GOOD_SHARE = 0.7;
/** The known-good pace (the most the fleet's reports showed accepted) is replaced by the next report's after this long. */
const KNOWN_GOOD_MS = 300_000;
/**
 * ... and at once by the limit an overshoot shows (limitShown), when that is under this share of
 * it: an old limit's, one that fell. Not by a probe's overshoot, whose cut is a tenth.
 */
const FELL_SHARE = 0.8;
/** The pools keep the proportion of this many answers at most: they follow noise that changes. */
const NOISE_POOL_ANSWERS = 300;
/** A floor rests on at least this many pooled answers and 429s among them. */
const MIN_NOISE_ANSWERS = 20;
const MIN_NOISE_LIMITED = 3;
/**
 * Fresh answers are surer: fewer than a worker learns its own floor from (15, pacing/noise-floor.ts).
 * Until the floor is known each noise 429 holds the fleet 1-3 s and it accepts 0.1-0.45 of the
 * limit; at 15 the median seed of 10 % noise learned at second 35 (5 a second) and 28 (20 a
 * second): 0.754 and 0.723 of the clean account, 0.816 and 0.825 at 10 (bench pacing, with the
 * relayed hold counted from its 429, account-pacer.ts). No limit of 2-50 a second is learned
 * (test/account-pacer.noise.test.ts).
 */
const MIN_FRESH_ANSWERS = 10;
const MIN_FRESH_LIMITED = 2;
/**
 * A floor from so few answers is at most this share: 3 429s in 10 are as likely a limit's as
 * noise's, and a floor of 0.3 from them hid the limit's own 30 % 429s for good once noise stopped
 * (an account of 40 a second on two workers, bench pacing: the rate stood still at 1.7 times the
 * limit, its 429s within the floor's margin, and nothing waited to start a check).
 */
const YOUNG_FLOOR_CAP = 0.25;
/**
 * While a floor is known and the fleet is beside a limit, the floor is checked this often, a
 * check lasting no longer, and the next starting once the fleet's reports no longer count the
 * last: each holds the shares under what the API accepted at the report before it, and back to
 * back each took 0.9 of what the one before let through (2.1, 1.5, 1.2 a second at an account of
 * 5, for 150 s) ...
 */
const CHECK_EVERY_MS = 30_000;
/**
 * ... at this share of what the fleet's reports show the API accepting now; for a young floor
 * (under RELEARN_ANSWERS) learned first (firstFloor), with its share added back (at most
 * CHECK_NOISE_CAP): the calls the noise refused went through the limit as those it let through
 * did (the fake's and the simulation's noise refuse calls the limit let through), and 0.9 of what
 * was accepted alone held the fleet at 0.81 of the limit under 10 % noise for the young floor's
 * checks, 8-22 s after it was learned (bench pacing's noise row over 120 seeds: 0.795 -> 0.814 of
 * the clean account at 5 a second, 0.768 -> 0.786 at 20). A young floor's checks come while the
 * noise that taught it lasts. Not a grown floor's: once the noise stops, the share added back set
 * the check at the limit (over it, where the counts held a burst), whose 429s kept the floor
 * (noise that stops: 20 a second on one and two workers 1.40 and 2.23 % 429s; at 5 a second 2-3
 * runs of 20 over 1 % a row). Nor a floor learned after a limit was found: that may be the limit
 * fallen, and a check over it pooled the limit's 429s into the floor (40 to 30 a second on four
 * workers, a limiter charging refused calls: 6.4 % 429s for the minute after).
 */
const CHECK_SHARE = 0.9;
const CHECK_NOISE_CAP = 0.15;
/** ... for this long (SAMPLE_SETTLE_MS, then a lease's worth of counts). */
const CHECK_MS = SAMPLE_SETTLE_MS + LEASE_MS;
/**
 * ... or, at a small account, until it has counted about this many answers: a lease's worth at 5
 * a second is some 13, too few to show a floor of 0.1 left by noise that stopped too high, and
 * its margin hid the limit's 429s for minutes (bench pacing, noise that stops: 4-12 % 429s at 5
 * a second in seconds 200-300; 0.2-1.0 % at 70 answers, with no other row moved).
 */
const CHECK_ANSWERS = 70;
/**
 * ... and while the rate searches (slow start, settling), once it has gone this long without a
 * cut or a hold since the floor was learned: a young floor (2 of 15 fresh answers) hid a limit's
 * 429s of 26-30 % from a search that, sending all that was asked, neither met its end nor was
 * checked, for 200 s (two workers on accounts of 20 and 40 a second, 29-30 % 429s after the noise
 * stopped). Not sooner: a check costs a tenth of the calls for CHECK_MS, and at 60 s one at
 * second 87 of the noisy bench's 90 lowered its median (0.723 to 0.713).
 */
const STALLED_MS = 70_000;
/**
 * ... and the answers since the last cut hold more 429s than the floor by this many standard
 * deviations of their count: a fleet with no limit in reach stalls too, at its floor (checked
 * every 30 s, its calls waited 1.3-1.5 s for the pace).
 */
const STALLED_Z = 2;
/**
 * The checks' answers, this many of them, are the floor: a low floor is never clearly above what
 * they show (0.02 needs 400 answers with no 429), and answers of noise that stopped stayed in the
 * pools (one worker on an account of 20 a second: a floor of 0.011-0.03 for 180 s after the noise
 * stopped, and the limit's 429s in its margin, 2.3 %).
 */
const RELEARN_ANSWERS = 100;
/**
 * A floor resting on fewer than RELEARN_ANSWERS answers is young: a few fresh 429s make it
 * (5 of 13 for 10 % noise, a floor of 0.3), and one too high hides a limit's 429s from every
 * other rule for good: within its margin they neither end a search nor press for a check (an
 * account of 5 a second on two workers ran at 2.4 times its limit from second 58 to the end,
 * a quarter of its calls refused by the limit). So once the fleet has gone this long since it
 * was learned without a cut or a hold, it is checked whatever the rate does, until the checks
 * have counted RELEARN_ANSWERS and it is their floor. A floor too low corrects itself: its
 * noise is relayed as holds, whose fresh answers pool into it.
 */
const YOUNG_CHECK_MS = 20_000;

/**
 * A restarted search whose first overshoot shows no more than this times what the API accepted
 * when the floor was learned refutes it (FleetNoiseFloor.refuted). Higher, it forgets true floors
 * of small accounts, whose noise cut the rate less: bench pacing's noise row at 5 a second, 0.778
 * of the clean account here, 0.773 at 1.5, 0.696 at 2.
 */
const REFUTED_ROOM = 1.2;

/** What is carried over a continue-as-new. */
export interface FleetNoiseState {
  /** The answers the noise floor is learned from, and every answer lately (to forget noise that stopped). */
  noise?: Answers;
  all?: Answers;
  /** The workers' fresh answers (PaceReport.fresh), pooled. */
  fresh?: Answers;
  /** A floor was learned or a limit shown (absent: neither). */
  found?: boolean;
  /** The floor now known was learned before either (absent: not). */
  firstFloor?: boolean;
}

/** No answers (a pool, a count, that starts over). */
export const NONE: Answers = { answers: 0, limited: 0 };

export class FleetNoiseFloor {
  private noise: Answers;
  private all: Answers;
  private fresh: Answers;
  /** The most the fleet's reports showed the API accepting lately (calls a second), and when. */
  private good = { rate: 0, at: 0 };
  /** Since when the rate is under KNOWN_GOOD_SHARE of the known-good pace (infinity: it is not). */
  private lowSince = Number.POSITIVE_INFINITY;
  /**
   * The floor's check beside a limit (see checkFloor): shares are held under `rate` until `until`,
   * and the answers counted wholly under it pool in `checked`, over as many checks as it takes.
   */
  private check: { rate: number; from: number; until: number } | null = null;
  private checkAt = 0;
  private checked: Answers = NONE;
  /** When the last check ended: the reports count it for SAMPLE_SETTLE_MS more. */
  private checkEnded = 0;
  /** When the floor was last learned (the search restarts then). */
  private learned = Number.NEGATIVE_INFINITY;
  /** What the API accepted of the fleet (its leases' counts) when the floor was learned. */
  private learnedAccepted = 0;
  /** This run's first report: a floor carried over a continue-as-new counts its stall from there. */
  private firstReportAt = 0;
  /** The fleet's answers counted wholly since the last cut, relayed hold or check (limitInNoise). */
  private sinceCut: Answers = NONE;
  /** A floor was learned or a limit shown, in this run or one before (FIRST_GOOD_SHARE). */
  private found: boolean;
  /**
   * The floor now known was learned before a limit was shown or another floor learned: the 429s
   * came from the start, not a limit found falling under the fresh calls (the only floors bench
   * pacing's runs without noise learn, 3-15 of 30 a fall).
   */
  private firstFloor: boolean;

  constructor(state?: FleetNoiseState) {
    this.noise = answersOf(state?.noise);
    this.all = answersOf(state?.all);
    this.fresh = answersOf(state?.fresh);
    this.found = state?.found === true;
    this.firstFloor = state?.firstFloor === true;
  }

  state(): Required<FleetNoiseState> {
    return { noise: this.noise, all: this.all, fresh: this.fresh, found: this.found, firstFloor: this.firstFloor };
  }

  /** The share of 429s no pace causes (0: none known), and how many answers it rests on. */
  floor(): { share: number; answers: number } {
    // Every answer no limit refused (fresh, at a low rate, in a check), pooled: a floor learned
    // young from a few fresh answers matures, and falls when the noise does.
    const all = { answers: this.noise.answers + this.fresh.answers, limited: this.noise.limited + this.fresh.limited };
    const share = youngFloor(all, MIN_NOISE_ANSWERS, MIN_NOISE_LIMITED);
    if (share > 0) return { share, answers: all.answers };
    // A few fresh answers are enough to learn a floor from, unless the pool clearly shows less.
    const fresh = youngFloor(this.fresh, MIN_FRESH_ANSWERS, MIN_FRESH_LIMITED);
    if (fresh <= 0 || (all.answers >= MIN_NOISE_ANSWERS && below(all, fresh))) return { share: 0, answers: 0 };
    // The pool holds them and more (the checks', those at a low rate): a lower share there is the
    // better floor, and only strays in it are noise that stopped (2 fresh 429s of 22 stayed the
    // floor, 0.091, beside 0.3 429s in 105 checked answers).
    const pooled = youngFloor(all, MIN_FRESH_ANSWERS, MIN_FRESH_LIMITED);
    if (pooled > 0 && pooled < fresh) return { share: Math.min(pooled, YOUNG_FLOOR_CAP), answers: all.answers };
    if (pooled <= 0 && onlyStrays(all)) return { share: 0, answers: 0 };
    return { share: Math.min(youngShare(this.fresh), YOUNG_FLOOR_CAP), answers: this.fresh.answers };
  }

  /** The share of the known-good pace under which fresh calls are no limit's: FIRST_GOOD_SHARE until a floor or limit is found. */
  private freshGoodShare(): number {
    // (A floor carried from a build that did not carry `found` was learned too.)
    return this.found || this.floor().share > 0 ? KNOWN_GOOD_SHARE : FIRST_GOOD_SHARE;
  }

  /**
   * Slow start's start after a floor is learned: the most the fleet's reports showed the API
   * accepting lately where the floor is the first thing found (0: nothing to start from). After a
   * limit was found the most accepted is that limit's, which a floor learned since may have fallen
   * from: searched again from 1.5 times it, a fall of 40 to 20 a second met 17.9 % 429s in a run.
   */
  get restartFrom(): number {
    return this.firstFloor ? this.good.rate : 0;
  }

  /** When the floor was last learned (−∞: not in this run). */
  get learnedAt(): number {
    return this.learned;
  }

  /** The rate the shares are held under while the floor is checked (none: no check). */
  checkRate(): number | undefined {
    return this.check?.rate;
  }

  /**
   * The share of its rate at which a worker's calls after a hold may count as fresh (0: the
   * worker's own bound alone): the share that keeps the fleet's rate under KNOWN_GOOD_SHARE of
   * the known-good pace (FIRST_GOOD_SHARE before a floor or limit was found), where no limit that
   * did not fall that far refuses a call, let alone right after a hold. Before the floor is known
   * the noise cuts the rate to 1-3 calls a second, where the worker's own bound (half its rate, or
   * what the API accepted of it with the holds counted) left 1-2 fresh calls a hold: 14-18 fresh
   * answers in 80 s (bench `pacing`). (All or nothing, once the whole rate was under it: 0.55 and
   * 0.48 of the clean account over 15 seeds, instead of 0.61 and 0.55.)
   */
  freshShare(rate: number, slowStart: boolean): number {
    if (slowStart || this.good.rate <= 0) return 0;
    return Math.min(1, (this.freshGoodShare() * this.good.rate) / rate);
  }

  /**
   * An overshoot shows the limit at about `rate` now (see FleetPace.overshoot): a known-good pace
   * far over it is an old limit's. Kept for KNOWN_GOOD_MS after a fall, it let every call after a
   * hold count as fresh (its half was the whole new limit), and under a limiter charging refused
   * calls the overshoot's deficit refused them: a floor learned a minute after the fall, and the
   * search it restarted grew blind past the limit, 10.56 % 429s (simulated, 40 to 20 a second on
   * four workers), a floor kept to the end in two of thirty runs.
   */
  limitShown(rate: number, now: number): void {
    this.found = true;
    if (rate < FELL_SHARE * this.good.rate) this.good = { rate, at: now };
  }

  /**
   * Pools a report's answers (see the head comment). Returns whether a floor was just learned:
   * the noise made cuts no limit asked for, so the rate searches for the limit again.
   */
  learn(sample: Answers, fresh: Answers, fleet: FleetView): boolean {
    const knownBefore = this.floor().share > 0;
    // Fresh answers: no limit refused them, whatever the rate.
    if (fresh.answers > 0) this.fresh = pool(this.fresh, fresh);
    if (sample.answers > 0) {
      this.all = pool(this.all, sample);
      // What the API accepted of the whole fleet: the limit allowed at least that (give or take its burst).
      if (fleet.accepted >= this.good.rate || fleet.now - this.good.at > KNOWN_GOOD_MS) this.good = { rate: fleet.accepted, at: fleet.now };
      // Only counts made wholly at such a rate: a report counts the worker's answers of the last
      // LEASE_MS, and a rate just halved by slow start still counts the overshoot's 429s.
      if (fleet.rate > KNOWN_GOOD_SHARE * this.good.rate) this.lowSince = Number.POSITIVE_INFINITY;
      else if (this.lowSince === Number.POSITIVE_INFINITY) this.lowSince = fleet.now;
      if (fleet.now - this.lowSince >= SAMPLE_SETTLE_MS) this.noise = pool(this.noise, sample);
      // Noise that stopped: the fleet's last answers hold no more 429s than a limit's strays.
      if (this.noise.answers + this.fresh.answers > 0 && this.all.answers >= 0.9 * NOISE_POOL_ANSWERS && onlyStrays(this.all))
        this.forget();
    }
    const learned = !knownBefore && this.floor().share > 0;
    if (learned) {
      this.firstFloor = !this.found;
      this.learned = fleet.now;
      this.learnedAccepted = fleet.accepted;
      this.found = true;
    }
    if (this.firstReportAt === 0) this.firstReportAt = fleet.now;
    return learned;
  }

  /**
   * A floor learned while the rate was low is checked while the fleet sits beside a limit, where
   * the workers take 429s within it as noise: every CHECK_EVERY_MS the shares are held, for
   * CHECK_MS, under what the API accepts of the fleet now (under the limit). A limit's 429s only
   * add to noise's, so answers there are the floor's own kind: they pool into it (a young floor
   * matures), and clearly fewer 429s than the floor (or RELEARN_ANSWERS of them) show noise that
   * fell or stopped: the floor is learned again from them (forgotten if they hold only strays).
   * Without it a floor of 0.15-0.2 (10 % noise, then none) hid a limit's 429s of 3-45 % for good.
   * Not while the rate searches (the rate the noise cut is no limit's), unless it stalled.
   */
  checkFloor(sample: Answers, fleet: FleetView): void {
    const { now } = fleet;
    const floor = this.floor().share;
    if (floor <= 0) {
      this.check = null;
      this.checked = NONE;
      return;
    }
    if (this.check && now >= this.check.from + SAMPLE_SETTLE_MS) {
      // Under the limit: answers only noise refuses, the floor's own kind.
      this.noise = pool(this.noise, sample);
      this.checked = { answers: this.checked.answers + sample.answers, limited: this.checked.limited + sample.limited };
      // Clearly under the floor, or enough of them to be the floor on their own (RELEARN_ANSWERS).
      if (below(this.checked, floor) || this.checked.answers >= RELEARN_ANSWERS) {
        this.forget(pool(NONE, this.checked));
        this.checked = NONE;
      }
    }
    if (this.check && now >= this.check.until) {
      this.check = null;
      this.checkEnded = now;
    }
    // Calls waiting for the rate, or clearly more 429s than the floor (a rate over the limit whose
    // 429s hide in the floor's margin sends what is asked of it: waiting for nothing, it was never
    // checked, and 10-30 % of the calls of accounts of 5 and 20 a second were 429s for minutes
    // after the noise stopped).
    const pressed = fleet.want > fleet.rate || (this.sinceCut.answers >= MIN_NOISE_ANSWERS && moreThan(this.sinceCut, floor));
    // While the rate searches, only once it stalled (STALLED_MS) over the floor (STALLED_Z).
    // How long the fleet went without a cut or a hold since the floor was learned.
    const quietFor = now - Math.max(fleet.lastCutAt, fleet.heldUntil, this.learned, this.firstReportAt);
    const stalled = quietFor >= STALLED_MS && this.sinceCut.answers >= MIN_NOISE_ANSWERS && moreThan(this.sinceCut, floor, STALLED_Z);
    // A young floor, once that is YOUNG_CHECK_MS.
    const immature = this.floor().answers < RELEARN_ANSWERS;
    const young = immature && quietFor >= YOUNG_CHECK_MS;
    // Not until the reports count no hold (SAMPLE_SETTLE_MS after it): a check that began a second
    // after one took its rate from a report counting the hold, 0.9 of 4 a second at an account
    // accepting 18, and held the shares there for 12-24 s. Nor until every worker's counts span a
    // whole lease: a worker back from an idle spell counts its first seconds, and a check from them
    // held an account of 20 a second at 2-3 for 30 s (simulated, a minute idle beside 10 % noise).
    // Nor while the fleet sends clearly less than it may, its calls only starting (a batch coming
    // in), unless more of its answers are 429s than the floor explains: the rate-limit bench's
    // second batch was held at 0.9 of 14 a second on an account of 20 for 8 s.
    // (More 429s than the floor explains, over enough answers: a 429 among the first 5 answers of a
    // batch after an idle minute started a check at 1.2 a second on an account of 5 for 30 s.)
    const answers = ((fleet.accepted + fleet.limited) * LEASE_MS) / 1000;
    const sending =
      fleet.accepted + fleet.limited >= CHECK_SHARE * Math.min(fleet.rate, fleet.want) ||
      (answers >= MIN_NOISE_ANSWERS && this.crowded(fleet));
    if (
      !this.check &&
      (((!fleet.searching || stalled) && (pressed || stalled)) || young) &&
      now >= this.checkAt &&
      now >= fleet.heldUntil + SAMPLE_SETTLE_MS &&
      fleet.accepted > 0 &&
      fleet.countedFully &&
      sending
    ) {
      // No lower than the known-good share, which no limit that did not fall refuses: a fleet whose
      // calls were only starting after an idle minute (1 a second accepted of 6.4) was checked at
      // 0.9 a second for 30 s. No higher than the rate: a check over it holds nothing, and its span
      // counts answers at the rate it holds.
      const added = this.firstFloor && immature ? Math.min(floor, CHECK_NOISE_CAP) : 0;
      const underAccepted = (CHECK_SHARE * fleet.accepted) / (1 - added);
      const rate = Math.min(fleet.rate, Math.max(underAccepted, Math.min(KNOWN_GOOD_SHARE * this.good.rate, fleet.rate)));
      const counting = (1000 * CHECK_ANSWERS) / rate;
      const span = Math.min(CHECK_EVERY_MS, Math.max(CHECK_MS, SAMPLE_SETTLE_MS + counting));
      this.check = { rate, from: now, until: now + span };
      // The next is told what the API accepts with the shares back at the rate, not held by this one.
      this.checkAt = Math.max(now + CHECK_EVERY_MS, this.check.until + SAMPLE_SETTLE_MS);
    }
  }

  /** A hold the fleet was told of, or a cut: the answers since count anew. */
  held(): void {
    this.sinceCut = NONE;
  }

  /**
   * A limit beside a known floor: the workers take 429s within the floor's margin as noise and
   * relay none, and a young floor's margin is wide (2 429s of 15 answers: a limit's 429s of 40 %
   * hid in it while slow start went on to 2.5 times the limit). The fleet's answers, every
   * worker's, show the limit first: clearly more 429s than the floor explains are an overshoot.
   * While the rate searches (slow start, then settling) they are weighed against the floor itself:
   * that ends the search, after which the rate grows on gently. Probing, with the floor's margin
   * (a young floor can be half the noise: cut at each such "overshoot", a fleet with no limit in
   * reach went from 68 calls a second to 24). Returns the rate the API let through (the cut's
   * ceiling) when the answers show an overshoot.
   */
  limitInNoise(sample: Answers, fleet: FleetView): number | undefined {
    // Counts wholly since the last cut, and with no hold relayed among them (those 429s were
    // told), nor a check (held under the limit).
    if (fleet.now - Math.max(fleet.lastCutAt, fleet.heldUntil, this.check?.from ?? 0, this.checkEnded) < SAMPLE_SETTLE_MS) return undefined;
    if (this.check) return undefined;
    this.sinceCut = pool(this.sinceCut, sample);
    const floor = this.floor();
    if (floor.share <= 0) return undefined;
    const seconds = LEASE_MS / 1000;
    const lately = { answers: (fleet.accepted + fleet.limited) * seconds, limited: fleet.limited * seconds };
    const over = fleet.searching
      ? // One standard deviation of a young floor over it: at the floor itself, 10 % noise over a
        // floor of 2 in 32 (0.063) ended the slow start of a fleet with no limit in reach at 60 a
        // second of the 100 due, and its backlog waited 27 s.
        [lately, this.sinceCut].some((a) => overFloor(a, floor.share, floor.answers, 1))
      : // Probing, over every answer since the cut: a small account's few seconds hold too few to
        // tell (an account of 5 a second at twice its limit, a quarter of its calls 429s, hid in a
        // floor of 0.1 for minutes after the noise stopped). Without a floor every 429 is relayed.
        this.sinceCut.answers >= MIN_NOISE_ANSWERS && overFloor(this.sinceCut, floor.share, floor.answers);
    // A third of the answers 429s or more is a limit far under the rate, never noise (NOISE_CAP),
    // whatever a young floor's margin: one from 3 of 11 fresh answers hid slow start's 40 a second
    // on an account of 20 (40 % 429s) for 15 s.
    const far = lately.answers >= MIN_NOISE_ANSWERS && lately.limited >= NOISE_CAP * lately.answers;
    if (!over && !far) return undefined;
    // No hold in these counts: what the API accepted of the fleet is what the limit lets through,
    // where the fleet sends half its rate or more. Not where its work ran out or only came back
    // (an idle minute): the answers since the cut showed the limit there, and cut to what the API
    // accepted of an idle fleet, an account of 20 a second waited at 0.25-1.5 through the next
    // batch (simulated, 10 % noise). There the rate is cut, a tenth.
    const sending = fleet.accepted + fleet.limited >= SENDING_SHARE * fleet.rate;
    return sending ? fleet.accepted / (1 - floor.share) : Number.POSITIVE_INFINITY;
  }

  /**
   * Whether the fleet's last answers (its leases' counts) hold more 429s than the floor explains,
   * by a standard deviation of their count: no room shown for the quiet spell to grow into. The
   * workers relay none of a limit's 429s within the floor's margin, and a quiet spell grew through
   * them at a tenth a second to twice an account of 5 a second (simulated, a floor of 0.02 left
   * by noise that stopped, a 429 a second the limit's).
   */
  crowded(fleet: FleetView): boolean {
    const floor = this.floor().share;
    if (floor <= 0) return false;
    const seconds = LEASE_MS / 1000;
    const n = (fleet.accepted + fleet.limited) * seconds;
    return n > 0 && fleet.limited * seconds > n * floor + Math.sqrt(n * floor * (1 - floor));
  }

  /**
   * The first overshoot of the search a floor just restarted (see FleetPace.overshoot), with at
   * most REFUTED_ROOM times what the API accepted of the fleet when the floor was learned: there
   * was no room over the rate the 429s cut, so they were a limit's, not noise. A limit that falls
   * under what the workers' fresh calls assume (up to what the API accepted of them before the
   * hold) refuses fresh calls: in the simulation one that fell from 5 a second to 3 under a
   * limiter charging refused calls was learned as a floor of 0.09, and the search it restarted
   * met a limit it could not tell from that floor for 60 s, half the calls 429s. The floor is
   * forgotten (its fresh answers with it). Returns what the API accepted of the fleet when it was
   * learned, about where that limit is (0: not refuted).
   */
  refuted(accepted: number): number {
    if (this.learned === Number.NEGATIVE_INFINITY || this.floor().share <= 0 || accepted > REFUTED_ROOM * this.learnedAccepted) return 0;
    this.forget();
    return this.learnedAccepted;
  }

  /** Both pools start over (noise that stopped, or a floor the check found too high). */
  private forget(noise: Answers = NONE): void {
    this.noise = noise;
    this.fresh = NONE;
  }
}

/**
 * A floor learned from a few fresh answers alone, less the 429 that made it one: it is learned at
 * the first count whose 429s reach MIN_FRESH_LIMITED, so its share is high by that one (bench
 * pacing, 10 % noise: learned as 0.18-0.25 in five of seven runs traced, 0.11 in two). Too high,
 * its margin hides the limit's 429s and no hold is relayed to bring the fresh answers that would
 * correct it (the floor stayed at 0.25 for 200 s while the fleet ran at 1.5-2.2 times the
 * limit); too low, the noise's 429s are relayed as holds, whose fresh answers mature the floor.
 * No lower than half the share, nor 0 (the floor is known).
 */
function youngShare(fresh: Answers): number {
  const share = fresh.limited / fresh.answers;
  return Math.max((fresh.limited - 1) / fresh.answers, share / 2);
}

/**
 * The floor a pool shows (0: none), and a young one's (fewer than RELEARN_ANSWERS answers) as
 * youngShare has it, at most YOUNG_FLOOR_CAP: 4 fresh 429s of 12 (10 % noise) read as a third, a
 * limit's share, forgot the floor learned a second before from 3 of 11, and the search it had
 * restarted sent no fresh call for 70 s (slow start's are none).
 */
function youngFloor(pool: Answers, minAnswers: number, minLimited: number): number {
  if (pool.answers >= RELEARN_ANSWERS) return floorOf(pool, minAnswers, minLimited);
  if (pool.answers < minAnswers || pool.limited < minLimited || onlyStrays(pool)) return 0;
  const share = youngShare(pool);
  return share < NOISE_CAP ? Math.min(share, YOUNG_FLOOR_CAP) : 0;
}

/** Adds a sample to a pool, scaled down to NOISE_POOL_ANSWERS answers at most. */
function pool(into: Answers, sample: Answers): Answers {
  const sum = { answers: into.answers + sample.answers, limited: into.limited + sample.limited };
  const scale = Math.min(1, NOISE_POOL_ANSWERS / sum.answers);
  return { answers: sum.answers * scale, limited: sum.limited * scale };
}

/** A carried pool, or an empty one if it is not one. */
function answersOf(a: Partial<Answers> | undefined): Answers {
  const answers = nonNegative(a?.answers);
  return { answers, limited: Math.min(answers, nonNegative(a?.limited)) };
}

/** A count from outside (a report, a carried state): finite, at least 0, at most 1e6. */
export function nonNegative(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.min(n, 1e6) : 0;
}

/** A count that is a positive number, or undefined (a report's or carried state's that is not). */
export function positive(n: unknown): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
}
