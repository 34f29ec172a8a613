/**
 * The workers' leases on one account's rate (fleet-pace.ts): what each worker last reported, and
 * its share of the rate, by need (water-filling: a worker that needs less than an equal share gets
 * what it needs, the others split the rest). A share lasts LEASE_MS: a worker that stops reporting
 * leaves it to the others at their next reports, and a grant never makes the shares out exceed
 * the rate. Pure and deterministic: the account workflow runs it.
 */
import { LEASE_MS, type PaceReport } from '../workflow-definitions/account';
import { nonNegative, positive } from './fleet-noise-floor';

/**
 * While the rate per worker is under this (calls a second), a worker's shares go by the higher of
 * its last two wants: a call waiting or not at its report swings its want by more than its share,
 * and shares that moved at every report left part of the rate to nobody until the others' next
 * reports (an account of 2 a second, 4 workers: 0.89 of it spent).
 */
const STEADY_BELOW = 1;

/**
 * A lease as carried: its worker's id beside it (no Infinity in JSON: a ceiling of none is left
 * out; a run of an older build carried no need).
 */
export type CarriedLease = Omit<Lease, 'maxRate' | 'need'> & { worker: string; maxRate?: number; need?: number };

/** At most this many leases are carried (a lease lasts LEASE_MS: one per worker reporting). */
const MAX_CARRIED_LEASES = 1000;

export interface Lease {
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

export class FleetLeases {
  private readonly leases: Map<string, Lease>;

  /** `carried`: the leases a run was started with (FleetPaceState.leases); what is not a lease is left out. */
  constructor(carried?: unknown) {
    this.leases = carriedLeases(carried);
  }

  get size(): number {
    return this.leases.size;
  }

  /** A worker's report renews its lease until LEASE_MS from `now` (its share is granted apart: grant). `rate`: the account's. */
  renew(report: PaceReport, now: number, rate: number): Lease {
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
    const steady = this.leases.has(report.worker) && rate < STEADY_BELOW * (this.leases.size || 1);
    lease.demand = steady ? Math.max(need, lease.need) : need;
    lease.want = want;
    lease.need = need;
    lease.accepted = nonNegative(report.accepted);
    lease.limited = nonNegative(report.limited);
    lease.maxRate = ceiling;
    lease.until = now + LEASE_MS;
    this.leases.set(report.worker, lease);
    return lease;
  }

  /** The worker's share of `rate` until its next report: by need, and no more than the others' leases leave. */
  grant(worker: string, rate: number): number {
    const lease = this.leases.get(worker)!;
    const others = [...this.leases].filter(([id]) => id !== worker).reduce((n, [, l]) => n + l.rate, 0);
    lease.rate = Math.max(0, Math.min(this.fairShare(worker, rate), rate - others));
    return lease.rate;
  }

  /** The shares of the workers before this one (by id): where its span of the grid's slots starts. */
  before(worker: string): number {
    return [...this.leases].filter(([id]) => id < worker).reduce((n, [, l]) => n + l.rate, 0);
  }

  /** Every share shrinks so that they add up to no more than `rate`. */
  fit(rate: number): void {
    const scale = rate / Math.max(rate, this.total('rate'));
    for (const lease of this.leases.values()) lease.rate *= scale;
  }

  /** The fleet's leases summed: rates granted, calls wanted, accepted or refused a second. */
  total(of: 'rate' | 'want' | 'accepted' | 'limited'): number {
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
  countedFully(now: number): boolean {
    for (const lease of this.leases.values()) if (now - lease.since < LEASE_MS) return false;
    return true;
  }

  /** The lowest ceiling (maxRequestsPerSecond) any worker reports: the account's. */
  ceiling(): number {
    return Math.min(...[...this.leases.values()].map((l) => l.maxRate));
  }

  /** Leases that ran out are the others' again. */
  expire(now: number): void {
    for (const [id, lease] of this.leases) if (lease.until <= now) this.leases.delete(id);
  }

  /** The leases as carried over a continue-as-new (no Infinity in JSON). */
  carried(): CarriedLease[] {
    return [...this.leases].map(([worker, { maxRate, ...lease }]) => ({
      worker,
      ...lease,
      ...(Number.isFinite(maxRate) ? { maxRate } : {}),
    }));
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
