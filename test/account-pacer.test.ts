/**
 * The account pacer on its own (pacing/account-pacer.ts): labels first without starving
 * polls, Retry-After holding every call, the adaptive rate, cancellation, and which calls are
 * fresh (their 429s teach the noise floor) and what known noise costs.
 */
import { describe, expect, it, vi } from 'vitest';
import { AccountHeld, AccountPacer, PaceWaitExceeded, pacedCalls, type CallClass, type Turn } from '../pacing/account-pacer';
import { FleetPace } from '../pacing/fleet-pace';
import { MAX_HOLD_MS } from '../shipping-api/retry-after';
import { nextPollDue } from '../domain/tracking';

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

  it("within a class, a lower priority key goes first, then arrival: a live order's label before the backlog's", async () => {
    const pacer = new AccountPacer({ initialRate: 200 });
    pacer.holdUntil(Date.now() + 100);
    const granted: string[] = [];
    const ask = (name: string, cls: CallClass, priority?: number) =>
      pacer.acquire(cls, undefined, undefined, priority).then(() => granted.push(name));
    const all = [
      ask('backlog-1', 'label', 5),
      ask('backlog-2', 'label', 5),
      ask('unset-1', 'label'), // Temporal's default, 3
      ask('poll', 'tracking', 5),
      ask('backlog-3', 'label', 5),
      ask('live-1', 'label', 1),
      ask('live-2', 'label', 1),
    ];
    await Promise.all(all);
    // Labels first and one grant in four to a lower class stay as they were.
    expect(granted).toEqual(['live-1', 'live-2', 'unset-1', 'poll', 'backlog-1', 'backlog-2', 'backlog-3']);
  });

  it('a waiter that gives up leaves its place among waiters of other priorities in order', async () => {
    const pacer = new AccountPacer({ initialRate: 200 });
    pacer.holdUntil(Date.now() + 100);
    const granted: string[] = [];
    const abort = new AbortController();
    const gone = pacer.acquire('label', abort.signal, undefined, 1).catch(() => 'aborted');
    const rest = [pacer.acquire('label', undefined, undefined, 5).then(() => granted.push('backlog'))];
    rest.push(pacer.acquire('label', undefined, undefined, 1).then(() => granted.push('live')));
    abort.abort(new Error('cancelled'));
    expect(await gone).toBe('aborted');
    await Promise.all(rest);
    expect(granted).toEqual(['live', 'backlog']);
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

  it('a relayed hold slows this worker once per overshoot, also when it arrives after the hold ended', () => {
    let t = Date.parse('2026-11-24T10:00:00Z');
    /** A pacer past slow start at 10 a second, with calls accepted in the last 2 s. */
    const settled = () => {
      const pacer = new AccountPacer({ initialRate: 20, now: () => t });
      for (let i = 0; i < 10; i++) pacer.recordAccepted();
      pacer.recordRateLimited(1000); // slow start ends: 90 % of 5 accepted a second
      t += 5000;
      for (let i = 0; i < 10; i++) pacer.recordAccepted();
      return pacer;
    };
    // Another worker's 1 s hold, relayed 1.5 s after it began (a loaded machine): the fleet
    // overshot all the same, and this worker gives up its share.
    const other = settled();
    const before = other.snapshot().rate;
    const until = t + 1000;
    t += 1500;
    other.recordFleetRateLimited(until);
    expect(other.snapshot().rate).toBeCloseTo(before * 0.9, 5);
    // The same overshoot once more (the hold of a call that met it a moment later), relayed
    // after more calls were accepted: no second cut.
    t += 1500;
    for (let i = 0; i < 5; i++) other.recordAccepted();
    other.recordFleetRateLimited(until + 500);
    expect(other.snapshot().rate).toBeCloseTo(before * 0.9, 5);
    // The worker whose 429 it was, its hold relayed back late: slowed once, by its own 429.
    const own = settled();
    const rate = own.snapshot().rate;
    const held = own.recordRateLimited(1000)!;
    t += 2500;
    for (let i = 0; i < 5; i++) own.recordAccepted();
    own.recordFleetRateLimited(held);
    expect(own.snapshot().rate).toBeCloseTo(rate * 0.9, 5);
    // A later overshoot, relayed late: slowed again.
    t += 10_000;
    for (let i = 0; i < 5; i++) own.recordAccepted();
    own.recordFleetRateLimited(t - 500);
    expect(own.snapshot().rate).toBeCloseTo(rate * 0.81, 1);
    // A hold that ended long ago (the channel's first answer at start is the last hold ever
    // recorded) says nothing of the pace now.
    const started = new AccountPacer({ initialRate: 20, now: () => t });
    for (let i = 0; i < 10; i++) started.recordAccepted();
    const pace = started.snapshot().rate;
    started.recordFleetRateLimited(t - 3_600_000);
    expect(started.snapshot().rate).toBe(pace);
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

  it("sharing the fleet's rate, no two workers' calls come closer than the fleet's slot, and the fleet sends no more than its rate", async () => {
    // Four workers share an account capped at 2 calls a second (maxRequestsPerSecond): one has a
    // call every 3 s, so the shares differ and move at every report. On a grid of its own
    // interval from 1970 each, shares apart put the workers' calls anywhere against each other:
    // three at once, over a limit's burst of two (issue 44).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
    try {
      const start = Date.now();
      const fleet = new FleetPace();
      const sent: Array<{ at: number; worker: number }> = [];
      const pacers = Array.from(
        { length: 4 },
        (_, worker) =>
          new AccountPacer({
            maxRate: 2,
            share: (report) =>
              new Promise((resolve) =>
                setTimeout(() => resolve(fleet.report({ ...report, worker: String(worker), maxRate: 2 }, Date.now())), 50),
              ),
          }),
      );
      let stop = false;
      const loop = async (worker: number, thinkMs: number) => {
        while (!stop) {
          await pacers[worker]!.acquire('tracking');
          sent.push({ at: Date.now() - start, worker });
          pacers[worker]!.recordAccepted();
          if (thinkMs > 0) await sleep(thinkMs);
        }
      };
      const loops = [loop(0, 3000), ...[1, 2, 3].flatMap((w) => Array.from({ length: 4 }, () => loop(w, 0)))];
      await vi.advanceTimersByTimeAsync(80_000);
      stop = true;
      for (const pacer of pacers) pacer.close();
      void Promise.allSettled(loops);
      const measured = sent.filter((s) => s.at >= 20_000 && s.at < 80_000);
      const gaps = measured.slice(1).map((s, i) => s.at - measured[i]!.at);
      // The grid's slot: a little over the rate (2 × 1.02² a second at most).
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000 / (2 * 1.02 * 1.02) - 1);
      expect(measured.length).toBeLessThanOrEqual(2 * 60 + 1);
      expect(new Set(measured.map((s) => s.worker)).size).toBe(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a worker whose one caller polls every second is granted what it sends, and the busy worker the rest of the fleet's rate", async () => {
    // Its call waiting at a report once counted as a call a second on top of the one a second it
    // sends: granted half of an account of 4 a second, it left the busy worker calls waiting
    // beside a share it could not use (issue 44: small accounts on four workers at 0.78-0.93).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
    try {
      const start = Date.now();
      const fleet = new FleetPace();
      const sent = [0, 0];
      const pacers = [0, 1].map(
        (worker) =>
          new AccountPacer({
            maxRate: 4,
            share: (report) =>
              new Promise((resolve) =>
                setTimeout(() => resolve(fleet.report({ ...report, worker: String(worker), maxRate: 4 }, Date.now())), 50),
              ),
          }),
      );
      let stop = false;
      const loop = async (worker: number, thinkMs: number) => {
        while (!stop) {
          const due = Date.now();
          await pacers[worker]!.acquire('tracking');
          if (Date.now() - start >= 20_000) sent[worker]! += 1;
          pacers[worker]!.recordAccepted();
          if (thinkMs > 0) await sleep(nextPollDue(due, Date.now(), thinkMs) - Date.now());
        }
      };
      const loops = [loop(0, 1000), ...Array.from({ length: 4 }, () => loop(1, 0))];
      await vi.advanceTimersByTimeAsync(60_000);
      stop = true;
      for (const pacer of pacers) pacer.close();
      void Promise.allSettled(loops);
      // Over seconds 20-60: the lone caller about a call a second, the fleet its whole rate.
      expect(sent[0]! / 40).toBeGreaterThan(0.85);
      expect((sent[0]! + sent[1]!) / 40).toBeGreaterThan(0.95 * 4);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops reporting to the fleet a lease after its last call, though each grant renewed its share, and reports again at its next call', async () => {
    // Waiting for its share to lapse, which every grant renews, an idle worker reported every
    // second for good: an update of nothing wanted to the account workflow each second and account.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
    try {
      const reports: number[] = [];
      const pacer = new AccountPacer({
        share: async () => {
          reports.push(Date.now());
          return { rate: 5, phase: 0, slowStart: false };
        },
      });
      const start = Date.now();
      await pacer.acquire('tracking');
      pacer.recordAccepted();
      await vi.advanceTimersByTimeAsync(60_000);
      // A report at the call, then one a second while the call is within a lease (LEASE_MS, 3 s).
      expect(reports.length).toBeLessThanOrEqual(5);
      expect(Math.max(...reports) - start).toBeLessThanOrEqual(4000);
      const before = reports.length;
      await pacer.acquire('tracking');
      pacer.recordAccepted();
      expect(reports.length).toBe(before + 1);
      pacer.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a worker that began reporting for a single call needs no share once it is sent; a stream of calls keeps its need', async () => {
    // Counted as a stream of one call over its span, a label on a fourth worker held a third to
    // half of an account of 2 a second for two leases while the others' calls waited.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
    try {
      const reports: Array<{ at: number; want: number; need?: number }> = [];
      const grant = async (r: { want: number; need?: number }) => {
        reports.push({ at: Date.now(), want: r.want, need: r.need });
        return { rate: 1, phase: 0, slowStart: false };
      };
      const single = new AccountPacer({ share: grant });
      const start = Date.now();
      await single.acquire('label');
      single.recordAccepted();
      await vi.advanceTimersByTimeAsync(1500);
      const after = reports.filter((r) => r.at > start);
      expect(after.length).toBeGreaterThan(0);
      for (const r of after) expect([r.want, r.need]).toEqual([0, 0]);
      // Another call: needed again (two calls over the span are a stream).
      const second = Date.now();
      const next = single.acquire('label');
      await vi.advanceTimersByTimeAsync(1000);
      await next;
      single.recordAccepted();
      expect(reports.filter((r) => r.at > second).map((r) => r.need! > 0)).toContain(true);
      single.close();

      // A worker sending a call every half second reports a need at every report but its first.
      reports.length = 0;
      const stream = new AccountPacer({ share: async (r) => grant(r).then((g) => ({ ...g, rate: 4 })) });
      const from = Date.now();
      for (let k = 0; k < 12; k++) {
        await stream.acquire('tracking');
        stream.recordAccepted();
        await vi.advanceTimersByTimeAsync(500);
      }
      const later = reports.filter((r) => r.at >= from + 1000);
      expect(later.length).toBeGreaterThan(3);
      for (const r of later) expect(r.need).toBeGreaterThan(0);
      stream.close();
    } finally {
      vi.useRealTimers();
    }
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
    await expect(pacing.run('label', call, signal, { maxWaitMs: 100 })).rejects.toBeInstanceOf(PaceWaitExceeded);
    expect(calls).toBe(0);
    expect(pacer.snapshot().waiting.label).toBe(0);
    // A wait long enough gets its turn; without a limit, it waits as long as it takes.
    await expect(pacing.run('label', call, signal, { maxWaitMs: 1_000 })).resolves.toBe(1);
    pacer.holdUntil(Date.now() + 300);
    await expect(pacing.run('order', call, signal)).resolves.toBe(2);
  });

  it('a call that would rather give its place up than wait out a long hold is told so, unsent, when asking or while it waits', async () => {
    const pacer = new AccountPacer({ initialRate: 100 });
    const pacing = pacedCalls(pacer, { rateLimitOf: () => null, answered: () => true });
    let calls = 0;
    const call = async () => ++calls;
    const signal = new AbortController().signal;
    // A hold under the bound: the call waits it out.
    pacer.holdUntil(Date.now() + 200);
    await expect(pacing.run('label', call, signal, { releaseOverMs: 1_000 })).resolves.toBe(1);
    // Held for longer when it asks.
    const until = Date.now() + 5_000;
    pacer.holdUntil(until);
    await expect(pacing.run('label', call, signal, { releaseOverMs: 1_000 })).rejects.toMatchObject({ name: 'AccountHeld', until });
    // Held for longer while it waits behind a short hold; a call without the bound keeps waiting.
    const other = new AccountPacer({ initialRate: 100 });
    const otherPacing = pacedCalls(other, { rateLimitOf: () => null, answered: () => true });
    other.holdUntil(Date.now() + 300);
    const released = otherPacing.run('order', call, signal, { releaseOverMs: 1_000 }).catch((e: unknown) => e);
    const patient = otherPacing.run('order', call, signal);
    await sleep(50);
    const later = Date.now() + 1_500;
    other.holdUntil(later);
    expect(await released).toBeInstanceOf(AccountHeld);
    expect(other.snapshot().waiting.order).toBe(1);
    await expect(patient).resolves.toBe(2);
    expect(Date.now()).toBeGreaterThanOrEqual(later);
    expect(calls).toBe(2);
  });

  describe('429s it did not cause', () => {
    /** A pacer on the fake clock that had `perSecond` calls a second accepted for 5 s. */
    async function busyPacer(perSecond = 10, learnNoise = true, pace = 10, fleetRelays = false) {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
      const pacer = new AccountPacer({ initialRate: pace, maxRate: pace, learnNoise, fleetRelays });
      for (let i = 0; i < 5 * perSecond; i++) {
        pacer.recordAccepted(await granted(pacer.acquire('tracking')));
        await vi.advanceTimersByTimeAsync(1000 / perSecond - 10);
      }
      return pacer;
    }
    /** The turn and when it came, the fake clock run on until it does. */
    async function granted(turn: Promise<Turn>): Promise<Turn & { at: number }> {
      let got: (Turn & { at: number }) | null = null;
      void turn.then((t) => (got = { ...t, at: Date.now() }));
      do await vi.advanceTimersByTimeAsync(10);
      while (got === null);
      return got;
    }
    /** The next `n` turns, each answered as `answer` says (true: a 429 of 1 s): when each was granted, and whether it was fresh. */
    async function turns(pacer: AccountPacer, n: number, answer: (i: number) => boolean = () => false) {
      const all: Array<{ at: number; fresh: boolean }> = [];
      for (let i = 0; i < n; i++) {
        const turn = await granted(pacer.acquire('tracking'));
        all.push({ at: turn.at, fresh: turn.fresh });
        if (answer(i)) pacer.recordRateLimited(1000, turn);
        else pacer.recordAccepted(turn);
      }
      return all;
    }
    /** Accepted calls 600 ms apart until one is granted at `until` or later; `each` is told of every turn's time. */
    async function callsEvery600ms(pacer: AccountPacer, until: number, each: (at: number) => void = () => {}) {
      const all: Array<{ at: number; fresh: boolean }> = [];
      while (all.length === 0 || all.at(-1)!.at < until) {
        const turn = await granted(pacer.acquire('tracking'));
        all.push({ at: turn.at, fresh: turn.fresh });
        pacer.recordAccepted(turn);
        each(turn.at);
        await vi.advanceTimersByTimeAsync(600);
      }
      return all;
    }

    /** A busy pacer that learned a noise floor (every tenth fresh call refused), and then sent 20 calls. */
    async function noisyPacer(): Promise<AccountPacer> {
      const pacer = await busyPacer();
      while (pacer.snapshot().noiseShare === null) {
        pacer.recordRateLimited(1000);
        await vi.advanceTimersByTimeAsync(1000);
        await turns(pacer, 10, (i) => i === 9);
      }
      await turns(pacer, 20);
      return pacer;
    }

    it("sharing the fleet's rate, marks no call fresh while the fleet's rate is in slow start: it may be far over the limit", async () => {
      // An account of 2 a second on one worker: slow start overshot to 3.75 a second, and the
      // calls after a hold, within what the API accepted of it, met a limit that had not refilled;
      // two such 429s taught it a floor of 0.13, and a third of its calls 429 (bench pacing).
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
      try {
        for (const slowStart of [true, false]) {
          const pacer = new AccountPacer({ share: async () => ({ rate: 5, phase: 0, slowStart }) });
          for (let i = 0; i < 25; i++) pacer.recordAccepted(await granted(pacer.acquire('tracking')));
          pacer.recordRateLimited(1000);
          const after = await turns(pacer, 5);
          expect(after.some((c) => c.fresh)).toBe(!slowStart);
          pacer.close();
        }
      } finally {
        vi.useRealTimers();
      }
    });

    it("sharing the fleet's rate, marks the calls after a hold fresh up to the fleet's freshShare of its share, if more than its own bound", async () => {
      // Before the floor is known the noise cuts the fleet's rate to 1-3 calls a second, where the
      // worker's own bound (half its share, or what the API accepted of it, holds counted) left
      // 1-2 fresh calls a hold; the fleet knows when its rate is under what the API accepted of
      // it lately (fleet-pace.ts, freshShare).
      async function freshAfterHold(freshShare: number): Promise<boolean[]> {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
        const pacer = new AccountPacer({ share: async () => ({ rate: 4, phase: 0, slowStart: false, freshShare }) });
        try {
          // The API accepted 2 a second of it (every other second held, say).
          for (let i = 0; i < 10; i++) {
            pacer.recordAccepted(await granted(pacer.acquire('tracking')));
            await vi.advanceTimersByTimeAsync(490);
          }
          pacer.holdUntil(Date.now() + 1000);
          return (await turns(pacer, 12)).map((c) => c.fresh);
        } finally {
          pacer.close();
          vi.useRealTimers();
        }
      }
      // Its own bound: 90 % of 2 at once and 2 more a second, while calls go out at 4 a second.
      expect(await freshAfterHold(0)).toEqual([true, true, ...Array(10).fill(false)]);
      // The fleet's: 90 % of its share of 4, at once and every second: the 3 s of calls at 4 a second.
      expect(await freshAfterHold(1)).toEqual(Array(12).fill(true));
    });

    it('marks the calls of the 3 s after a hold of a second fresh, while they stay within what the API accepted before', async () => {
      try {
        const pacer = await busyPacer();
        expect((await turns(pacer, 1))[0]!.fresh).toBe(false); // no hold yet
        pacer.recordRateLimited(1000);
        const heldUntil = pacer.snapshot().notBefore;
        // 10 accepted a second before the hold: 10 at once and 10 more each second, more than the pace sends.
        const after = await turns(pacer, 40);
        expect(after.filter((c) => c.at < heldUntil + 3000).every((c) => c.fresh)).toBe(true);
        expect(after.filter((c) => c.at >= heldUntil + 3000).some((c) => c.fresh)).toBe(false);
        expect(after.filter((c) => c.fresh).length).toBeGreaterThanOrEqual(15);
        pacer.recordRateLimited(500); // a hold shorter than a second: a limit may not have refilled
        expect((await turns(pacer, 3)).some((c) => c.fresh)).toBe(false);
      } finally {
        vi.useRealTimers();
      }
    });

    it("sharing the fleet's rate, marks the calls of the 10 s after a hold fresh while they stay within the bound, not only those of the 3 s", async () => {
      // Before the noise is known each 429 holds the fleet 1-5 s at 2-3 calls a second: a few
      // fresh calls a hold, and the slowest runs learned 10 % noise only at second 43-87.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
      const pacer = new AccountPacer({ share: async () => ({ rate: 2, phase: 0, slowStart: false, freshShare: 1 }) });
      try {
        for (let i = 0; i < 10; i++) pacer.recordAccepted(await granted(pacer.acquire('tracking')));
        const heldUntil = Date.now() + 1000;
        pacer.holdUntil(heldUntil);
        // Under the bound (90 % of the share of 2 at once, and every second since): a call every 0.6 s.
        const after = await callsEvery600ms(pacer, heldUntil + 12_000);
        const within = after.filter((c) => c.at >= heldUntil + 3000 && c.at < heldUntil + 10_000);
        expect(within.length).toBeGreaterThanOrEqual(10);
        expect(within.every((c) => c.fresh)).toBe(true);
        expect(after.filter((c) => c.at >= heldUntil + 10_000).some((c) => c.fresh)).toBe(false);
      } finally {
        pacer.close();
        vi.useRealTimers();
      }
    });

    it("sharing the fleet's rate, marks the calls after the first 3 s of a hold fresh only while the fleet's rate grew no more than 5 % since its lowest", async () => {
      // Settling after slow start grew a rate cut from counts the limit's burst inflated past
      // the limit: the other workers' calls went past their bounds, and this worker's fresh
      // ones met the limit's 429s 5-7 s after the hold, which were learned as noise.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
      let accountRate = 8;
      const pacer = new AccountPacer({ share: async () => ({ rate: 2, phase: 0, slowStart: false, freshShare: 1, accountRate }) });
      try {
        for (let i = 0; i < 10; i++) pacer.recordAccepted(await granted(pacer.acquire('tracking')));
        const heldUntil = Date.now() + 1000;
        pacer.holdUntil(heldUntil);
        // The fleet's rate, 8 until 4 s after the hold, grows 2 % a second (settling).
        const after = await callsEvery600ms(pacer, heldUntil + 9000, (at) => {
          if (at >= heldUntil + 4000) accountRate *= 1.02 ** 0.6;
        });
        expect(after.filter((c) => c.at < heldUntil + 3000).every((c) => c.fresh)).toBe(true);
        expect(after.filter((c) => c.at >= heldUntil + 3000 && c.at < heldUntil + 5000).some((c) => c.fresh)).toBe(true);
        expect(after.filter((c) => c.at >= heldUntil + 8000).some((c) => c.fresh)).toBe(false);
      } finally {
        pacer.close();
        vi.useRealTimers();
      }
    });

    it('in a fleet, marks the calls after a hold fresh only if the fleet channel brought the hold back before it ended', async () => {
      try {
        const pacer = await busyPacer(10, true, 10, true);
        // Its own 429, never relayed back (a channel slower than the hold): the other workers
        // called through it, so the limit did not refill; no call after it is fresh.
        pacer.recordRateLimited(1000);
        expect((await turns(pacer, 10)).some((c) => c.fresh)).toBe(false);
        // Its next 429, relayed back 300 ms later: the fleet held with it.
        await vi.advanceTimersByTimeAsync(3000);
        const until = pacer.recordRateLimited(1000)!;
        await vi.advanceTimersByTimeAsync(300);
        pacer.recordFleetRateLimited(until);
        expect((await turns(pacer, 3)).every((c) => c.fresh)).toBe(true);
        // A relay that comes back after the hold ended changes nothing.
        await vi.advanceTimersByTimeAsync(3000);
        const late = pacer.recordRateLimited(1000)!;
        await vi.advanceTimersByTimeAsync(1500);
        pacer.recordFleetRateLimited(late);
        expect((await turns(pacer, 3)).some((c) => c.fresh)).toBe(false);
      } finally {
        vi.useRealTimers();
      }
    });

    it("sharing the fleet's rate, a hold another worker relays counts from a second before its end: the calls after a Retry-After of 1 s relayed late are fresh", async () => {
      // Counted from the relay, a Retry-After of 1 s relayed in 300 ms held this worker 0.7 s,
      // under FRESH_HOLD_MS: a third of the noise 429s left the other workers no fresh call.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
      const pacer = new AccountPacer({ fleetRelays: true, share: async () => ({ rate: 4, phase: 0, slowStart: false, freshShare: 1 }) });
      try {
        for (let i = 0; i < 20; i++) pacer.recordAccepted(await granted(pacer.acquire('tracking')));
        pacer.recordFleetRateLimited(Date.now() + 700);
        const after = await turns(pacer, 6);
        expect(after.filter((c) => c.fresh).length).toBeGreaterThanOrEqual(3);
        // A hold shorter than its Retry-After's second from the start is no hold of a second.
        pacer.recordRateLimited(500);
        expect((await turns(pacer, 3)).some((c) => c.fresh)).toBe(false);
      } finally {
        pacer.close();
        vi.useRealTimers();
      }
    });

    it('marks no more calls fresh than what the API accepted before, or half the pace, allows', async () => {
      /** The calls after a hold of a second that are fresh, when the API accepted 2 a second before it at `pace`. */
      async function freshAfterHold(pace: number): Promise<boolean[]> {
        try {
          const pacer = await busyPacer(2, true, pace);
          pacer.holdUntil(Date.now() + 1000); // relayed: no cut, the pace after it stays
          return (await turns(pacer, 20)).map((c) => c.fresh);
        } finally {
          vi.useRealTimers();
        }
      }
      // At 4 a second, half the pace is no more than the 2 accepted: 2 at once, 2 more a second,
      // while calls go out at 4 a second: the first 3.
      expect(await freshAfterHold(4)).toEqual([...Array(3).fill(true), ...Array(17).fill(false)]);
      // At 10 a second (a pace 429s did not cut), half of it: 5 at once and 5 more a second: the first 9.
      expect(await freshAfterHold(10)).toEqual([...Array(9).fill(true), ...Array(11).fill(false)]);
    });

    it('with SHIPPING_API_429_NOISE=off, learns nothing from fresh calls: every 429 holds and slows', async () => {
      try {
        const pacer = await busyPacer(10, false);
        for (let i = 0; i < 6; i++) {
          expect(pacer.recordRateLimited(1000)).not.toBeNull();
          await vi.advanceTimersByTimeAsync(1000);
          await turns(pacer, 10, (j) => j === 9);
        }
        pacer.seedFresh({ answers: 300, limited: 30 });
        pacer.adoptFleetFresh({ answers: 300, limited: 30 });
        expect(pacer.snapshot().noiseShare).toBeNull();
        expect(pacer.wantsFleetFresh()).toBe(false);
        expect(pacer.recordRateLimited(1000)).not.toBeNull();
      } finally {
        vi.useRealTimers();
      }
    });

    it('holds and slows at every 429 until fresh calls show noise; then a 429 within it holds only its own call', async () => {
      try {
        const pacer = await busyPacer();
        // Every tenth fresh call refused: each 429 still holds the account and cuts the rate ...
        let refused = 0;
        while (pacer.snapshot().noiseShare === null && refused < 10) {
          const limitedAt = Date.now();
          expect(pacer.recordRateLimited(1000)).not.toBeNull();
          expect(pacer.nextCallAt()).toBeGreaterThanOrEqual(limitedAt + 1000);
          refused++;
          await vi.advanceTimersByTimeAsync(1000);
          await turns(pacer, 10, (i) => i === 9);
        }
        // ... until the share of 429s among fresh calls is known for noise.
        expect(pacer.snapshot().noiseShare).toBeGreaterThan(0.05);
        expect(pacer.snapshot().slowStart).toBe(true); // the cuts it made are searched back
        await turns(pacer, 20);
        const before = pacer.snapshot().rate;
        expect(pacer.recordRateLimited(3000)).toBeNull();
        expect(pacer.nextCallAt()).toBeLessThan(Date.now() + 1000);
        expect(pacer.snapshot().rate).toBe(before);
        // Far more 429s than the noise's share: the pace is over a limit again.
        let taken = 0;
        for (let i = 0; i < 20; i++) if (pacer.recordRateLimited(1000, await granted(pacer.acquire('tracking'))) !== null) taken++;
        expect(taken).toBeGreaterThan(0);
        expect(pacer.snapshot().rate).toBeLessThan(before);
      } finally {
        vi.useRealTimers();
      }
    });

    it('over known noise, a 429 with a long Retry-After (the API holding the account) still holds the fleet, and slows nothing', async () => {
      try {
        const pacer = await noisyPacer();
        const before = pacer.snapshot().rate;
        // Taken for noise, it held only its own call: every other call of the account went out
        // and met its own 30 s 429 (bench accounts: a held account's first attempts each did).
        const heldAt = Date.now();
        expect(pacer.recordRateLimited(30_000)).toBe(heldAt + 30_000);
        expect(pacer.nextCallAt()).toBeGreaterThanOrEqual(heldAt + 30_000);
        expect(pacer.snapshot().rate).toBe(before);
        await expect(
          pacedCalls(pacer, { rateLimitOf: () => null, answered: () => true }).run(
            'label',
            async () => 'sent',
            new AbortController().signal,
            { releaseOverMs: 10_000 },
          ),
        ).rejects.toBeInstanceOf(AccountHeld);
      } finally {
        vi.useRealTimers();
      }
    });

    it("over known noise, a 429 that shows a limit holds the fleet for the limit's Retry-After, not the longer one a noise 429 named", async () => {
      try {
        const pacer = await noisyPacer();
        const told: number[] = [];
        const calls = pacedCalls(
          pacer,
          { rateLimitOf: (err) => (err instanceof Error ? { retryAfterMs: Number(err.message) } : null), answered: () => true },
          (until) => told.push(until),
        );
        // A burst of 429s far over the noise's share: the pace is over a limit, whose 429s name
        // 1 s; every other one is noise that names 5 s.
        const refusedAt: number[] = [];
        for (let i = 0; i < 40 && told.length === 0; i++) {
          const retryAfter = i % 2 === 0 ? '1000' : '5000';
          const call = calls.run('tracking', () => Promise.reject(new Error(retryAfter)), new AbortController().signal).catch(() => {});
          let done = false;
          void call.then(() => (done = true));
          do await vi.advanceTimersByTimeAsync(10);
          while (!done);
          refusedAt.push(Date.now());
        }
        expect(told).toHaveLength(1);
        expect(told[0]! - refusedAt.at(-1)!).toBeLessThanOrEqual(1000);
        expect(pacer.snapshot().notBefore).toBe(told[0]);
      } finally {
        vi.useRealTimers();
      }
    });
  });
});
