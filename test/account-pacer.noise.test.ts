/**
 * The account pacer against a simulated API on the fake clock (test/helpers/pacer-sim.ts): a
 * real limit, 429s no pace causes (10 % of calls refused at random, Retry-After 1-5 s, as the
 * chaos run's --keep-429s), both, noise that stops, a limit that halves, and two workers. A
 * limit's 429s must still hold and slow the pace, and never be taken for noise; known noise
 * must cost only its own retries. Each noisy case runs with several seeds.
 */
import { describe, expect, it } from 'vitest';
import { simulate, type SimRun } from './helpers/pacer-sim';

const SEEDS = [1, 2, 3];
const NOISE = { noise: () => 0.1, noiseRetryAfterS: [1, 5] as [number, number] };
/** 60 loops always have a call to make, far more than a limit of 40 a second lets through. */
const BACKLOG = { clients: 60 };

/** The first second from which every worker knows the noise to the end of the run, or null. */
function learnedAt(run: SimRun): number | null {
  let at = run.seconds.length;
  while (at > 0 && run.seconds[at - 1]!.workers.every((w) => w.noiseShare !== null)) at--;
  return at < run.seconds.length ? at : null;
}

describe('AccountPacer and 429s it did not cause (simulated)', () => {
  it.each([1, 2])(
    'under a real limit alone (%i workers) it spends the limit with at most 1 % 429s, and takes none for noise',
    async (workers) => {
      const run = await simulate({ seconds: 240, limit: () => 40, demand: BACKLOG, workers });
      expect(run.acceptedPerSecond(120, 240)).toBeGreaterThanOrEqual(0.95 * 40);
      expect(run.share429(120, 240)).toBeLessThanOrEqual(0.01);
      expect(run.seconds.every((s) => s.workers.every((w) => w.noiseShare === null))).toBe(true);
    },
  );

  it('an account of 5 calls a second shared by two workers: its limit spent with at most 1 % 429s, none taken for noise', async () => {
    // Both workers start at the pacer's own initial pace. At 10 a second each (four times the
    // limit) the calls after a hold were refused by the limit, taken for noise, and 429s ran at 43 %.
    const run = await simulate({ seconds: 240, limit: () => 5, demand: { clients: 30 }, workers: 2 });
    expect(run.acceptedPerSecond(120, 240)).toBeGreaterThanOrEqual(0.95 * 5);
    expect(run.share429(120, 240)).toBeLessThanOrEqual(0.01);
    expect(run.seconds.every((s) => s.workers.every((w) => w.noiseShare === null))).toBe(true);
  });

  it.each([
    { limit: 5, workers: 3, relayMs: 300 },
    { limit: 5, workers: 3, relayMs: 800 },
    { limit: 3, workers: 4, relayMs: 800 },
    { limit: 2, workers: 2, relayMs: 800 },
  ])(
    'an account of $limit calls a second, $workers workers taking its calls at random, holds relayed in $relayMs ms: none of its 429s taken for noise',
    async ({ limit, workers, relayMs }) => {
      // The worker whose 429 set a hold counted its calls after it as fresh, though the others
      // had called on until the relay reached them and the limit had not refilled a second's
      // worth; and at 1 call a second each, four workers overran an account of 2 for good. Both
      // taught small accounts floors of 0.07-0.33, and a third to a half of their calls 429.
      const run = await simulate({
        seconds: 200,
        limit: () => limit,
        demand: { clients: 30 },
        workers,
        relayMs,
        roundTripMs: 100,
        workerOf: (_loop, random) => Math.floor(random() * workers),
      });
      expect(run.seconds.every((s) => s.workers.every((w) => w.noiseShare === null))).toBe(true);
      expect(run.share429(100, 200)).toBeLessThanOrEqual(0.05);
    },
  );

  it.each([
    { relayMs: 1000, pollers: [5, 5] },
    { relayMs: 2500, pollers: [5, 5] },
    { relayMs: 1000, pollers: [7, 3] },
    { relayMs: 2500, pollers: [6, 4] },
  ])(
    'an account of 5 calls a second, two workers, relays as slow as its 1 s holds or slower ($relayMs ms, pollers $pollers): every worker slows at each overshoot, and the small account is probed gently',
    async ({ relayMs, pollers }) => {
      // Tracking pollers polling every second, pinned to their worker (a poller span runs on one),
      // 10 a second of demand for a limit of 5. A hold relayed after it had ended slowed nobody:
      // only the worker whose call met the 429 gave up its share, the other's pace grew on, and
      // the fleet overshot twice as often (1.2-1.8 % 429s; the bench's a5: 1.2-1.7 %). Then,
      // probed at 0.5 % a second, 0.75-0.9 %: a target of 1 % with no room for the bench's
      // extra 429s (calls in flight at an overshoot, uneven relays); at 0.25 %, 0.42 %.
      const run = await simulate({
        seconds: 300,
        limit: () => 5,
        demand: { clients: 10, thinkMs: 1000 },
        workerOf: (loop) => (loop < pollers[0]! ? 0 : 1),
        workers: 2,
        relayMs,
        roundTripMs: 50,
        // Each worker finding its own share (SHIPPING_API_PACE_SHARES=worker): with the fleet's
        // one rate and reports answered as slowly as these relays, 0.896 of the limit at 1000 ms.
        shares: 'worker',
      });
      expect(run.acceptedPerSecond(60, 300)).toBeGreaterThanOrEqual(0.95 * 5);
      expect(run.share429(60, 300)).toBeLessThanOrEqual(0.006);
      expect(run.seconds.every((s) => s.workers.every((w) => w.noiseShare === null))).toBe(true);
    },
  );

  it.each([
    // With relays of a second the fleet has 1.6 % 429s without any hold.
    { relayMs: 300, most429: 0.01 },
    { relayMs: 1000, most429: 0.02 },
  ])(
    'an account of 5 calls a second held by a long Retry-After, answered again after each hold: none of it taken for noise, the limit spent after (relays $relayMs ms)',
    async ({ relayMs, most429 }) => {
      // Twice for 70 s every call is answered 429 with Retry-After 30 s (the API holding the
      // account): the first call after each hold is refused again. Counted as fresh answers,
      // those 429s taught the fleet a floor of 0.19. Taken as the pace's doing, they cut it
      // three times, and a minute without a 429 (the hold) then grew it by a tenth a second:
      // with relays of a second, the limit's 429s of that overshoot were taken for noise. Both
      // ran on at a third to a half of the calls 429.
      const held = (t: number) => ((t >= 60 && t < 130) || (t >= 200 && t < 270) ? 1 : 0);
      const run = await simulate({
        seconds: 500,
        limit: () => 5,
        noise: held,
        noiseRetryAfterS: [30, 30],
        demand: { clients: 30 },
        workers: 2,
        relayMs,
      });
      expect(run.seconds.every((s) => s.workers.every((w) => w.noiseShare === null))).toBe(true);
      expect(run.acceptedPerSecond(320, 500)).toBeGreaterThanOrEqual(0.95 * 5);
      expect(run.share429(300, 500)).toBeLessThanOrEqual(most429);
    },
  );

  it.each([
    { relayMs: 2000, roundTripMs: 20, workers: 3 },
    { relayMs: 3000, roundTripMs: 300, workers: 3 },
    { relayMs: 1500, roundTripMs: 100, workers: 4 },
  ])(
    'an account of 5 calls a second, workers unevenly busy, relays slower than its 1 s holds ($relayMs ms, $workers workers): none of its 429s taken for noise',
    async ({ relayMs, roundTripMs, workers }) => {
      // A loaded machine relays a hold 1.5-5 s late (bench accounts). The other workers call
      // through a worker's 1 s hold, so the calls after it meet a limit that has not refilled.
      // Counted as fresh, 2 such 429s in 50 taught a floor of 0.04, whose margin then let 40-50 %
      // of the calls 429 (the bench's a5: 14-30 %).
      const run = await simulate({ seconds: 300, limit: () => 5, demand: { clients: 31 }, workers, relayMs, roundTripMs });
      expect(run.seconds.every((s) => s.workers.every((w) => w.noiseShare === null))).toBe(true);
      expect(run.acceptedPerSecond(120, 300)).toBeGreaterThanOrEqual(0.95 * 5);
      // Each worker holds and slows by its own 429s alone: more of them than with a quick channel.
      expect(run.share429(120, 300)).toBeLessThanOrEqual(0.05);
    },
  );

  it('against a limiter that counts refused calls too (2 workers), it still spends the limit with at most 1 % 429s', async () => {
    const run = await simulate({ seconds: 240, limit: () => 40, demand: BACKLOG, workers: 2, refusedTakesToken: true });
    expect(run.acceptedPerSecond(120, 240)).toBeGreaterThanOrEqual(0.95 * 40);
    expect(run.share429(120, 240)).toBeLessThanOrEqual(0.01);
  });

  it('follows a limit that halves, and takes none of its 429s for noise', async () => {
    const run = await simulate({ seconds: 240, limit: (t) => (t < 120 ? 40 : 20), demand: BACKLOG });
    expect(run.acceptedPerSecond(150, 240)).toBeGreaterThanOrEqual(0.95 * 20);
    expect(run.share429(150, 240)).toBeLessThanOrEqual(0.01);
    expect(run.seconds.every((s) => s.noiseShare === null)).toBe(true);
  });

  it.each([
    [5, 3, 2],
    [40, 20, 4],
  ])(
    'follows a limit that falls from %i to %i a second under a limiter charging refused calls (%i workers), and keeps no floor from it',
    async (from, to, workers) => {
      // The first holds' fresh calls go at up to what the API accepted before the fall, and the
      // fallen limit refused them: learned as noise, the search the floor restarted met a limit
      // it could not tell from the floor (5 to 3: half the calls 429s for a minute).
      const run = await simulate({
        seconds: 240,
        limit: (t) => (t < 120 ? from : to),
        demand: { clients: Math.max(6, Math.ceil(from * 1.5)), thinkMs: 1000 },
        workers,
        workerOf: (loop) => loop % workers,
        refusedTakesToken: true,
      });
      expect(run.acceptedPerSecond(150, 240)).toBeGreaterThanOrEqual(0.95 * to);
      expect(run.share429(150, 240)).toBeLessThanOrEqual(0.02);
      expect(run.seconds[239]!.fleet?.noise).toBe(0);
    },
  );

  it.each([110, 115, 120, 125, 130])(
    'follows a limit that falls from 40 to 20 a second at second %i under a limiter charging refused calls (4 workers): at least 0.95 of it, at most 1 % 429s, no floor kept',
    async (at) => {
      // After the fall the known-good pace stayed the old limit's for 5 minutes, so every call
      // after a hold counted as fresh, and the deficit of each overshoot refused them: a floor
      // learned a minute after the fall, kept to the end from the falls at 110 and 125 (10.56 and
      // 8.54 % 429s), the search it restarted growing blind past the limit. And a refuted floor's
      // search ended from counts of the deficit that growth dug: 0.80-0.88 of the new limit at four
      // of the five moments.
      const run = await simulate({
        seconds: at + 120,
        limit: (t) => (t < at ? 40 : 20),
        demand: { clients: 60, thinkMs: 1000 },
        workers: 4,
        workerOf: (loop) => loop % 4,
        refusedTakesToken: true,
      });
      expect(run.acceptedPerSecond(at + 30, at + 120)).toBeGreaterThanOrEqual(0.95 * 20);
      expect(run.share429(at + 30, at + 120)).toBeLessThanOrEqual(0.01);
      expect(run.seconds[at + 119]!.fleet?.noise).toBe(0);
    },
  );

  it.each(SEEDS)('with 10 %% of 429s and no limit in reach, it learns the noise and then keeps up with demand (seed %i)', async (seed) => {
    // Orders come in at 100 calls a second; the account would take far more.
    const demand = { perSecond: 100 };
    const clean = await simulate({ seconds: 240, limit: () => null, demand, seed });
    const noisy = await simulate({ seconds: 240, limit: () => null, ...NOISE, demand, seed });
    const learned = learnedAt(noisy);
    expect(learned).not.toBeNull();
    expect(learned!).toBeLessThanOrEqual(150);
    // A floor, not a limit's strays (0.002): learned from as few as 2 of 40 fresh answers (0.05
    // for 10 %), and once known the noise holds nothing, so no fresh calls come to refine it.
    expect(noisy.seconds[239]!.noiseShare).toBeGreaterThanOrEqual(0.05);
    // Once known, noise costs only its own retries: the backlog of the learning goes, and new
    // calls no longer wait for the pace.
    expect(noisy.acceptedPerSecond(150, 240)).toBeGreaterThanOrEqual(0.8 * clean.acceptedPerSecond(150, 240));
    expect(noisy.paceWaitMs(210, 240, 0.95)).toBeLessThanOrEqual(1000);
  });

  it.each(SEEDS)(
    'with 10 %% of 429s beside a real limit (2 workers), it spends at least 0.87 of what the limit alone allows (seed %i)',
    async (seed) => {
      // Each worker finding its own share: under the fleet's one rate, noise beside a limit is not
      // learned within the run yet (docs/retries-and-pacing.md, what it gets wrong).
      const shares = 'worker';
      const clean = await simulate({ seconds: 240, limit: () => 40, demand: BACKLOG, workers: 2, seed, shares });
      const noisy = await simulate({ seconds: 240, limit: () => 40, ...NOISE, demand: BACKLOG, workers: 2, seed, shares });
      expect(learnedAt(noisy)).not.toBeNull();
      // The noise takes its tokens before it refuses: 0.9 is all there is. One overshoot holds
      // the fleet once, for the limit's Retry-After, and every worker that sends slows down.
      expect(noisy.acceptedPerSecond(120, 240)).toBeGreaterThanOrEqual(0.87 * clean.acceptedPerSecond(120, 240));
      // The limit still holds the pace: its own 429s stay within what the noise's margin hides
      // (they use none of its tokens; a tighter margin cost the bench more in false alarms).
      expect(noisy.limitShare(120, 240)).toBeLessThanOrEqual(0.1);
    },
  );

  it.each(SEEDS)(
    'with 10 %% of 429s from the start beside a limit (2 workers), the fleet knows them within 30 s and spends the limit after (seed %i)',
    async (seed) => {
      // Before the noise is known each 429 holds the fleet for its Retry-After (1-5 s): the
      // fleet sends about 2 calls a second, so the fresh calls must be had from the pace too.
      // Each worker finding its own share, as above.
      const run = await simulate({
        seconds: 60,
        limit: () => 20,
        ...NOISE,
        demand: BACKLOG,
        workers: 2,
        seed,
        initialRate: 10,
        shares: 'worker',
      });
      expect(learnedAt(run)).not.toBeNull();
      expect(learnedAt(run)!).toBeLessThanOrEqual(30);
      expect(run.acceptedPerSecond(30, 60)).toBeGreaterThanOrEqual(0.8 * 0.9 * 20);
    },
  );

  it.each(SEEDS)(
    'when the noise stops, it is forgotten and the pace is back to the limit with at most 1 %% 429s (seed %i)',
    async (seed) => {
      const run = await simulate({
        seconds: 300,
        limit: () => 40,
        noise: (t) => (t < 120 ? 0.1 : 0),
        noiseRetryAfterS: [1, 5],
        demand: BACKLOG,
        seed,
      });
      expect(run.seconds.slice(60, 120).some((s) => s.noiseShare !== null)).toBe(true);
      expect(run.acceptedPerSecond(200, 300)).toBeGreaterThanOrEqual(0.95 * 40);
      expect(run.share429(200, 300)).toBeLessThanOrEqual(0.01);
      expect(run.seconds[299]!.noiseShare).toBeNull();
    },
  );
});

describe("the fleet's one rate and 429s no pace causes (simulated)", () => {
  it.each(SEEDS)(
    'with 10 %% of 429s beside a limit of 20 (2 workers), the fleet learns the floor from its pooled answers and spends at least 0.8 of what the clean account does (seed %i)',
    async (seed) => {
      // Each noise 429 was relayed as an overshoot and cut the fleet's rate: it ran at 0.07 of the
      // clean account's, too slowly for any worker to learn the floor from its own fresh calls.
      const options = {
        seconds: 180,
        limit: () => 20,
        noiseRetryAfterS: [1, 3] as [number, number],
        demand: { clients: 30, thinkMs: 1000 },
        workers: 2,
        seed,
        shares: 'fleet' as const,
      };
      const clean = await simulate(options);
      const noisy = await simulate({ ...options, noise: () => 0.1 });
      expect(learnedAt(noisy)).not.toBeNull();
      expect(noisy.acceptedPerSecond(120, 180)).toBeGreaterThanOrEqual(0.8 * clean.acceptedPerSecond(120, 180));
    },
  );
});

describe("the fleet's one rate and the limit's own 429s (simulated)", () => {
  // Accounts of 2 to 50 calls a second, 1 to 4 workers, polls due beyond the limit spread evenly,
  // with one worker idle, all on one worker, or one caller on each worker but the first; a
  // limiter that charges a refused call or not: none of the limit's 429s is ever taken for noise,
  // without any setting. Before the fleet's one rate, a small account shared by several workers
  // learned floors of 0.07-0.33; before slow start's end was held to 1.8 a second where under 2
  // were accepted, an account of 2 on a busy worker and one with one caller learned 0.083.
  const cases = [2, 5, 20, 50].flatMap((limit) =>
    [1, 2, 3, 4].flatMap((workers) =>
      (['even', 'one idle', 'one', 'one caller each'] as const)
        .filter((spread) => workers > 1 || spread === 'even')
        .flatMap((spread) => [false, true].map((charged) => ({ limit, workers, spread, charged }))),
    ),
  );
  it('never takes a limit of 2-50 calls a second for noise, with 1-4 workers however the calls are spread', async () => {
    const learned: string[] = [];
    for (const { limit, workers, spread, charged } of cases) {
      const run = await simulate({
        seconds: 90,
        limit: () => limit,
        demand: { clients: Math.max(6, Math.ceil(limit * 1.5)), thinkMs: 1000 },
        workers,
        workerOf:
          spread === 'even'
            ? (l) => l % workers
            : spread === 'one idle'
              ? (l) => l % (workers - 1)
              : spread === 'one caller each'
                ? (l) => (l < workers - 1 ? l + 1 : 0)
                : () => 0,
        refusedTakesToken: charged,
        relayMs: 800,
        seed: limit * 10 + workers,
      });
      if (run.seconds.some((s) => s.workers.some((w) => w.noiseShare !== null)))
        learned.push(`${limit}/s ${workers} workers ${spread} charged=${charged}`);
    }
    expect(learned).toEqual([]);
  }, 300_000);
});

describe('after slow start, a limit that charges refused calls (simulated)', () => {
  it.each([
    { limit: 8, spread: 'even', roundTripMs: 31, relayMs: 359, thinkMs: 961 },
    { limit: 20, spread: 'one idle', roundTripMs: 24, relayMs: 306, thinkMs: 1024 },
  ])(
    'an account of $limit calls a second, 4 workers ($spread), relays of $relayMs ms: none of its 429s taken for noise while settling grows the rate past it',
    async ({ limit, spread, roundTripMs, relayMs, thinkMs }) => {
      // Slow start ended at a rate cut from counts its burst inflated, over the limit; settling
      // grew it 2 % a second, and 5-7 s after that hold the calls still counted fresh met the
      // limit's 429s: a floor of 0.011-0.026 was learned, and the restarted slow start sent 9 % 429s.
      const run = await simulate({
        seconds: 90,
        limit: () => limit,
        demand: { clients: Math.ceil(limit * 1.5), thinkMs },
        workers: 4,
        workerOf: spread === 'even' ? (l) => l % 4 : (l) => l % 3,
        refusedTakesToken: true,
        relayMs,
        roundTripMs,
      });
      expect(run.seconds.filter((s) => (s.fleet?.noise ?? 0) > 0).length).toBe(0);
      expect(run.share429(15, 90)).toBeLessThanOrEqual(0.03);
    },
  );

  it.each(['even', 'one idle'])(
    'an account of 10 calls a second, 4 workers (%s): settling cuts to under the limit, at least 0.95 of it spent with at most 1 %% 429s',
    async (spread) => {
      // Settling's last counts, over the limit's burst, read the rate that met the 429: cut a
      // tenth off them, the rate stood over the limit and met it twice more (1.06-1.08 % 429s).
      const run = await simulate({
        seconds: 90,
        limit: () => 10,
        demand: { clients: 15, thinkMs: 1000 },
        workers: 4,
        workerOf: spread === 'even' ? (l) => l % 4 : (l) => l % 3,
        refusedTakesToken: true,
        seed: 1004,
      });
      expect(run.acceptedPerSecond(15, 90) / 10).toBeGreaterThanOrEqual(0.95);
      expect(run.share429(15, 90)).toBeLessThanOrEqual(0.01);
    },
  );
});

describe("a small account's slow start (simulated)", () => {
  it('an account of 2 calls a second, all its calls on one worker of one or two, ends its slow start whatever the relays take (0.3-1 s): under 3 % 429s, at least 0.9 of it spent', async () => {
    // Each overshoot met one 429 and a hold, so the fleet accepted 1.3-1.7 calls a second: under
    // the 2 that ended slow start, and far from the third of its answers 429. With relays of
    // 412 and 465 ms it searched for good, halving and growing by half: 20 % 429s, 0.72 of the limit.
    const missed: string[] = [];
    for (const relayMs of [300, 412, 465, 600, 1000]) {
      for (const workers of [1, 2]) {
        const run = await simulate({
          seconds: 90,
          limit: () => 2,
          demand: { clients: 6, thinkMs: 1000 },
          workers,
          workerOf: () => 0,
          relayMs,
          roundTripMs: 38,
        });
        const share = run.share429(15, 90);
        const spent = run.acceptedPerSecond(15, 90) / 2;
        if (share > 0.03 || spent < 0.9)
          missed.push(`relays ${relayMs} ms, ${workers} workers: ${(100 * share).toFixed(1)} % 429s, ${spent.toFixed(2)} of the limit`);
      }
    }
    expect(missed).toEqual([]);
  }, 120_000);
});

describe("the limit's own 429s beside noise (simulated)", () => {
  it("beside 10 % noise, no run sends an eighth of its calls into the limit's 429s (5 and 20 a second, two workers, 30 seeds)", async () => {
    // A floor learned from a few fresh answers was learned at the 429 that made it one: 0.18-0.25
    // for 10 % noise. Its margin hid the limit's 429s, so no hold brought the fresh answers that
    // would have corrected it: the fleet ran at up to 2.2 times the limit, 12.6-17.9 % of its
    // calls refused by the limit in 5 of the first 14 runs (the bench's "10 % unrelated 429s" row:
    // 26.8 % 429s). Then a young floor too high (0.3, from 5 fresh 429s of 13) hid them for good
    // in 3 of these 60 (13.3-20.6 %), until it was checked whatever the rate did (fleet-noise-floor.ts).
    const over: string[] = [];
    for (const limit of [5, 20]) {
      for (let seed = 1; seed <= 30; seed++) {
        const run = await simulate({
          seconds: 240,
          limit: () => limit,
          ...NOISE,
          demand: { clients: Math.max(6, Math.ceil(limit * 1.5)), thinkMs: 1000 },
          workers: 2,
          workerOf: (l) => l % 2,
          seed,
        });
        const seconds = run.seconds.slice(15);
        const limited = seconds.reduce((n, s) => n + s.limited, 0);
        const answers = seconds.reduce((n, s) => n + s.accepted + s.limited + s.noise, 0);
        if (limited / answers > 0.125) over.push(`${limit}/s seed ${seed}: ${((100 * limited) / answers).toFixed(1)} %`);
      }
    }
    expect(over).toEqual([]);
  }, 300_000);
});
