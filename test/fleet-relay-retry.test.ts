/**
 * The fleet's relay of a hold (pacing/fleet-rate-limit.ts) when its wait on the account workflow
 * fails, as every waiting update does when the workflow continues as new: it asks the next run at
 * once, and backs off only while asking keeps failing. (Through a real server: test/fleet-noise.test.ts.)
 */
import type { Client } from '@temporalio/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fleetRateLimits, listenRetryMs } from '../pacing/fleet-rate-limit';

const silentLog = { warn: () => undefined, info: () => undefined, debug: () => undefined };

/** A client whose account workflow answers the relay's waits with `answers`, in turn (an Error: that wait fails). */
function clientAnswering(answers: Array<number | Error>) {
  const waits: number[] = [];
  const handle = {
    executeUpdate: vi.fn(() => {
      waits.push(Date.now());
      const next = answers.shift();
      if (next === undefined) return new Promise<number>(() => undefined); // waits for good
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    }),
  };
  const client = {
    workflow: {
      start: vi.fn(async () => handle),
      getHandle: () => ({ fetchHistory: async () => ({ events: [] }) }),
    },
    withAbortSignal: (_signal: AbortSignal, fn: () => unknown) => fn(),
    options: {},
  } as unknown as Client;
  return { client, waits };
}

describe('the relay after a failed wait', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('asks the next run within 50 ms after a continue-as-new aborted its wait, and hears the hold relayed meanwhile', async () => {
    const until = Date.now() + 5000;
    const { client, waits } = clientAnswering([new Error('workflow update was aborted'), until]);
    const fleet = fleetRateLimits({ client, taskQueue: 'q', workflowId: 'w', log: silentLog });
    const heard: number[] = [];
    await fleet.subscribe((t) => heard.push(t));
    await vi.advanceTimersByTimeAsync(0);
    expect(waits).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(60);
    // Asked again 50 ms after the abort (then waits on, having heard the hold).
    expect(waits.map((t) => t - waits[0]!)).toEqual([0, 50, 50]);
    expect(heard).toEqual([until]);
    void fleet.close();
    await vi.advanceTimersByTimeAsync(1000);
  });

  it('backs off while the waits keep failing, to a second at most', async () => {
    expect([1, 2, 3, 4, 5, 6, 10].map(listenRetryMs)).toEqual([50, 100, 200, 400, 800, 1000, 1000]);
    const failing = Array.from({ length: 4 }, () => new Error('unavailable'));
    const { client, waits } = clientAnswering(failing);
    const fleet = fleetRateLimits({ client, taskQueue: 'q', workflowId: 'w', log: silentLog });
    await fleet.subscribe(() => undefined);
    await vi.advanceTimersByTimeAsync(50 + 100 + 200 + 400 + 10);
    expect(waits.map((t) => t - waits[0]!)).toEqual([0, 50, 150, 350, 750]);
    void fleet.close();
    await vi.advanceTimersByTimeAsync(1000);
  });
});
