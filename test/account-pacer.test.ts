/**
 * The account pacer on its own (activities/account-pacer.ts): labels first without starving
 * polls, Retry-After holding every call, the adaptive rate, and cancellation.
 */
import { describe, expect, it } from 'vitest';
import { AccountPacer, PaceWaitExceeded, pacedCalls, type CallClass } from '../activities/account-pacer';
import { MAX_HOLD_MS } from '../shipping-api/retry-after';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('AccountPacer', () => {
  it('gives free slots to labels first, then order reads, then polls, and one slot in four to a lower class', async () => {
    const pacer = new AccountPacer({ initialRate: 200 });
    pacer.holdUntil(Date.now() + 100);
    const granted: CallClass[] = [];
    const ask = (cls: CallClass) => pacer.acquire(cls).then(() => granted.push(cls));
    const all = [
      ...Array.from({ length: 6 }, () => ask('tracking')),
      ...Array.from({ length: 2 }, () => ask('order')),
      ...Array.from({ length: 6 }, () => ask('label')),
    ];
    await Promise.all(all);
    expect(granted).toHaveLength(14);
    // Labels lead; the fourth grant goes to the oldest waiter of a lower class (a poll, queued first).
    expect(granted.slice(0, 4)).toEqual(['label', 'label', 'label', 'tracking']);
    expect(granted.indexOf('order')).toBeLessThan(granted.lastIndexOf('tracking'));
    const lastLabel = granted.lastIndexOf('label');
    expect(granted.slice(0, lastLabel + 1).filter((c) => c !== 'label').length).toBeLessThanOrEqual(Math.ceil(6 / 3));
  });

  it("holds every call until a 429's Retry-After has passed", async () => {
    const pacer = new AccountPacer({ initialRate: 100 });
    await pacer.acquire('label');
    const limitedAt = Date.now();
    pacer.recordRateLimited(400);
    const times: number[] = [];
    await Promise.all((['label', 'order', 'tracking'] as const).map((cls) => pacer.acquire(cls).then(() => times.push(Date.now()))));
    for (const t of times) expect(t - limitedAt).toBeGreaterThanOrEqual(395);
  });

  it('bounds every hold to 15 minutes from now: a 429, a relayed hold and one read back at start alike', () => {
    let t = Date.parse('2026-11-24T10:00:00Z');
    const pacer = new AccountPacer({ initialRate: 10, now: () => t });
    pacer.recordRateLimited(999_999_999_000); // Retry-After: 999999999 s, ~31.7 years
    expect(pacer.snapshot().notBefore).toBe(t + MAX_HOLD_MS);
    pacer.recordFleetRateLimited(Date.parse('2058-08-02T00:00:00Z'));
    expect(pacer.snapshot().notBefore).toBe(t + MAX_HOLD_MS);
    t += 60_000;
    pacer.holdUntil(Number.POSITIVE_INFINITY);
    expect(pacer.snapshot().notBefore).toBe(t + MAX_HOLD_MS);
    expect(MAX_HOLD_MS).toBe(15 * 60_000);
  });

  it("another worker's relayed Retry-After holds this worker too, and slows it down once it has a share to give up", async () => {
    const fresh = new AccountPacer({ initialRate: 50 });
    fresh.recordFleetRateLimited(Date.now() + 100);
    expect(fresh.snapshot().rate).toBe(50); // just started: holds, but has no share to measure
    const pacer = new AccountPacer({ initialRate: 50 });
    for (let i = 0; i < 10; i++) {
      await pacer.acquire('tracking');
      pacer.recordAccepted();
    }
    const before = pacer.snapshot().rate;
    const until = Date.now() + 300;
    pacer.recordFleetRateLimited(until);
    const started = Date.now();
    await pacer.acquire('tracking');
    expect(Date.now()).toBeGreaterThanOrEqual(until - 5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(pacer.snapshot().rate).toBeLessThan(before);
  });

  it('speeds up while calls wait for it (slow start), and settles below what the API accepted at the first 429', async () => {
    const pacer = new AccountPacer({ initialRate: 10 });
    const stopAt = Date.now() + 2300;
    // A steady backlog: every grant is an accepted call.
    const workers = Array.from({ length: 8 }, async () => {
      while (Date.now() < stopAt) {
        await pacer.acquire('tracking');
        pacer.recordAccepted();
      }
    });
    await Promise.all(workers);
    const grown = pacer.snapshot();
    expect(grown.slowStart).toBe(true);
    expect(grown.rate).toBeGreaterThanOrEqual(20); // 10 → 15 → 22.5
    pacer.recordRateLimited(10);
    const settled = pacer.snapshot();
    expect(settled.slowStart).toBe(false);
    // 90 % of what was accepted over the last 2 s, well under the overshooting slow-start rate.
    expect(settled.rate).toBeLessThan(grown.rate);
    expect(settled.rate).toBeGreaterThan(5);
  });

  it('never goes over a configured ceiling', async () => {
    const pacer = new AccountPacer({ initialRate: 100, maxRate: 20 });
    const started = Date.now();
    for (let i = 0; i < 11; i++) await pacer.acquire('tracking');
    // 10 intervals of at least 50 ms after the first call.
    expect(Date.now() - started).toBeGreaterThanOrEqual(490);
  });

  it('a cancelled wait leaves the queue and rejects with the reason', async () => {
    const pacer = new AccountPacer({ initialRate: 100 });
    pacer.holdUntil(Date.now() + 200);
    const abort = new AbortController();
    const waiting = pacer.acquire('label', abort.signal);
    abort.abort(new Error('activity cancelled'));
    await expect(waiting).rejects.toThrow('activity cancelled');
    expect(pacer.snapshot().waiting.label).toBe(0);
    await sleep(0);
  });

  it('a call allowed a limited wait gives up unsent when its turn does not come, and leaves the queue', async () => {
    const pacer = new AccountPacer({ initialRate: 100 });
    const pacing = pacedCalls(pacer, { rateLimitOf: () => null, answered: () => true });
    pacer.holdUntil(Date.now() + 400);
    let calls = 0;
    const call = async () => ++calls;
    const signal = new AbortController().signal;
    await expect(pacing.run('label', call, signal, 100)).rejects.toBeInstanceOf(PaceWaitExceeded);
    expect(calls).toBe(0);
    expect(pacer.snapshot().waiting.label).toBe(0);
    // A wait long enough gets its turn; without a limit, it waits as long as it takes.
    await expect(pacing.run('label', call, signal, 1_000)).resolves.toBe(1);
    pacer.holdUntil(Date.now() + 300);
    await expect(pacing.run('order', call, signal)).resolves.toBe(2);
  });
});
