/**
 * One account's pace for the whole fleet, kept in the account's workflow (workflows/account.ts):
 * the account's rate is decided here once, from every worker's answers, and handed out as shares
 * that follow where the calls wait.
 *
 * - **The rate** starts at INITIAL_RATE and grows by half each second while the fleet has calls
 *   waiting for it (slow start); the first overshoot (a 429 the fleet is told of) sets it to 90 %
 *   of what the API accepted of the whole fleet over the last reports, and from then on it grows
 *   by half a percent a second (down to a quarter for an account under 10 calls a second) and
 *   shrinks by a tenth at each overshoot (AIMD for one flow: the fleet). After a minute without an
 *   overshoot while calls wait it grows by a tenth a second again, so a limit that rises is found.
 * - **Shares** go by demand (water-filling): each worker reports the calls a second it would send
 *   (those it sent over its last report's period and those waiting now); a worker that needs less
 *   than an equal share gets what it needs, the rest is split among the others. A share is a lease
 *   of LEASE_MS: a worker that stops reporting leaves its share to the others, and a new grant
 *   never makes the leases out exceed the rate (a worker whose share shrinks gives it up at its
 *   next report, within REPORT_MS, and the worker whose share grows takes it at its own).
 * - **A ceiling** (`maxRequestsPerSecond`) is the account's: the lowest any worker reports caps
 *   the rate, whatever the number of workers.
 *
 * Pure and deterministic (no clock of its own, no I/O): the workflow runs it on its own time.
 */
import type { PaceGrant, PaceReport } from '../workflow-definitions/account';

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
const PROBE_SHARE = 0.005;
const MIN_PROBE = 0.005;
/** Under this rate the probe is gentler (an overshoot's one 429 is a larger share of a small account's calls). */
const GENTLE_BELOW = 10;
const SETTLE_GROWTH = 1.02;
/** A hold longer than this is the API holding the account, not the pace's doing. */
const LONG_HOLD_MS = 10_000;

/** What is carried over a continue-as-new. */
export interface FleetPaceState {
  rate: number;
  slowStart: boolean;
  lastCutAt: number;
  cutFor: number;
  settling?: boolean;
}

interface Lease {
  want: number;
  accepted: number;
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
   * by SETTLE_GROWTH a second until the next overshoot, then probes gently.
   */
  private settling: boolean;
  private lastIncreaseAt = 0;
  private lastCutAt: number;
  /** The end of the hold of the overshoot last cut for. */
  private cutFor: number;
  /** The account is held until then: calls wait for the hold, not for the rate. */
  private heldUntil = 0;
  private readonly leases = new Map<string, Lease>();

  constructor(state?: Partial<FleetPaceState>) {
    this.rate = positive(state?.rate) ?? INITIAL_RATE;
    this.slowStart = state?.slowStart ?? true;
    this.settling = state?.settling ?? false;
    this.lastCutAt = state?.lastCutAt ?? 0;
    this.cutFor = state?.cutFor ?? 0;
  }

  state(): FleetPaceState {
    return { rate: this.rate, slowStart: this.slowStart, lastCutAt: this.lastCutAt, cutFor: this.cutFor, settling: this.settling };
  }

  /** A worker's report: its share until its next one. */
  report(report: PaceReport, now: number): PaceGrant {
    this.expire(now);
    const ceiling = positive(report.maxRate) ?? Number.POSITIVE_INFINITY;
    const lease: Lease = this.leases.get(report.worker) ?? { want: 0, accepted: 0, rate: 0, until: 0, maxRate: ceiling };
    lease.want = nonNegative(report.want);
    lease.accepted = nonNegative(report.accepted);
    lease.maxRate = ceiling;
    lease.until = now + LEASE_MS;
    this.leases.set(report.worker, lease);
    this.grow(now);
    this.rate = Math.min(this.rate, this.ceiling());
    const others = [...this.leases].filter(([id]) => id !== report.worker).reduce((n, [, l]) => n + l.rate, 0);
    lease.rate = Math.max(0, Math.min(this.fairShare(report.worker), this.rate - others));
    const ids = [...this.leases.keys()].sort();
    return { rate: lease.rate, phase: ids.indexOf(report.worker) / ids.length, accountRate: this.rate, slowStart: this.slowStart };
  }

  /**
   * The fleet was told to hold until `holdEnd` (a 429 a worker took as the limit's): the rate is
   * over the limit. Once per overshoot; a long hold is the API holding the account, not the pace.
   */
  overshoot(holdEnd: number, now: number): void {
    this.heldUntil = Math.max(this.heldUntil, holdEnd);
    if (holdEnd - now > LONG_HOLD_MS || holdEnd <= this.cutFor + SAME_OVERSHOOT_MS) return;
    this.cutFor = holdEnd;
    this.lastCutAt = now;
    this.lastIncreaseAt = now;
    this.expire(now);
    const accepted = [...this.leases.values()].reduce((n, l) => n + l.accepted, 0);
    if (this.slowStart && accepted >= 2) {
      this.slowStart = false;
      this.settling = true;
      this.rate = Math.max(MIN_RATE, Math.min(this.rate, accepted) * 0.9);
    } else if (this.slowStart) {
      this.rate = Math.max(MIN_RATE, this.rate * 0.5);
    } else {
      // (Not to what the API accepted: over a window with holds in it, that is far below the
      // limit, and 429s no pace causes cut the rate to nothing before they were learned.)
      this.settling = false;
      this.rate = Math.max(MIN_RATE, this.rate * 0.9);
    }
    // Every share shrinks with it (each worker also slows by itself when the hold reaches it).
    const scale =
      this.rate /
      Math.max(
        this.rate,
        [...this.leases.values()].reduce((n, l) => n + l.rate, 0),
      );
    for (const lease of this.leases.values()) lease.rate *= scale;
  }

  /** While the fleet wants more than the rate, it grows (once a second). */
  private grow(now: number): void {
    if (now - this.lastIncreaseAt < REPORT_MS || now < this.heldUntil) return;
    const want = [...this.leases.values()].reduce((n, l) => n + l.want, 0);
    if (want <= this.rate) return;
    this.lastIncreaseAt = now;
    // A hold is no room found: the quiet spell counts from its end.
    const quiet = now - Math.max(this.lastCutAt, this.heldUntil) >= QUIET_MS;
    const gentle = Math.min(1, Math.max(0.5, this.rate / GENTLE_BELOW));
    const probe = this.rate + Math.max(MIN_PROBE, this.rate * PROBE_SHARE * gentle);
    this.rate = this.slowStart ? this.rate * 1.5 : quiet ? this.rate * 1.1 : this.settling ? this.rate * SETTLE_GROWTH : probe;
  }

  /** Water-filling by demand: the workers that need less than an equal share get it; the rest share what is left evenly. */
  private fairShare(worker: string): number {
    const wants = [...this.leases].sort(([, a], [, b]) => a.want - b.want);
    let left = this.rate;
    let count = wants.length;
    const shares = new Map<string, number>();
    for (const [id, lease] of wants) {
      const share = Math.min(lease.want, left / count);
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

function nonNegative(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.min(n, 1e6) : 0;
}
