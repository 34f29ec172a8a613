/** What the fake has seen: requests per route and status, injected faults, applied writes. */
import type { FakeWooStats } from './types';

const emptyStats = (): FakeWooStats => ({
  requests: 0,
  byRoute: {},
  orderLists: {},
  byStatus: {},
  rateLimited: 0,
  unavailable: 0,
  gatewayTimeouts: 0,
  serverErrors: 0,
  dropped: 0,
  droppedAfterCommit: 0,
  hung: 0,
  slow: 0,
  lateWrites: 0,
  callsBeforeRetryAfter: 0,
  storeCallsBeforeRetryAfter: 0,
  writesApplied: {},
  webhookDeliveriesAttempted: 0,
  webhookDeliveriesSucceeded: 0,
  webhookDeliveriesFailed: 0,
  webhookDeliveriesDropped: 0,
  webhooksDisabled: 0,
});

type Counter = Exclude<keyof FakeWooStats, 'byRoute' | 'orderLists' | 'byStatus' | 'writesApplied' | 'requests'>;

export class WooTraffic {
  private stats = emptyStats();

  request(route: string): void {
    this.stats.requests += 1;
    this.stats.byRoute[route] = (this.stats.byRoute[route] ?? 0) + 1;
  }

  /** A list of orders, by its kind: which of our reads asked (orders by id, changes since, or another list). */
  orderList(params: URLSearchParams): void {
    const kind = params.has('include') ? 'include' : params.has('modified_after') ? 'modified_after' : 'other';
    const key = `${kind} status=${(params.get('status') ?? 'any').slice(0, 80)}`;
    this.stats.orderLists[key] = (this.stats.orderLists[key] ?? 0) + 1;
  }

  status(status: number): void {
    this.stats.byStatus[String(status)] = (this.stats.byStatus[String(status)] ?? 0) + 1;
  }

  bump(counter: Counter): void {
    this.stats[counter] += 1;
  }

  writeApplied(route: string): void {
    this.stats.writesApplied[route] = (this.stats.writesApplied[route] ?? 0) + 1;
  }

  /** A deep copy, so a caller's later reads do not change under it. */
  snapshot(): FakeWooStats {
    return JSON.parse(JSON.stringify(this.stats)) as FakeWooStats;
  }

  reset(): void {
    this.stats = emptyStats();
  }
}
