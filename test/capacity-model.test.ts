/**
 * The capacity bench's model (bench/capacity.ts) is docs/capacity.md's: given the table's inputs
 * it gives the table's totals, so what the bench validates against the cluster is what users read.
 */
import { describe, expect, it } from 'vitest';
import { predict } from '../bench/capacity';

const DAY = 86_400;

describe('the capacity model', () => {
  it("gives docs/capacity.md's 10,000-a-day column: 181,000 actions, 4.3 API calls a second", () => {
    const day = predict({ shipments: 10_000, trackedSeconds: 5 * DAY, pollIntervalSeconds: DAY / 7, shards: 16, activeSeconds: DAY });
    expect(day.actions).toBeGreaterThan(181_000 * 0.99);
    expect(day.actions).toBeLessThan(181_000 * 1.01);
    // The docs count 7 polls a day over 5 days (35); the run's form adds the first poll at the label.
    expect(day.apiCalls / DAY).toBeCloseTo(4.3, 0);
    expect(day.historyKb).toBe(10_000 * 33);
  });

  it("a shard's day is 3,170 actions: a span every 10 minutes and a heartbeat every 30 s", () => {
    const oneShard = predict({ shipments: 0, trackedSeconds: DAY, pollIntervalSeconds: 60, shards: 1, activeSeconds: DAY });
    expect(Math.round(oneShard.actions)).toBe(3_168);
  });
});
