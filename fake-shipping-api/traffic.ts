/**
 * What the fake has seen: counters per endpoint and status, label outcomes, and a bounded
 * log of API requests for tests that check timing (e.g. nothing sent before Retry-After).
 */
import type { FakeRequest, FakeStats } from './types';

const emptyStats = (): FakeStats => ({
  labelsCreated: 0,
  labelsRejected: 0,
  idempotentReplays: 0,
  idempotencyPayloadMismatches: 0,
  requests: {},
});

export class Traffic {
  /** Label counters are bumped by the create-label route; reset() replaces the whole object. */
  stats = emptyStats();
  private requests: FakeRequest[] = [];

  constructor(private readonly requestLogSize: number) {}

  count(key: string, status: number | 'hang' | 'lost'): void {
    const perStatus = (this.stats.requests[key] ??= {});
    perStatus[String(status)] = (perStatus[String(status)] ?? 0) + 1;
  }

  log(entry: Omit<FakeRequest, 'at'>): void {
    this.requests.push({ at: Date.now(), ...entry });
    // Trimmed in batches, not on every push: a long benchmark logs millions of requests.
    if (this.requests.length > this.requestLogSize * 1.5) this.requests = this.requests.slice(-this.requestLogSize);
  }

  requestLog(): FakeRequest[] {
    return this.requests.slice(-this.requestLogSize);
  }

  /** A deep copy, so a caller's later reads do not change under it. */
  snapshot(): FakeStats {
    return JSON.parse(JSON.stringify(this.stats)) as FakeStats;
  }

  resetStats(): void {
    this.stats = emptyStats();
  }
}
