/**
 * The account pacer's bench, simulated (test/helpers/pacer-sim.ts, vitest's fake clock): the
 * fleet's one rate per account (`fleet`, pacing/fleet-pace.ts) beside each worker finding its
 * own share (`worker`, the pacer before it), in the same run. Accounts of 2, 5, 20 and 50 calls
 * a second; 1, 2 and 4 workers; tracking polls due every second beyond the limit, spread evenly,
 * with one worker's shards empty, or all on one worker; a limiter that does not charge a refused
 * call, and one that does. Printed per row: accepted ÷ limit over the seconds from MEASURE_FROM
 * (work is due throughout), and 429s; then the 10 % unrelated-429s row beside the clean one, a
 * limiter that counts a sliding window, noise that stops, a limit that falls, an idle minute
 * between two batches, the fleet alone at the limits between the main rows (3-30 a second), under
 * varied timings, when demand ramps, beside workers with one caller each, and beside a single call
 * now and then on another worker; and the runs, over every spread, that took the limit's own 429s
 * for noise.
 * Run: `npm run bench:pacing` (about seven minutes).
 */
import { it } from 'vitest';
import { simulate } from '../test/helpers/pacer-sim';

const SECONDS = Number(process.env.PACING_BENCH_SECONDS ?? 90);
/** Slow start is over by then, from 5 calls a second to 50 (the old pacer's per worker). */
const MEASURE_FROM = 15;
const LIMITS = [2, 5, 20, 50];
const WORKERS = [1, 2, 4];
type Spread = 'even' | 'one worker idle' | 'all on one worker' | 'one caller on each other worker';
const SPREADS: Spread[] = ['even', 'one worker idle', 'all on one worker'];

function workerOf(spread: Spread, workers: number): (loop: number) => number {
  if (spread === 'even') return (loop) => loop % workers;
  if (spread === 'one worker idle') return (loop) => loop % (workers - 1);
  if (spread === 'one caller on each other worker') return (loop) => (loop < workers - 1 ? loop + 1 : 0);
  return () => 0;
}

/** One run of the main table's kind: polls due every second at 1.5 times the limit, never fewer than 6 loops. */
function mainRun(
  limit: number,
  workers: number,
  spread: Spread,
  charged: boolean,
  shares: 'fleet' | 'worker',
  timing: { relayMs?: number; seed?: number } = {},
) {
  return simulate({
    seconds: SECONDS,
    limit: () => limit,
    demand: { clients: Math.max(6, Math.ceil(limit * 1.5)), thinkMs: 1000 },
    workers,
    workerOf: workerOf(spread, workers),
    refusedTakesToken: charged,
    shares,
    seed: limit * 100 + workers,
    ...timing,
  });
}

it('pacing: fleet vs worker shares', async () => {
  const rows: string[] = [];
  const fmt = (a: number, s: number) => `${a.toFixed(3).padStart(6)} ${(s * 100).toFixed(2).padStart(5)} %`;
  rows.push('limit/s workers spread             charged | fleet: accepted/limit 429s | worker (today): accepted/limit 429s');
  for (const limit of LIMITS) {
    for (const workers of WORKERS) {
      for (const spread of SPREADS.filter((s) => workers > 1 || s === 'even')) {
        for (const charged of [false, true]) {
          const results = [];
          for (const shares of ['fleet', 'worker'] as const) {
            const run = await mainRun(limit, workers, spread, charged, shares);
            results.push(fmt(run.acceptedPerSecond(MEASURE_FROM, SECONDS) / limit, run.share429(MEASURE_FROM, SECONDS)));
          }
          rows.push(
            `${String(limit).padStart(7)} ${String(workers).padStart(7)} ${spread.padEnd(18)} ${(charged ? 'yes' : 'no').padEnd(7)} | ${results[0]!.padEnd(26)} | ${results[1]}`,
          );
        }
      }
    }
  }
  console.log(`\nseconds ${MEASURE_FROM}-${SECONDS} of each run\n${rows.join('\n')}`);
}, 3_600_000);

// The issue's row: 10 % of the calls refused by 429s the pace did not cause (a quota shared with
// other clients), beside the same account without them; target: accepted ≥ 0.8 × the clean row's.
// Noise is luck: one seed learned it at second 29 and another at 90, so the row is the median
// over NOISE_SEEDS, with the quartiles beside it (seven seeds put the median at 0.825 and 0.816,
// forty at 0.743 and 0.692: their median was luck too); and the share of the noisy runs' calls
// the limit refused (the fake's bucket, not the noise): a pace over the limit costs no accepted
// call against a limiter that does not charge a refused one, so the ratio alone does not show it.
const NOISE_SEEDS = Array.from({ length: 40 }, (_, i) => i + 1);
it('pacing: 10 % unrelated 429s beside a clean account', async () => {
  const rows = ["limit/s workers | fleet: noisy ÷ clean, median (quartiles), the limit's own 429s | worker (today): the same"];
  for (const limit of [5, 20]) {
    const cells = [];
    for (const shares of ['fleet', 'worker'] as const) {
      const ratios: number[] = [];
      let own = 0;
      let answers = 0;
      for (const seed of NOISE_SEEDS) {
        const accepted = async (noise: number) => {
          const run = await simulate({
            seconds: SECONDS,
            limit: () => limit,
            noise: () => noise,
            noiseRetryAfterS: [1, 3],
            demand: { clients: Math.max(6, Math.ceil(limit * 1.5)), thinkMs: 1000 },
            workers: 2,
            workerOf: workerOf('even', 2),
            shares,
            seed,
          });
          if (noise > 0)
            for (const s of run.seconds.slice(MEASURE_FROM, SECONDS)) {
              own += s.limited;
              answers += s.accepted + s.limited + s.noise;
            }
          return run.acceptedPerSecond(MEASURE_FROM, SECONDS);
        };
        ratios.push((await accepted(0.1)) / (await accepted(0)));
      }
      ratios.sort((a, b) => a - b);
      const median = ratios[Math.floor(ratios.length / 2)]!;
      const quartile = (q: number) => ratios[Math.floor(q * ratios.length)]!.toFixed(2);
      cells.push(`${median.toFixed(3)} (${quartile(0.25)}-${quartile(0.75)}), ${((100 * own) / answers).toFixed(1)} %`);
    }
    rows.push(`${String(limit).padStart(7)} ${'2'.padStart(7)} | ${cells[0]!.padStart(60)} | ${cells[1]}`);
  }
  console.log(
    `\nseconds ${MEASURE_FROM}-${SECONDS} of each run, 2 workers, work spread evenly, seeds 1-${NOISE_SEEDS.length}\n${rows.join('\n')}`,
  );
}, 3_600_000);

// A limiter that counts a sliding window (at most the limit in any second, no burst over it): the
// spec names a limit and a window and shows neither, and every other table's limiter is a token
// bucket with a second's burst, which lets a pace a little over the limit run until the burst is
// spent. Measured past the start too (seconds 90-300): what the fleet keeps once it found the limit.
const WINDOW_SECONDS = 300;
it('pacing: a limiter that counts a sliding window', async () => {
  const fmt = (run: Awaited<ReturnType<typeof simulate>>, limit: number, from: number, to: number) =>
    `${(run.acceptedPerSecond(from, to) / limit).toFixed(3)} ${(100 * run.share429(from, to)).toFixed(2).padStart(5)} %`;
  const rows = ['limit/s workers | fleet: seconds 15-90, 90-300 (accepted/limit 429s) | worker (today): the same'];
  for (const limit of LIMITS) {
    for (const workers of WORKERS) {
      const cells = [];
      for (const shares of ['fleet', 'worker'] as const) {
        const run = await simulate({
          seconds: WINDOW_SECONDS,
          limit: () => limit,
          limiter: 'window',
          demand: { clients: Math.max(6, Math.ceil(limit * 1.5)), thinkMs: 1000 },
          workers,
          workerOf: workerOf('even', workers),
          shares,
          seed: limit * 100 + workers,
        });
        cells.push(`${fmt(run, limit, MEASURE_FROM, SECONDS)}, ${fmt(run, limit, SECONDS, WINDOW_SECONDS)}`);
      }
      rows.push(`${String(limit).padStart(7)} ${String(workers).padStart(7)} | ${cells[0]!.padEnd(50)} | ${cells[1]}`);
    }
  }
  console.log(`\na sliding window of a second, work spread evenly, refused calls not counted\n${rows.join('\n')}`);
}, 3_600_000);

// Noise that stops: 10 % unrelated 429s (Retry-After 1-5 s) for the first 120 s beside a limit,
// none after; measured over seconds 200-300, when the floor should be forgotten and the limit's
// 429s no longer hidden in it (target: at most 1 % 429s). Over STOP_SEEDS seeds a row: one run
// is a coin toss of where its floor was learned (a row of one seed moved 0.952 to 0.908 with a
// change that, over 20, halved the mean 429s).
const STOP_SEEDS = 20;
it('pacing: noise that stops beside a limit', async () => {
  const rows = ['limit/s workers | fleet: accepted/limit median (lowest), 429s mean (most), runs over 1 % | worker (today): the same'];
  for (const limit of [5, 20, 40]) {
    for (const workers of [1, 2, 4]) {
      const cells = [];
      for (const shares of ['fleet', 'worker'] as const) {
        const accepted: number[] = [];
        const limited: number[] = [];
        for (let i = 0; i < STOP_SEEDS; i++) {
          const run = await simulate({
            seconds: 300,
            limit: () => limit,
            noise: (t) => (t < 120 ? 0.1 : 0),
            noiseRetryAfterS: [1, 5],
            demand: { clients: Math.max(6, Math.ceil(limit * 1.5)), thinkMs: 1000 },
            workers,
            workerOf: workerOf('even', workers),
            shares,
            seed: 1000 * i + limit + workers,
          });
          accepted.push(run.acceptedPerSecond(200, 300) / limit);
          limited.push(run.share429(200, 300));
        }
        accepted.sort((a, b) => a - b);
        const mean = (100 * limited.reduce((a, b) => a + b, 0)) / limited.length;
        const over = limited.filter((l) => l > 0.01).length;
        cells.push(
          `${accepted[Math.floor(accepted.length / 2)]!.toFixed(3)} (${accepted[0]!.toFixed(3)}), ${mean.toFixed(2)} % (${(100 * Math.max(...limited)).toFixed(2)} %), ${over}`,
        );
      }
      rows.push(`${String(limit).padStart(7)} ${String(workers).padStart(7)} | ${cells[0]!.padStart(68)} | ${cells[1]}`);
    }
  }
  console.log(`\nseconds 200-300 of each run (the noise stopped at 120), work spread evenly, ${STOP_SEEDS} seeds\n${rows.join('\n')}`);
}, 3_600_000);

// A limit that falls (to between 0.5 and 0.75 of what it was), no noise; measured over the 30-120
// s after the fall, on 1, 2 and 4 workers, with a limiter charging refused calls and one that does
// not, the fall at five moments (second 110, 115, 120, 125, 130: thirty runs a row; no noise, so no
// seeds). The fresh calls after a hold go at what the API accepted before it, which a fallen limit
// refuses: learned as noise, a floor hid the new limit's 429s (5 to 3 a second, two workers,
// charged: half the calls 429s for a minute). The moment matters: where the fall meets the probe
// (over the old limit on its burst, or just cut under it) decides how deep a charging limiter's
// deficit goes, and a table with the fall at second 120 alone read 0.952 at its lowest where the
// five moments read 0.71.
const FALLS = [
  [40, 20],
  [40, 30],
  [20, 12],
  [10, 6],
  [5, 3],
] as const;
const FALL_AT = [110, 115, 120, 125, 130];
it('pacing: a limit that falls', async () => {
  const rows = [
    'limit/s      | fleet: accepted/limit lowest, 429s mean (most), runs under 0.95, over 1 %, learning a floor, with one at the end | worker (today): the same',
  ];
  for (const [from, to] of FALLS) {
    const cells = [];
    for (const shares of ['fleet', 'worker'] as const) {
      const accepted: number[] = [];
      const limited: number[] = [];
      let learned = 0;
      let kept = 0;
      for (const at of FALL_AT)
        for (const workers of WORKERS)
          for (const charged of [false, true]) {
            const run = await simulate({
              seconds: at + 120,
              limit: (t) => (t < at ? from : to),
              demand: { clients: Math.max(6, Math.ceil(from * 1.5)), thinkMs: 1000 },
              workers,
              workerOf: workerOf('even', workers),
              refusedTakesToken: charged,
              shares,
            });
            accepted.push(run.acceptedPerSecond(at + 30, at + 120) / to);
            limited.push(run.share429(at + 30, at + 120));
            const floor = (s: (typeof run.seconds)[number]) => (s.fleet?.noise ?? 0) > 0 || s.workers.some((w) => w.noiseShare !== null);
            if (run.seconds.slice(at).some(floor)) learned++;
            if (floor(run.seconds[at + 119]!)) kept++;
          }
      const mean = (100 * limited.reduce((a, b) => a + b, 0)) / limited.length;
      const under = accepted.filter((a) => a < 0.95).length;
      const over = limited.filter((l) => l > 0.01).length;
      cells.push(
        `${Math.min(...accepted).toFixed(3)}, ${mean.toFixed(2)} % (${(100 * Math.max(...limited)).toFixed(2)} %), ${under}, ${over}, ${learned}, ${kept}`,
      );
    }
    rows.push(`${`${from} -> ${to}`.padEnd(12)} | ${cells[0]!.padStart(99)} | ${cells[1]}`);
  }
  console.log(
    `\nthe 30-120 s after the limit fell (at second 110, 115, 120, 125 or 130), work spread evenly, 1, 2 and 4 workers, charged or not\n${rows.join('\n')}`,
  );
}, 3_600_000);

// An idle minute between two batches (the rate-limit bench's two batches of 200 orders): calls due
// beside the limit for 60 s, none for the next 60, then again; measured over the second batch's
// 60 s, 10 % noise and none, two workers, IDLE_SEEDS seeds. An idle minute beside a rate was once
// a quiet spell, the rate growing a tenth a second from it when work came back, and a check of the
// floor took its rate from the first second's counts.
const IDLE_SEEDS = 20;
it('pacing: an idle minute between two batches', async () => {
  const rows = ["limit/s noise | fleet: accepted/limit median (lowest), the limit's own 429s mean (most), peak rate ÷ limit median"];
  for (const limit of [5, 20]) {
    for (const noise of [0.1, 0]) {
      const accepted: number[] = [];
      const own: number[] = [];
      const peaks: number[] = [];
      for (let seed = 1; seed <= IDLE_SEEDS; seed++) {
        const run = await simulate({
          seconds: 180,
          limit: () => limit,
          noise: () => noise,
          noiseRetryAfterS: [1, 5],
          demand: { clients: Math.max(6, Math.ceil(limit * 1.5)), thinkMs: 1000, pauseS: [60, 120] },
          workers: 2,
          workerOf: workerOf('even', 2),
          seed,
        });
        accepted.push(run.acceptedPerSecond(120, 180) / limit);
        own.push(run.limitShare(120, 180));
        peaks.push(Math.max(...run.seconds.slice(120, 180).map((s) => s.fleet!.rate)) / limit);
      }
      const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
      const mean = (100 * own.reduce((a, b) => a + b, 0)) / own.length;
      rows.push(
        `${String(limit).padStart(7)} ${`${noise * 100} %`.padStart(5)} | ${median(accepted).toFixed(3)} (${Math.min(...accepted).toFixed(3)}), ${mean.toFixed(2)} % (${(100 * Math.max(...own)).toFixed(2)} %), ${median(peaks).toFixed(2)}`,
      );
    }
  }
  console.log(`\nseconds 120-180 of each run (idle 60-120), 2 workers, work spread evenly, seeds 1-${IDLE_SEEDS}\n${rows.join('\n')}`);
}, 3_600_000);

// Between the main table's limits: the fleet's pace alone (the main table compares it with each
// worker's own), at accounts of 3-30 calls a second, the same demand and seed rule.
it('pacing: the fleet at limits between the main rows', async () => {
  const rows = ['limit/s workers spread             | not charged: accepted/limit 429s | charged: accepted/limit 429s'];
  for (const limit of [3, 4, 6, 8, 10, 12, 15, 30]) {
    for (const workers of [2, 4]) {
      for (const spread of ['even', 'one worker idle'] as const) {
        const cells = [];
        for (const charged of [false, true]) {
          const run = await mainRun(limit, workers, spread, charged, 'fleet');
          cells.push(
            `${(run.acceptedPerSecond(MEASURE_FROM, SECONDS) / limit).toFixed(3).padStart(6)} ${(run.share429(MEASURE_FROM, SECONDS) * 100).toFixed(2).padStart(5)} %`,
          );
        }
        rows.push(
          `${String(limit).padStart(7)} ${String(workers).padStart(7)} ${spread.padEnd(18)} | ${cells[0]!.padEnd(32)} | ${cells[1]}`,
        );
      }
    }
  }
  console.log(`\nseconds ${MEASURE_FROM}-${SECONDS} of each run, the fleet's one rate\n${rows.join('\n')}`);
}, 3_600_000);

// The same runs with the timings a loaded machine varies: holds and grants relayed in 200-500 ms,
// round trips of 10-40 ms, polls every 950-1050 ms, five such timings a row. The rows above are
// one timing each, and a defect can hide between timings (an account of 2 a second on one worker
// searched for good with relays of 412 and 465 ms, 20 % 429s, and was 0 % at 300 ms). Printed
// per limit and fleet size over both spreads and both limiters: the lowest and median accepted
// ÷ limit, the most 429s, the runs under 0.95 or over 1 % 429s, and the runs that took a limit's
// 429s for noise (target: none).
const TIMINGS = [1, 2, 3, 4, 5].map((k) => ({
  relayMs: 200 + ((k * 53) % 300),
  roundTripMs: 10 + ((k * 7) % 30),
  thinkMs: 950 + ((k * 37) % 100),
}));
it('pacing: the fleet under varied timings', async () => {
  const rows = await runsTable([2, 3, 5, 8, 20, 50], (limit, workers) =>
    (['even', 'one worker idle'] as const)
      .filter((spread) => workers > 1 || spread === 'even')
      .map((spread) => ({ spread, demand: { clients: Math.max(6, Math.ceil(limit * 1.5)) } })),
  );
  console.log(
    `\nseconds ${MEASURE_FROM}-${SECONDS} of each run, the fleet's one rate, five timings a spread and limiter\n${rows.join('\n')}`,
  );
}, 3_600_000);

/**
 * Each limit on each fleet size (1, 2 and 4 workers unless told), over its cases (a spread and
 * loops of calls), both limiters and the five timings: a row each.
 */
async function runsTable(
  limits: number[],
  cases: (
    limit: number,
    workers: number,
  ) => { spread: Spread; demand: { clients: number; rampMs?: number; single?: { everyS: number; worker: number } } }[],
  fleets = WORKERS,
): Promise<string[]> {
  const rows = ['limit/s workers runs | accepted/limit lowest median | 429s most | under 0.95 | over 1 % | noise learned'];
  for (const limit of limits) {
    for (const workers of fleets) {
      const ratios: number[] = [];
      const shares: number[] = [];
      let noise = 0;
      for (const { spread, demand } of cases(limit, workers)) {
        for (const charged of [false, true]) {
          for (const timing of TIMINGS) {
            const run = await simulate({
              seconds: SECONDS,
              limit: () => limit,
              demand: { ...demand, thinkMs: timing.thinkMs },
              workers,
              workerOf: workerOf(spread, workers),
              refusedTakesToken: charged,
              relayMs: timing.relayMs,
              roundTripMs: timing.roundTripMs,
            });
            ratios.push(run.acceptedPerSecond(MEASURE_FROM, SECONDS) / limit);
            shares.push(run.share429(MEASURE_FROM, SECONDS));
            if (run.seconds.some((s) => (s.fleet?.noise ?? 0) > 0)) noise++;
          }
        }
      }
      rows.push(runsRow(limit, workers, ratios, shares, noise));
    }
  }
  return rows;
}

/** A row of runs: the lowest and median accepted ÷ limit, the most 429s, the runs missing a target, the runs that learned noise. */
function runsRow(limit: number, workers: number, ratios: number[], shares: number[], noise: number): string {
  const sorted = [...ratios].sort((a, b) => a - b);
  const cells = [
    `${sorted[0]!.toFixed(3)} ${sorted[Math.floor(sorted.length / 2)]!.toFixed(3)}`.padStart(29),
    `${(Math.max(...shares) * 100).toFixed(2)} %`.padStart(9),
    String(ratios.filter((r) => r < 0.95).length).padStart(10),
    String(shares.filter((s) => s > 0.01).length).padStart(8),
    String(noise).padStart(13),
  ];
  return `${String(limit).padStart(7)} ${String(workers).padStart(7)} ${String(ratios.length).padStart(4)} | ${cells.join(' | ')}`;
}

// Demand that ramps: the calls' loops join evenly over 2, 4 or 8 s (shipments reaching tracking
// one by one after their labels), as test/fleet-pace.process.test.ts starts its fleet. Slow start
// then ends on counts of a rate that grew half again a second through them, and a small
// account's plateau, taken from them, can hold it far under its limit for the 90 s quiet spell.
it('pacing: the fleet when demand ramps', async () => {
  const rows = await runsTable([2, 3, 5, 8, 20], (limit) =>
    [2000, 4000, 8000].map((rampMs) => ({ spread: 'even' as const, demand: { clients: Math.max(8, Math.ceil(limit * 4)), rampMs } })),
  );
  console.log(
    `\nseconds ${MEASURE_FROM}-${SECONDS} of each run, the fleet's one rate, demand joining over 2, 4 or 8 s, five timings each, both limiters\n${rows.join('\n')}`,
  );
}, 3_600_000);

// Work spread unevenly another way: every worker but one has a single caller (a shard with one
// shipment polling every second), the first all the rest. A lone caller's share swings with
// whether its one call waits at its report (0.33 to 1.33 a second of an account of 5), its span's
// slots come at uneven gaps its call is not always ready for, and what it leaves unused is lost
// while the first worker's calls wait; a small account's plateau taken from such counts is low
// too (the accounts bench: an account of 2 a second on two workers spent 0.84-0.91 of its limit).
it('pacing: the fleet beside workers with one caller each', async () => {
  const rows = await runsTable(
    [2, 3, 5, 8, 20],
    (limit) => [{ spread: 'one caller on each other worker' as const, demand: { clients: Math.max(6, Math.ceil(limit * 1.5)) } }],
    [2, 4],
  );
  console.log(
    `\nseconds ${MEASURE_FROM}-${SECONDS} of each run, the fleet's one rate, one caller on each worker but the first, five timings, both limiters\n${rows.join('\n')}`,
  );
}, 3_600_000);

// A label now and then on a worker with nothing else for the account (the accounts bench's a2 on
// four workers: each window's few labels land on any worker): the others' callers are busy, and
// a call every 10 s goes to the last worker, which reports for it, is granted a share, and leaves
// it. Counted as a stream of one call, that share held a third to half of an account of 2 a
// second for two leases (0.911 of the limit through real workers, with no 429).
it('pacing: the fleet beside a single call now and then on another worker', async () => {
  const rows = await runsTable(
    [2, 3, 5, 8, 20],
    (limit, workers) => [
      {
        spread: 'one worker idle' as const,
        demand: { clients: Math.max(6, Math.ceil(limit * 1.5)), single: { everyS: 10, worker: workers - 1 } },
      },
    ],
    [2, 4],
  );
  console.log(
    `\nseconds ${MEASURE_FROM}-${SECONDS} of each run, the fleet's one rate, the last worker's calls one every 10 s, the others' spread evenly, five timings, both limiters\n${rows.join('\n')}`,
  );
}, 3_600_000);

// The limit's own 429s never taken for noise, without any setting (the issue's second
// deliverable): accounts of 2 to 50 a second on 1 to 4 workers, every spread above (one caller on
// each worker but the first too), both limiters, holds and grants relayed in 300 or 800 ms (the
// latter as test/account-pacer.noise.test.ts has it). Printed per limit: the runs, and those in
// which a worker or the fleet learned a floor (target: none), named.
it("pacing: the limit's own 429s taken for noise", async () => {
  const rows = ['limit/s runs | noise learned | in'];
  for (const limit of LIMITS) {
    const learned: string[] = [];
    let runs = 0;
    for (const workers of [1, 2, 3, 4]) {
      const spreads: Spread[] = workers > 1 ? [...SPREADS, 'one caller on each other worker'] : ['even'];
      for (const spread of spreads) {
        for (const charged of [false, true]) {
          for (const relayMs of [300, 800]) {
            const run = await mainRun(limit, workers, spread, charged, 'fleet', { relayMs, seed: limit * 10 + workers });
            runs++;
            if (run.seconds.some((s) => (s.fleet?.noise ?? 0) > 0 || s.workers.some((w) => w.noiseShare !== null)))
              learned.push(`${workers} workers, ${spread}, ${charged ? 'charged' : 'not charged'}, ${relayMs} ms`);
          }
        }
      }
    }
    rows.push(
      `${String(limit).padStart(7)} ${String(runs).padStart(4)} | ${String(learned.length).padStart(13)} | ${learned.join('; ') || '-'}`,
    );
  }
  console.log(`\nseconds 0-${SECONDS} of each run, the fleet's one rate, no noise\n${rows.join('\n')}`);
}, 3_600_000);
