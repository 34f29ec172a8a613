/**
 * The account's one rate for the fleet on a real Temporal dev server (workflows/account.ts,
 * pacing/fleet-pace.ts): two workers' fleet channels report to the account workflow, and each
 * worker's share follows where the calls wait; the ceiling is the account's, not each worker's.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWorkflowId, fleetRateLimits } from '../pacing/fleet-rate-limit';
import { FleetPace, LEASE_MS, REPORT_MS, type CarriedLease, type FleetPaceState, type PaceGrant } from '../pacing/fleet-pace';
import { AccountPacer } from '../pacing/account-pacer';
import { SmallAccountPlateau } from '../pacing/fleet-plateau';
import { ACCOUNT_PRIORITY_KEY } from '../domain/priority';
import { saveFixture } from './helpers/fixtures';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.teardown();
});

const silentLog = { warn: () => undefined, info: () => undefined, debug: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A worker running the account workflow, and two workers' fleet channels to it. */
async function fleetOfTwo() {
  const taskQueue = `pace-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundle: await getWorkflowBundle(),
  });
  const done = worker.run();
  const workflowId = accountWorkflowId({ name: 'default', baseUrl: 'http://127.0.0.1:1' }, taskQueue);
  const a = fleetRateLimits({ client: env.client, taskQueue, workflowId, log: silentLog });
  const b = fleetRateLimits({ client: env.client, taskQueue, workflowId, log: silentLog });
  return {
    a,
    b,
    handle: env.client.workflow.getHandle(workflowId),
    async stop() {
      await Promise.all([a.close(), b.close()]);
      worker.shutdown();
      await done;
    },
  };
}

it('a worker whose calls run dry leaves its share to the other within two reports (a second or two)', async () => {
  const fleet = await fleetOfTwo();
  try {
    // Both busy: the account's rate (slow start from 5) is split evenly.
    let a = 0;
    let b = 0;
    let rate = 0;
    for (let i = 0; i < 4; i++) {
      a = (await fleet.a.pace({ want: 100, accepted: a }))!.rate;
      b = (await fleet.b.pace({ want: 100, accepted: b }))!.rate;
      await sleep(REPORT_MS);
    }
    rate = a + b;
    // The account workflow's tasks go before the shipments' (its grants and relays pace the fleet).
    expect((await fleet.handle.describe()).priority?.priorityKey).toBe(ACCOUNT_PRIORITY_KEY);
    expect(a).toBeGreaterThan(0);
    expect(Math.abs(a - b)).toBeLessThan(0.1 * rate);
    // B's shards run dry: within two reports A holds all but what B still sends.
    b = (await fleet.b.pace({ want: 0, accepted: b }))!.rate;
    a = (await fleet.a.pace({ want: 100, accepted: a }))!.rate;
    await sleep(REPORT_MS);
    b = (await fleet.b.pace({ want: 0, accepted: 0 }))!.rate;
    a = (await fleet.a.pace({ want: 100, accepted: a }))!.rate;
    expect(a).toBeGreaterThanOrEqual(0.45 * (a + b) + 0.45 * rate);
    expect(b).toBeLessThan(a);
    // The leases out never exceed the account's rate.
    expect(a + b).toBeLessThanOrEqual(rate * 1.5 ** 3 + 1e-9);
  } finally {
    await fleet.stop();
  }
});

it("maxRequestsPerSecond is the account's: two workers reporting a ceiling of 8 get 8 between them", async () => {
  const fleet = await fleetOfTwo();
  try {
    let a = 0;
    let b = 0;
    for (let i = 0; i < 8; i++) {
      a = (await fleet.a.pace({ want: 100, accepted: a, maxRate: 8 }))!.rate;
      b = (await fleet.b.pace({ want: 100, accepted: b, maxRate: 8 }))!.rate;
      await sleep(REPORT_MS / 2);
    }
    expect(a + b).toBeCloseTo(8, 5);
    expect(a).toBeCloseTo(4, 5);
    // An overshoot relayed by a worker cuts the account's rate for both.
    fleet.a.publish(Date.now() + 1000);
    await sleep(REPORT_MS);
    const after =
      (await fleet.a.pace({ want: 100, accepted: 4, maxRate: 8 }))!.rate +
      (await fleet.b.pace({ want: 100, accepted: 4, maxRate: 8 }))!.rate;
    expect(after).toBeLessThan(8);
    await saveFixture(fleet.handle, 'account-paced');
  } finally {
    await fleet.stop();
  }
});

it("a worker with one caller is granted its need through the account workflow, and the busy worker the rest of the account's rate", async () => {
  const fleet = await fleetOfTwo();
  try {
    let a = 0;
    let b = 0;
    for (let i = 0; i < 8; i++) {
      // A: many calls waiting. B: one caller a second, its call waiting at the report (a want of 2, a need of 4/3).
      a = (await fleet.a.pace({ want: 100, need: 50, accepted: a, maxRate: 4 }))!.rate;
      b = (await fleet.b.pace({ want: 2, need: 4 / 3, accepted: 1, maxRate: 4 }))!.rate;
      await sleep(REPORT_MS / 2);
    }
    // By want B had half of the 4 a second: 2, a call a second it could not send.
    expect(b).toBeCloseTo(4 / 3, 5);
    expect(a + b).toBeCloseTo(4, 5);
    await saveFixture(fleet.handle, 'account-shares-by-need');
  } finally {
    await fleet.stop();
  }
});

it('an idle worker stops reporting a lease after its last call: the account workflow takes no update while nothing is sent', async () => {
  // Waiting for its share to lapse, which each grant renews, an idle worker sent the account
  // workflow an update a second for good (the rate-limit bench: 200 reports of nothing wanted in
  // a 100 s idle spell), and the fleet's leases counted its idle seconds.
  const fleet = await fleetOfTwo();
  const pacer = new AccountPacer({ share: (report) => fleet.a.pace(report) });
  const updates = async () =>
    ((await fleet.handle.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
  try {
    await pacer.acquire('tracking');
    pacer.recordAccepted();
    // The reports while the call is within a lease, and a second for the last to land.
    await sleep(LEASE_MS + 2 * REPORT_MS);
    const idle = await updates();
    expect(idle).toBeGreaterThan(0);
    await sleep(5 * REPORT_MS);
    expect(await updates()).toBe(idle);
    // The next call reports again.
    await pacer.acquire('tracking');
    pacer.recordAccepted();
    await sleep(REPORT_MS);
    expect(await updates()).toBeGreaterThan(idle);
  } finally {
    pacer.close();
    await fleet.stop();
  }
});

describe('FleetPace on its own (pure)', () => {
  /** One worker reporting `accepted` and `limited` calls a second with plenty waiting, once a second from `at`, for `seconds`. */
  function reports(pace: FleetPace, at: number, seconds: number, accepted: number, limited: number): number {
    for (let s = 0; s < seconds; s++) pace.report({ worker: 'a', want: 100, accepted, limited }, at + s * 1000);
    return at + seconds * 1000;
  }

  /** `seconds` of reports, then an overshoot with a hold of a second: when, and the rate it met. */
  function overshootAfter(pace: FleetPace, seconds: number, accepted: number, limited: number): { t: number; before: number } {
    const t = reports(pace, 1_000_000, seconds, accepted, limited);
    const before = pace.state().rate;
    pace.overshoot(t + 1000, t);
    return { t, before };
  }

  it("slow start ends at an account of 2 a second, whose overshoots' answers are a third 429s or more, and not under 10 % noise", () => {
    // Calls evenly spaced never show 2 accepted a second at such an account: halved at every
    // overshoot, the rate searched for good (two workers: 0.63 of the limit, 37 % 429s).
    for (const [limited, ends] of [
      [1, true],
      [0.15, false],
    ] as const) {
      const pace = new FleetPace();
      let t = 1_000_000;
      for (let cut = 0; cut < 3; cut++) {
        t = reports(pace, t, 3, 1.5, limited);
        pace.overshoot(t + 1000, t);
      }
      expect(pace.state().slowStart).toBe(!ends);
    }
  });

  it('slow start ends at its sixth overshoot however few calls were accepted, under 2 a second', () => {
    // A limiter that charges a refused call, four workers on an account of 2 a second: the 429s
    // of each burst after a hold emptied the bucket, under a call a second was accepted, and
    // slow start halved and grew on for 38 s (simulated: 26 % 429s over seconds 15-90).
    const pace = new FleetPace();
    let t = 1_000_000;
    for (let cut = 0; cut < 6; cut++) {
      expect(pace.state().slowStart).toBe(true);
      t = reports(pace, t, 3, 0.5, 0.5);
      pace.overshoot(t + 1000, t);
    }
    expect(pace.state().slowStart).toBe(false);
    expect(pace.state().rate).toBeLessThanOrEqual(1.8);
  });

  it("slow start's overshoots are carried over a continue-as-new: the third ends it on an account of 2 a second", () => {
    // Counted from 0 in each run, a run continued between the second and third overshoot halved
    // the rate again instead of ending slow start.
    let pace = new FleetPace();
    let t = 1_000_000;
    for (let cut = 0; cut < 3; cut++) {
      if (cut === 2) pace = new FleetPace(JSON.parse(JSON.stringify(pace.state())) as FleetPaceState);
      t = reports(pace, t, 3, 1.5, 1);
      pace.overshoot(t + 1000, t);
    }
    expect(pace.state().slowStart).toBe(false);
  });

  it('a rate just cut low does not teach the floor the 429s a report still counts from before the cut', () => {
    // A report counts its worker's answers of the last 3 s: right after cuts took the rate under
    // 0.5 of the known-good pace, they are the overshoot's. Pooled, they taught floors of
    // 0.14-0.2 where the noise was 0.1 (and were never forgotten beside a limit).
    const pace = new FleetPace({ rate: 50, slowStart: false });
    let t = reports(pace, 1_000_000, 3, 40, 0);
    for (let cut = 0; cut < 14; cut++, t += 2100) pace.overshoot(t + 1000, t);
    expect(pace.state().rate).toBeLessThan(0.5 * 40);
    t = reports(pace, t, 3, 30, 6);
    expect(pace.noiseFloor().share).toBe(0);
    // Answers counted wholly at the low rate do teach it (a young floor, less the 429 that made it one).
    reports(pace, t + 5000, 10, 9, 1);
    expect(pace.noiseFloor().share).toBeGreaterThan(0.05);
    expect(pace.noiseFloor().share).toBeLessThanOrEqual(0.1);
  });

  it("the workers' fresh answers teach the fleet its floor at their next report, and the rate the noise cut searches for the limit again", () => {
    // 10 % noise ended slow start at its first 429 and cut the rate at each one after; the fleet
    // learned its floor only from answers at under 0.45 of the best it had seen, which it barely
    // reached: 0.1-0.5 of the clean account's calls for the bench's 75 s, with the workers
    // knowing the floor from the same fresh answers since second 30-40.
    const pace = new FleetPace({ rate: 3.6, slowStart: false });
    let t = reports(pace, 1_000_000, 3, 3, 0.3);
    pace.report({ worker: 'a', want: 100, accepted: 3, limited: 0.3, fresh: { answers: 14, limited: 1 } }, t);
    expect(pace.noiseFloor().share).toBe(0);
    t += 1000;
    // Not counts: ignored.
    pace.report({ worker: 'a', want: 100, accepted: 3, limited: 0.3, fresh: { answers: 2, limited: 5 } }, t);
    expect(pace.noiseFloor().share).toBe(0);
    t += 1000;
    const grant = pace.report({ worker: 'a', want: 100, accepted: 3, limited: 0.3, fresh: { answers: 6, limited: 1 } }, t);
    // 2 of 20, less the 429 that made it a floor (youngShare).
    expect(grant.noise?.share).toBeCloseTo(0.05, 3);
    expect(grant.slowStart).toBe(true);
    // Carried over a continue-as-new.
    expect(new FleetPace(JSON.parse(JSON.stringify(pace.state())) as FleetPaceState).noiseFloor().share).toBeCloseTo(0.05, 3);
  });

  it('a first floor restarts slow start from its next step over the most the API accepted; one learned after a limit was found, from where the rate stood', () => {
    // The noise had cut the rate to 0.15-0.2 of an account of 20 a second, and slow start took 5 s
    // from there back to where the API had accepted the fleet's calls before.
    const restarted = (found: boolean) => {
      const pace = new FleetPace({ rate: 3.6, slowStart: false, found });
      // The API accepted 6 a second of the fleet, then the noise cut it to 3.
      let t = reports(pace, 1_000_000, 3, 6, 0.6);
      t = reports(pace, t, 3, 3, 0.3);
      const before = pace.state().rate;
      const grant = pace.report({ worker: 'a', want: 100, accepted: 3, limited: 0.3, fresh: { answers: 12, limited: 3 } }, t);
      expect(grant.slowStart).toBe(true);
      return { before, after: grant.accountRate };
    };
    const first = restarted(false);
    expect(first.before).toBeLessThan(6);
    expect(first.after).toBeGreaterThanOrEqual(1.5 * 6);
    // After a limit was found, a floor may be that limit fallen: the most accepted is the old limit's.
    const later = restarted(true);
    expect(later.after).toBeLessThanOrEqual(1.5 * later.before);
    expect(later.after).toBeLessThan(6);
  });

  it('ten fresh answers with two 429s are enough to learn the floor from: until then each noise 429 holds the fleet', () => {
    const pace = new FleetPace({ rate: 3.6, slowStart: false });
    const t = reports(pace, 1_000_000, 3, 3, 0.3);
    pace.report({ worker: 'a', want: 100, accepted: 3, limited: 0.3, fresh: { answers: 9, limited: 2 } }, t);
    expect(pace.noiseFloor().share).toBe(0);
    const grant = pace.report({ worker: 'b', want: 100, accepted: 3, limited: 0.3, fresh: { answers: 1, limited: 0 } }, t + 100);
    expect(grant.noise).toEqual({ share: 0.1, answers: 10 });
    expect(grant.slowStart).toBe(true);
  });

  it('a hold relayed in the seconds after the floor is learned holds but does not cut: its worker had not heard of the floor yet', () => {
    // A worker learns the floor at its next grant, a report and its relay later, and relays its
    // noise 429s until then: one such hold ended the restarted slow start at 2 a second on an
    // account of 20, whose plateau held it there (simulated, 10 % noise: 0.10 of the clean account).
    const pace = new FleetPace({ rate: 3.6, slowStart: false });
    let t = reports(pace, 1_000_000, 3, 3, 0.3);
    const grant = pace.report({ worker: 'a', want: 100, accepted: 3, limited: 0.3, fresh: { answers: 20, limited: 2 } }, t);
    expect(grant.noise?.share).toBeCloseTo(0.05, 3);
    expect(grant.slowStart).toBe(true);
    const rate = pace.state().rate;
    pace.overshoot(t + 1300, t + 300);
    expect(pace.state()).toMatchObject({ rate, slowStart: true });
    // The hold holds: the rate grows only after it.
    t += 1000;
    pace.report({ worker: 'a', want: 100, accepted: 3, limited: 0.3 }, t);
    expect(pace.state().rate).toBe(rate);
    // From LEASE_MS on, a relayed hold is an overshoot again.
    t += 3000;
    pace.report({ worker: 'a', want: 100, accepted: 3, limited: 0.3 }, t);
    const grown = pace.state().rate;
    expect(grown).toBeGreaterThan(rate);
    pace.overshoot(t + 1000, t);
    expect(pace.state().rate).toBeLessThan(grown);
  });

  it('lets the calls after a hold count as fresh up to 0.7 of the best the API accepted until a limit or floor is found, 0.5 from then on, however far the noise cut the rate', () => {
    // Before the floor was known, the noise cut the rate to 1-3 calls a second, and the workers'
    // own bound (half their rate, or what the API accepted of them, holds counted) left 1-2 fresh
    // calls a hold: 14-18 fresh answers in 80 s, and a floor learned at second 60-90 or never.
    const pace = new FleetPace({ rate: 10, slowStart: false });
    let t = reports(pace, 1_000_000, 3, 8, 0);
    // Beside the best it accepted: under the workers' own bound (half their rate).
    const near = pace.report({ worker: 'a', want: 100, accepted: 8, limited: 0 }, t).freshShare;
    expect(near).toBeCloseTo((0.7 * 8) / pace.state().rate, 5);
    expect(near).toBeLessThan(0.7);
    // Cut to between: the share of the rate that stays under 0.7 of it.
    for (let cut = 0; cut < 4; cut++, t += 2100) pace.overshoot(t + 1000, t);
    const between = pace.report({ worker: 'a', want: 100, accepted: 5, limited: 0.5 }, t).freshShare;
    expect(pace.state().rate).toBeGreaterThan(0.7 * 8);
    expect(between).toBeCloseTo((0.7 * 8) / pace.state().rate, 5);
    expect(between).toBeGreaterThan(0.7);
    // Cut to under it: no limit that did not fall that far refuses the whole rate.
    for (let cut = 0; cut < 2; cut++, t += 2100) pace.overshoot(t + 1000, t);
    expect(pace.state().rate).toBeLessThan(0.7 * 8);
    expect(pace.state().rate).toBeGreaterThan(0.5 * 8);
    expect(pace.report({ worker: 'a', want: 100, accepted: 4.5, limited: 0.3 }, t).freshShare).toBe(1);
    // In slow start the rate may be far over any limit: none.
    const starting = new FleetPace();
    reports(starting, 1_000_000, 1, 4, 0);
    expect(starting.report({ worker: 'a', want: 100, accepted: 4, limited: 0 }, 1_001_000).freshShare).toBe(0);
    // A fleet that found a limit or a floor (carried over a continue-as-new): half, as a limit may
    // fall to 0.6 of the one found, and the calls at 0.7 of it are refused by it.
    const found = new FleetPace({ rate: 10, slowStart: false, found: true });
    const u = reports(found, 1_000_000, 3, 8, 0);
    expect(found.report({ worker: 'a', want: 100, accepted: 8, limited: 0 }, u).freshShare).toBeCloseTo((0.5 * 8) / found.state().rate, 5);
  });

  it("the fleet's own answers count toward the floor only under half the best the API accepted, a limit found or not", () => {
    // The noise cut the rate from 10 to 6 (0.6 of the 10 the API accepted). Many answers there,
    // with a few 429s among them, made a floor at 0.7: one with no limit in reach learned 0.024 of
    // 10 % noise from 3 in some 80, and relayed the rest as holds for 80 s.
    const pace = new FleetPace({ rate: 12, slowStart: false });
    let t = reports(pace, 1_000_000, 3, 10, 0);
    for (let cut = 0; cut < 5; cut++, t += 2100) pace.overshoot(t + 1000, t);
    expect(pace.state().rate).toBeLessThan(0.7 * 10);
    expect(pace.state().rate).toBeGreaterThan(0.5 * 10);
    t = reports(pace, t + 5000, 10, 6, 0.6);
    expect(pace.noiseFloor().share).toBe(0);
    // Under half: they do.
    for (let cut = 0; cut < 2; cut++, t += 2100) pace.overshoot(t + 1000, t);
    expect(pace.state().rate).toBeLessThan(0.5 * 10);
    reports(pace, t + 5000, 20, 4.5, 0.45);
    expect(pace.noiseFloor().share).toBeGreaterThan(0.05);
  });

  it('a limit shown, or a floor learned, is carried over a continue-as-new', () => {
    const pace = new FleetPace({ rate: 20, slowStart: false, lastCutAt: 900_000, cutFor: 901_000 });
    let t = reports(pace, 1_000_000, 25, 20, 0);
    expect(pace.state().found).toBe(false);
    pace.overshoot(t + 1000, t);
    expect(pace.state().found).toBe(true);
    const carried = JSON.parse(JSON.stringify(pace.state())) as FleetPaceState;
    expect(new FleetPace(carried).state().found).toBe(true);
    // A floor learned from fresh answers.
    const noisy = new FleetPace({ rate: 3.6, slowStart: false });
    t = reports(noisy, 1_000_000, 3, 3, 0.3);
    noisy.report({ worker: 'a', want: 100, accepted: 3, limited: 0.3, fresh: { answers: 20, limited: 2 } }, t);
    expect(noisy.noiseFloor().share).toBeGreaterThan(0);
    expect(noisy.state().found).toBe(true);
  });

  it('an overshoot after 20 s of calls waiting with no hold shows a limit that fell to the known-good pace: the calls after a hold no longer all count as fresh', () => {
    // The best the API accepted was 40 a second; the limit fell to 20, and the rate found it. Kept
    // for 5 minutes, the old pace let every call after a hold count as fresh (its half was the
    // whole new limit), and a limiter charging refused calls refused them: a floor learned a
    // minute after the fall (simulated, 40 to 20 on four workers: 10.56 % 429s).
    const fallen = (quietS: number) => {
      const pace = new FleetPace({ rate: 20, slowStart: false, lastCutAt: 900_000, cutFor: 901_000 });
      let t = reports(pace, 1_000_000, 4, 40, 0);
      t = reports(pace, t, quietS, 20, 0);
      pace.overshoot(t + 1000, t);
      return pace.report({ worker: 'a', want: 100, accepted: 20, limited: 0 }, t + 1000).freshShare;
    };
    // After 29 s of calls waiting (4 + 25): half of the 20 the overshoot showed, over the rate cut from it.
    expect(fallen(25)).toBeLessThan(0.6);
    // After 14 s (noise not yet known holds the fleet every few seconds): the old pace stays.
    expect(fallen(10)).toBe(1);
  });

  it("beside a young floor, the fleet's answers with clearly more 429s than it explains are an overshoot: slow start ends", () => {
    // The workers relay no 429 within a floor's margin, and a floor of 2 in 20 has a wide one:
    // slow start went on to 2.5 times an account of 5 a second, whose 429s (40 %) hid in it for 30 s.
    const young = () => new FleetPace({ rate: 4, slowStart: true, fresh: { answers: 20, limited: 2 } });
    const over = young();
    const t = reports(over, 1_000_000, 6, 5, 0.5);
    expect(over.state().slowStart).toBe(true);
    // Twice the limit: half the answers 429s.
    reports(over, t, 3, 5, 5);
    expect(over.state().slowStart).toBe(false);
    expect(over.state().rate).toBeLessThan(6);
    // Noise alone at the floor's share does not end it.
    const noise = young();
    reports(noise, 1_000_000, 20, 9, 1);
    expect(noise.state().slowStart).toBe(true);
  });

  it('after slow start, the search (settling) ends at answers clearly over a young floor; probing keeps its margin', () => {
    // Settling grows 2 % a second until an overshoot, and the workers relay none within the
    // floor's margin: an account of 5 a second was taken to 8.4 with a fifth of its calls 429s.
    const settling = () => new FleetPace({ rate: 5, slowStart: false, settling: true, fresh: { answers: 20, limited: 2 } });
    const over = settling();
    reports(over, 1_000_000, 2, 5, 4);
    expect(over.state().settling).toBe(false);
    expect(over.state().rate).toBeLessThan(5);
    // Answers as far over it while probing stay within the young floor's margin, which counts every
    // answer since the last cut (at least 20): no cut from two reports' 14.
    const probing = () => new FleetPace({ rate: 5, slowStart: false, settling: false, fresh: { answers: 20, limited: 2 } });
    const within = probing();
    reports(within, 1_000_000, 2, 5, 2);
    expect(within.state().rate).toBeGreaterThan(5);
    // But a third of them 429s or more is a limit far under the rate, never noise (NOISE_CAP).
    const far = probing();
    reports(far, 1_000_000, 2, 5, 4);
    expect(far.state().rate).toBeLessThan(5);
  });

  it('a floor whose restarted search overshoots with no more accepted than when it was learned was a limit that fell: it is forgotten', () => {
    // A limit that fell from 5 a second to 3 refused the fresh calls after its first holds (sent
    // at up to what the API accepted before), and they were learned as noise: the search the
    // floor restarted met a limit it could not tell from the floor, for 60 s, half the calls 429s
    // (simulated, a limiter charging refused calls, two workers).
    for (const [acceptedThen, forgotten] of [
      [3.2, true],
      [12, false],
    ] as const) {
      const pace = new FleetPace({ rate: 3.4, slowStart: false });
      let t = reports(pace, 1_000_000, 3, 3, 0.4);
      const grant = pace.report({ worker: 'a', want: 100, accepted: 3, limited: 0.4, fresh: { answers: 11, limited: 2 } }, t);
      expect(grant.noise?.share).toBeGreaterThan(0);
      expect(grant.slowStart).toBe(true);
      t = reports(pace, t + 1000, 4, acceptedThen, 0);
      pace.overshoot(t + 1000, t);
      expect(pace.noiseFloor().share > 0).toBe(!forgotten);
      // Slow start ends at 0.9 of what the API accepted either way: the limit was met.
      expect(pace.state().slowStart).toBe(false);
    }
    // Refuted over counts of a charging limiter's deficit (its blind growth refused nearly every
    // call): slow start ends from what the API accepted when the floor was learned, not from them.
    const pace = new FleetPace({ rate: 34, slowStart: false });
    let t = reports(pace, 1_000_000, 3, 30, 3);
    const grant = pace.report({ worker: 'a', want: 100, accepted: 30, limited: 3, fresh: { answers: 11, limited: 2 } }, t);
    expect(grant.slowStart).toBe(true);
    t = reports(pace, t + 1000, 3, 1.5, 40);
    pace.overshoot(t + 1000, t);
    expect(pace.noiseFloor().share).toBe(0);
    expect(pace.state().rate).toBeCloseTo(0.9 * 30, 5);
  });

  it("a third of the fleet's answers 429s or more is an overshoot whatever a young floor's margin: slow start does not stand at twice the limit", () => {
    // A floor from 3 of 11 fresh answers (10 % noise) restarted slow start, which ran to 40 a
    // second on an account of 20 and stood there 15 s, 40 % of its answers 429s, inside the
    // floor's margin (simulated, bench pacing's noise row).
    const pace = new FleetPace({ rate: 40, slowStart: true, fresh: { answers: 11, limited: 3 } });
    expect(pace.noiseFloor().share).toBeGreaterThan(0.15);
    reports(pace, 1_000_000, 2, 20, 14);
    expect(pace.state().slowStart).toBe(false);
    expect(pace.state().rate).toBeLessThan(25);
  });

  it('the limit the answers since a cut show beside a floor is not read from what the API accepted of a fleet whose work ran out: the rate is cut a tenth', () => {
    // The answers since the cut (a rate over the limit, its 429s within the floor's margin) showed
    // the limit at a report from the first seconds of an idle minute: cut to what the API had just
    // accepted of the idle fleet, an account of 20 a second waited at 0.25-1.5 through the next
    // batch (simulated, 10 % noise, two workers: 0.025-0.07 of the limit over its minute).
    const pace = new FleetPace({ rate: 26, slowStart: false, settling: false, noise: { answers: 300, limited: 30 } });
    const t = 1_000_000;
    pace.report({ worker: 'a', want: 40, accepted: 20, limited: 6 }, t);
    expect(pace.state().rate).toBeGreaterThan(26);
    const before = pace.state().rate;
    // The work runs out: half a call accepted a second, and a few 429s more tip the answers since the cut over the floor.
    pace.report({ worker: 'a', want: 1, accepted: 0.5, limited: 5 }, t + 1000);
    expect(pace.state().rate).toBeCloseTo(0.9 * before, 5);
    // A fleet sending its rate is cut to what the API accepted of it, the noise's share added back.
    const busy = new FleetPace({ rate: 26, slowStart: false, settling: false, noise: { answers: 300, limited: 30 } });
    busy.report({ worker: 'a', want: 40, accepted: 20, limited: 6 }, t);
    busy.report({ worker: 'a', want: 40, accepted: 16, limited: 9 }, t + 1000);
    expect(busy.state().rate).toBeCloseTo(16 / 0.9, 5);
  });

  it('a young floor matures from the answers of its checks, and a rate whose 429s hide in its margin is checked though nothing waits', () => {
    // A floor from 3 of 19 fresh answers has a margin of 0.3: a limit's 429s of 10-25 % hid in it
    // for minutes after the noise stopped, and the check ran only while calls waited for the rate.
    const pace = new FleetPace({ rate: 10, slowStart: false, fresh: { answers: 19, limited: 3 } });
    expect(pace.noiseFloor()).toEqual({ share: 2 / 19, answers: 19 });
    let t = 1_000_000;
    // The noise stopped; sending what is asked (want under the rate), a fifth of the answers are
    // the limit's 429s, none while a check holds the share under what the API accepts.
    let share = 10;
    let checks = 0;
    for (let s = 0; s < 150; s++, t += 1000) {
      const checking = share < 5;
      const grant = pace.report({ worker: 'a', want: 6, accepted: checking ? 4.5 : 5, limited: checking ? 0 : 1.25 }, t);
      if (grant.rate < 5 && share >= 5) checks++;
      share = grant.rate;
    }
    expect(checks).toBeGreaterThan(0);
    // The checks' answers are the floor's kind: it falls with them.
    expect(pace.noiseFloor().share).toBeLessThan(0.05);
  });

  it('a check due right after a hold waits for counts with no hold in them: it holds the shares under what the API accepts, not under what a hold let through', () => {
    // A check that began a second after a hold took its rate from a report counting the hold:
    // 0.9 of 4 a second at an account accepting 18, for 12 s (simulated, 10 % noise beside a
    // limit of 20: 0.79 of the clean account in that minute instead of 0.87).
    const pace = new FleetPace({ rate: 22, slowStart: false, fresh: { answers: 19, limited: 2 } });
    const t = 1_000_000;
    let lowest = Number.POSITIVE_INFINITY;
    for (let s = 0; s < 60; s++) {
      const now = t + s * 1000;
      // The first check runs at once, so the next is due at second 30: a hold ends just then.
      if (s === 29) pace.overshoot(now + 1000, now);
      // The two reports after it count the hold: little was accepted. A tenth of the answers are noise.
      const accepted = s === 30 || s === 31 ? 4 : 18;
      const grant = pace.report({ worker: 'a', want: 40, accepted, limited: accepted / 9 }, now);
      if (s >= 29) lowest = Math.min(lowest, grant.rate);
    }
    expect(lowest).toBeGreaterThan(0.8 * 18);
  });

  it("a check waits until every worker's counts span a whole lease and the fleet sends what it may: a batch after an idle spell counts its first seconds", () => {
    // A check from a first report after an idle minute (2-3 calls accepted a second, the fleet's
    // calls only starting) held an account of 20 a second at 2-3 for 30 s (simulated, 10 % noise);
    // one from the first full lease of a batch coming in, at 0.9 of 14 a second for 8 s (the
    // rate-limit bench's second batch).
    const pace = new FleetPace({ rate: 20, slowStart: false, noise: { answers: 200, limited: 20 } });
    const t = 1_000_000;
    const shares: number[] = [];
    // The worker's first reports count its first seconds back, its calls starting: 3, 8, 12, 14, then 18 a second accepted.
    for (const [s, accepted] of [3, 8, 12, 14, 18, 18, 18].entries())
      shares.push(pace.report({ worker: 'a', want: 40, accepted, limited: accepted / 9 }, t + s * 1000).rate);
    // No check over the first lease, nor while the fleet sends clearly under its rate: the share is the rate.
    expect(Math.min(...shares.slice(0, 4))).toBeGreaterThanOrEqual(20);
    // Then a check, at 0.9 of what the API accepts of the fleet sending its rate.
    expect(shares[4]).toBeCloseTo(0.9 * 18, 5);
    // A fleet under its rate whose answers hold more 429s than the floor explains (a limit's,
    // hidden in its margin, its refused calls waiting their Retry-After) is checked.
    const hidden = new FleetPace({ rate: 20, slowStart: false, noise: { answers: 200, limited: 20 } });
    let held = Number.POSITIVE_INFINITY;
    for (let s = 0; s < 6; s++)
      held = Math.min(held, hidden.report({ worker: 'a', want: 40, accepted: 12, limited: 4 }, t + s * 1000).rate);
    expect(held).toBeCloseTo(0.9 * 12, 5);
  });

  it("a young first floor's check holds 0.9 of what the API accepts with the noise's share added back; a grown one's, or one learned after a limit was found, without", () => {
    // The noise refused calls the limit had let through: 0.9 of what was accepted alone held the
    // fleet at 0.81 of the limit under 10 % noise through the young floor's checks.
    const lowest = (state: Partial<FleetPaceState>, accepted: number) => {
      const pace = new FleetPace({ slowStart: false, lastCutAt: 1_000_000, ...state });
      let held = Number.POSITIVE_INFINITY;
      for (let s = 0; s < 8; s++)
        held = Math.min(held, pace.report({ worker: 'a', want: 2 * accepted, accepted, limited: accepted / 9 }, 1_000_000 + s * 1000).rate);
      return held;
    };
    const young = { fresh: { answers: 19, limited: 3 } };
    const share = new FleetPace(young).noiseFloor().share;
    expect(share).toBeGreaterThan(0.05);
    expect(lowest({ rate: 20, firstFloor: true, ...young }, 18)).toBeCloseTo((0.9 * 18) / (1 - share), 5);
    expect(lowest({ rate: 5, firstFloor: true, ...young }, 4.5)).toBeCloseTo((0.9 * 4.5) / (1 - share), 5);
    // At most 0.15 added back: a young floor may be a quarter.
    expect(lowest({ rate: 20, firstFloor: true, fresh: { answers: 12, limited: 4 } }, 18)).toBeCloseTo((0.9 * 18) / 0.85, 5);
    // Once the noise stops, a grown floor's share added back set the check at the limit, whose 429s kept the floor.
    expect(lowest({ rate: 20, firstFloor: true, noise: { answers: 200, limited: 20 } }, 18)).toBeCloseTo(0.9 * 18, 5);
    // A floor learned after a limit was found may be that limit fallen: a check over it pooled the limit's 429s.
    expect(lowest({ rate: 20, found: true, firstFloor: false, ...young }, 18)).toBeCloseTo(0.9 * 18, 5);
  });

  it("a check at a small account lasts until it has counted some 70 answers; a larger account's lasts 7.5 s", () => {
    // At 5 a second a 7.5 s check counted some 13 answers: a floor of 0.1 left by noise that
    // stopped stood for minutes, its margin hiding the limit's 429s (4-12 %).
    for (const [accepted, atLeast, atMost] of [
      [5, 19, 22],
      [40, 7, 9],
    ] as const) {
      const pace = new FleetPace({ rate: 1.1 * accepted, slowStart: false, fresh: { answers: 19, limited: 2 } });
      let t = 1_000_000;
      let held = 0;
      for (let s = 0; s < 28; s++, t += 1000) {
        const grant = pace.report({ worker: 'a', want: 2 * accepted, accepted, limited: 0.1 * accepted }, t);
        if (grant.rate < accepted) held++;
      }
      expect(held).toBeGreaterThanOrEqual(atLeast);
      expect(held).toBeLessThanOrEqual(atMost);
    }
  });

  it('an overshoot while probing cuts a tenth off what the API accepted, when that is most of the rate', () => {
    // A limit's burst lets the rate run a tenth over it before the first 429: a tenth off the rate
    // left it over the limit (10 a second on 4 workers: an overshoot every 20 s, 2 % 429s).
    const pace = new FleetPace({ rate: 11.3, slowStart: false, lastCutAt: 1_000_000 });
    let t = reports(pace, 1_000_000, 3, 10.2, 0);
    const before = pace.state().rate;
    pace.overshoot(t + 1000, t);
    expect(pace.state().rate).toBeCloseTo(0.9 * 10.2, 5);
    expect(0.9 * before).toBeGreaterThan(10);
    // Far less accepted than the rate is holds (429s no pace causes, not yet known): a tenth off the rate.
    const held = new FleetPace({ rate: 11.3, slowStart: false, lastCutAt: 1_000_000 });
    t = reports(held, 1_000_000, 3, 6, 0.5);
    const rate = held.state().rate;
    held.overshoot(t + 1000, t);
    expect(held.state().rate).toBeCloseTo(0.9 * rate, 5);
  });

  it('a rate cut by a tenth probes back to the limit in no fewer than about 250 calls, at 5 a second as at 50', () => {
    // Each overshoot costs about two 429s: probing half a percent a second (a quarter under 10 a
    // second), accounts of 5-12 a second met their limit every 20-30 s (1.2-2 % 429s, 4 workers,
    // a limiter charging refused calls).
    for (const limit of [5, 8, 50]) {
      const pace = new FleetPace({ rate: 0.9 * limit, slowStart: false, lastCutAt: 1_000_000 });
      let calls = 0;
      let t = 1_000_000;
      while (pace.state().rate < limit && t < 1_000_000 + 600_000) {
        calls += pace.state().rate;
        t = reports(pace, t, 1, pace.state().rate, 0);
      }
      expect(pace.state().rate).toBeGreaterThanOrEqual(limit);
      if (limit < 20) expect(calls).toBeGreaterThan(240);
      else expect(calls).toBeLessThan(1200); // a large account probes half a percent a second, as before
    }
  });

  it("a probing cycle's 429s over half a percent of its answers slow the next probe; fewer leave it at full speed", () => {
    // Each overshoot costs a 429 per worker whose call went out before the hold reached it: 4
    // workers on an account of 20 a second met the limit every 20 s, 1 % 429s (a limiter charging refused calls).
    const growth = (limited: number, cycles: number) => {
      const pace = new FleetPace({ rate: 40, slowStart: false, lastCutAt: 1_000_000 });
      let t = 1_000_000;
      for (let cycle = 0; cycle < cycles; cycle++) {
        t = reports(pace, t, 20, pace.state().rate, limited * pace.state().rate);
        pace.overshoot(t + 1000, t);
      }
      const cut = pace.state().rate;
      reports(pace, t + 1000, 10, cut, 0);
      return pace.state().rate / cut - 1;
    };
    // Half a percent a second at full speed.
    const full = growth(0.0005, 1);
    expect(full).toBeGreaterThan(0.045);
    expect(growth(0.01, 1)).toBeLessThan(0.6 * full);
    expect(growth(0.01, 1)).toBeGreaterThan(0.4 * full);
    // Straight to the budget, not by half at most a cycle: a cycle at four times it probes at a
    // quarter (4 workers, 10-12 a second, a limiter charging refused calls: 1-1.6 % 429s at half).
    expect(growth(0.02, 1) / full).toBeCloseTo(0.25, 1);
    // Down to an eighth, however many costly cycles.
    expect(growth(0.05, 6) / full).toBeCloseTo(1 / 8, 2);
    // Under 10 a second the probe is already gentle (PROBE_CALLS) and waits at a plateau: not scaled.
    const small = new FleetPace({ rate: 8, slowStart: false, lastCutAt: 1_000_000 });
    const u = reports(small, 1_000_000, 20, 8, 0.4);
    small.overshoot(u + 1000, u);
    expect(small.state().probeScale).toBe(1);
  });

  it("a probing cycle that had a noise floor, gone by its end, leaves the probe's speed alone", () => {
    // The noise's 429s are among the cycle's: counted against the budget, the probe crept at an
    // eighth of its speed after the noise stopped (simulated, 20 and 40 a second: lowest 0.985 -> 0.964).
    const pace = new FleetPace({
      rate: 40,
      slowStart: false,
      lastCutAt: 1_000_000,
      noise: { answers: 300, limited: 30 },
      all: { answers: 300, limited: 30 },
    });
    expect(pace.noiseFloor().share).toBeGreaterThan(0);
    let t = reports(pace, 1_000_000, 10, 36, 4);
    t = reports(pace, t, 20, 40, 0);
    expect(pace.noiseFloor().share).toBe(0);
    pace.overshoot(t + 1000, t);
    expect(pace.state().probeScale).toBe(1);
  });

  it('a floor from a few fresh answers is at most a quarter, until the pool holds enough answers', () => {
    // 3 429s in 10 fresh answers are as likely a limit's as noise's: a floor of 0.3 from them hid
    // an account's own 30 % 429s for good once the noise stopped (40 a second, two workers).
    const pace = new FleetPace();
    pace.report({ worker: 'a', want: 10, accepted: 0, fresh: { answers: 19, limited: 6 } }, 1_000_000);
    expect(pace.noiseFloor()).toEqual({ share: 0.25, answers: 19 });
    // Under it, less the 429 that made it a floor (youngShare): 2 of 10, and 1 of 10.
    const lower = new FleetPace();
    lower.report({ worker: 'a', want: 10, accepted: 0, fresh: { answers: 10, limited: 3 } }, 1_000_000);
    expect(lower.noiseFloor()).toEqual({ share: 0.2, answers: 10 });
    const lowest = new FleetPace();
    lowest.report({ worker: 'a', want: 10, accepted: 0, fresh: { answers: 10, limited: 2 } }, 1_000_000);
    expect(lowest.noiseFloor()).toEqual({ share: 0.1, answers: 10 });
  });

  it('a young floor is read less the 429 that made it one wherever it rests, so a third in a dozen answers does not forget it', () => {
    // 3 fresh 429s of 11 (10 % noise) made a floor and restarted slow start; the 12th answer, a
    // 429 too, read as a third (a limit's share) and the floor was gone. Slow start sends no fresh
    // call, so none came to correct it: the fleet ran at 0.1 of an account of 20 for 15 s more.
    const pace = new FleetPace({ rate: 4, slowStart: false });
    pace.report({ worker: 'a', want: 10, accepted: 3, fresh: { answers: 11, limited: 3 } }, 1_000_000);
    expect(pace.noiseFloor().share).toBeGreaterThan(0);
    pace.report({ worker: 'a', want: 10, accepted: 3, fresh: { answers: 1, limited: 1 } }, 1_001_000);
    expect(pace.noiseFloor()).toEqual({ share: 0.25, answers: 12 });
    // A pool of every answer no limit refused reads the same way: 6 of 20 is 0.25, not 0.3.
    expect(new FleetPace({ noise: { answers: 20, limited: 6 } }).noiseFloor()).toEqual({ share: 0.25, answers: 20 });
    // Past RELEARN_ANSWERS it is its share, and a third or more is a limit's, never noise.
    expect(new FleetPace({ noise: { answers: 100, limited: 20 } }).noiseFloor()).toEqual({ share: 0.2, answers: 100 });
    expect(new FleetPace({ noise: { answers: 100, limited: 34 } }).noiseFloor().share).toBe(0);
  });

  it('a small account probes up to just under where it last overshot, and waits there for the quiet spell', () => {
    // Probing on, an account of 2 a second met its limit every 20-40 s, and each overshoot's 429
    // was 0.7 % of its calls (the bench: 2 % 429s). Carried over a continue-as-new; a state
    // without it (an older run's) probes as before.
    const pace = new FleetPace({ rate: 2.1, slowStart: false, lastCutAt: 1_000_000 });
    let t = reports(pace, 1_000_000, 3, 2.05, 0);
    pace.overshoot(t + 1000, t);
    expect(pace.state().rate).toBeLessThan(1.95);
    t = reports(pace, t + 1000, 30, 1.9, 0);
    const carried = new FleetPace(JSON.parse(JSON.stringify(pace.state())) as FleetPaceState);
    t = reports(carried, t, 30, 1.95, 0);
    expect(carried.state().rate).toBeCloseTo(0.98 * 2.05, 5);
    const { peak: _, ...older } = carried.state();
    const probing = new FleetPace(older);
    reports(probing, t, 30, 1.95, 0);
    expect(probing.state().rate).toBeGreaterThan(2.1);
    // After the quiet spell (90 s for a small account) it grows again: a limit that rose is found.
    reports(carried, t, 70, 1.95, 0);
    expect(carried.state().rate).toBeGreaterThan(2.1);
  });

  it("a small account's plateau rises with the noise floor it was read beside, not down with it; carried over a continue-as-new", () => {
    // A young floor of 0.04 (2 fresh 429s of 24, 10 % noise) took the calls the noise refused for
    // the limit's: an account of 5 a second waited at 4.1 until its quiet spell, the floor grown to 0.12.
    const plateau = new SmallAccountPlateau();
    plateau.overshoot({
      now: 1_000_000,
      rate: 4.5,
      accepted: 4.3,
      heldBefore: 0,
      slowStart: false,
      noiseShare: 0.04,
      shows: true,
      settling: false,
      pressedMs: 0,
    });
    expect(plateau.peak).toBeCloseTo(4.3, 5);
    plateau.noiseFloor(0.12);
    expect(plateau.peak).toBeCloseTo((4.3 * 0.96) / 0.88, 5);
    // A floor that falls is noise that fell: the peak was read while it lasted.
    plateau.noiseFloor(0.05);
    expect(plateau.peak).toBeCloseTo((4.3 * 0.96) / 0.88, 5);
    const carried = new SmallAccountPlateau(plateau.peak, plateau.peakNoise);
    carried.noiseFloor(0.12);
    expect(carried.peak).toBeCloseTo((4.3 * 0.96) / 0.88, 5);
    carried.noiseFloor(0.2);
    expect(carried.peak).toBeCloseTo((4.3 * 0.96) / 0.8, 5);
    // A run of an older build carried no floor with its peak: read beside the one the next report finds.
    const older = new SmallAccountPlateau(4.3);
    older.noiseFloor(0.12);
    expect(older.peak).toBeCloseTo(4.3, 5);
    // The account workflow's pace tells its plateau the floor at every report, and carries it.
    const pace = new FleetPace({ rate: 4.2, slowStart: false, peak: 4.3, peakNoise: 0.04, noise: { answers: 200, limited: 24 } });
    const share = pace.noiseFloor().share;
    expect(share).toBeGreaterThan(0.04);
    pace.report({ worker: 'a', want: 10, accepted: 3.8, limited: 0.4 }, 1_000_000);
    expect(pace.state().peak).toBeCloseTo((4.3 * 0.96) / (1 - share), 5);
    expect(pace.state().peakNoise).toBeCloseTo(share, 5);
  });

  it("after an overshoot past a rate it held 20 s with calls waiting, a small account comes back to that rate at settling's speed, not the probe's", () => {
    // At 2-5 a second the probe took 30-60 s to climb back the tenth a cut took (the accounts
    // bench: an account of 5 a second at 0.92 of its limit for a window).
    const t = 1_000_000;
    const pace = new FleetPace({ rate: 4, slowStart: false, peak: 4.1, lastCutAt: t });
    // At its plateau (0.98 × 4.1) for the quiet spell (90 s), then a tenth a second past it.
    let s = 1;
    for (; s <= 93; s++) pace.report({ worker: 'a', want: 100, accepted: 4 }, t + s * 1000);
    const before = pace.state().rate;
    expect(before).toBeGreaterThan(1.1 * 0.98 * 4.1);
    pace.overshoot(t + (s + 1) * 1000, t + s * 1000);
    const cut = pace.state().rate;
    expect(cut).toBeLessThan(3.7);
    for (s += 2; s <= 103; s++) pace.report({ worker: 'a', want: 100, accepted: 0.95 * cut }, t + s * 1000);
    // Back to the rate it held, in some 5 s (the plateau is no lower, though the counts read 4 accepted).
    expect(pace.state().rate).toBeCloseTo(0.98 * 4.1, 5);

    // An overshoot at the rate it held says that rate was not safe: the probe climbs back.
    const held = new FleetPace({ rate: 4, slowStart: false, peak: 4.1, lastCutAt: t });
    for (s = 1; s <= 30; s++) held.report({ worker: 'a', want: 100, accepted: 4 }, t + s * 1000);
    held.overshoot(t + (s + 1) * 1000, t + s * 1000);
    const heldCut = held.state().rate;
    for (s += 2; s <= 40; s++) held.report({ worker: 'a', want: 100, accepted: 0.95 * heldCut }, t + s * 1000);
    expect(held.state().rate).toBeLessThan(heldCut + 0.1);
  });

  it('beside a noise floor, a rate held 20 s is not known to be one the limit allows: its 429s hide in the floor', () => {
    // After noise stopped, an account of 5 a second held 6.2 with a floor of 0.03-0.08 hiding a
    // 429 a second of its limit's; each overshoot brought it back at settling's speed to 6.2 (simulated).
    const kept = (noiseShare: number) => {
      const plateau = new SmallAccountPlateau(6);
      for (let s = 0; s <= 25; s++) plateau.record(1_000_000 + s * 1000, 6, 6);
      const at = 1_026_000;
      plateau.overshoot({
        now: at,
        rate: 6.3,
        accepted: 6,
        heldBefore: 0,
        slowStart: false,
        noiseShare,
        shows: false,
        settling: false,
        pressedMs: 25_000,
      });
      return plateau.kept;
    };
    expect(kept(0)).toBe(6);
    expect(kept(0.05)).toBe(0);
  });

  it("slow start's end sets no plateau from counts shorter than a lease: the rate settles on past them", () => {
    // Four workers' first reports count a second each: at an account of 3 a second, one worker
    // idle, slow start ended at its first overshoot with 2 a second counted, and the plateau
    // held the rate at 1.96 for the 90 s quiet spell (0.65 of the account spent).
    const early = new FleetPace();
    let t = 1_000_000;
    for (const worker of ['a', 'b', 'c']) early.report({ worker, want: 2, accepted: 0.7, limited: 0 }, t);
    t += 1000;
    for (const worker of ['a', 'b', 'c']) early.report({ worker, want: 2, accepted: 0.7, limited: 0 }, t);
    early.overshoot(t + 1000, t);
    expect(early.state()).toMatchObject({ slowStart: false, peak: 0 });
    for (let s = 0; s < 40; s++, t += 1000)
      for (const worker of ['a', 'b', 'c']) early.report({ worker, want: 2, accepted: early.state().rate / 3, limited: 0 }, t);
    expect(early.state().rate).toBeGreaterThan(2.5);
    // Counted over whole leases (an account of 2 a second: slow start ends at its third overshoot), the plateau stands.
    const counted = new FleetPace();
    t = 1_000_000;
    for (let cut = 0; cut < 3; cut++) {
      t = reports(counted, t, 3, 2.05, 1);
      counted.overshoot(t + 1000, t);
    }
    expect(counted.state()).toMatchObject({ slowStart: false });
    expect(counted.state().peak).toBeGreaterThan(1.5);
  });

  it("slow start's end sets no plateau from counts with a hold in them: the rate settles on to the limit", () => {
    // Two worker processes, an account of 5 a second, 20 shipments reaching tracking one by one
    // (test/fleet-pace.process.test.ts under load; its reports and holds as the account workflow
    // took them): slow start ended at 8.44 a second with 4.33 counted over the hold before it and a
    // rate that grew half again a second, and the plateau held the account at 4.25 for the 90 s
    // quiet spell (one CI run: at 3 a second, the test's floor missed).
    const pace = new FleetPace();
    const at = (s: number) => 1_000_000 + s * 1000;
    const report = (s: number, worker: string, want: number, accepted: number, limited: number) =>
      pace.report({ worker, want, accepted, limited }, at(s));
    // [second, worker, want, accepted, limited]: each a report; [second, hold's end]: a relayed hold.
    const taken: ([number, string, number, number, number] | [number, number])[] = [
      [3.3, 'f', 1, 0, 0],
      [3.3, 'd', 1, 0, 0],
      [3.7, 'd', 1, 0, 0],
      [4.9, 'f', 0.33, 0.33, 0],
      [5.0, 'd', 1, 0, 0],
      [5.4, 'f', 5.33, 0.33, 0],
      [5.5, 'd', 11.67, 0.67, 0],
      [6.3, 7.3],
      [6.5, 'f', 10.67, 1.67, 0],
      [6.5, 'd', 11.67, 1.33, 0.33],
      [7.3, 'f', 10.67, 1.67, 0],
      [7.6, 'd', 10.67, 1.33, 0.33],
      [8.4, 'f', 7.33, 2.33, 0],
      [8.6, 'd', 16.33, 2.0, 0.33],
      [9.1, 10.1],
    ];
    for (const entry of taken) {
      if (entry.length === 2) pace.overshoot(at(entry[1]), at(entry[0]));
      else report(...entry);
    }
    expect(pace.state()).toMatchObject({ slowStart: false, peak: 0 });
    // The API takes what is let through, up to its limit of 5: settling grows on to it.
    let s = 9.4;
    for (let i = 0; s < 40 && pace.state().rate < 4.9; i++, s += 0.5)
      report(s, i % 2 === 0 ? 'f' : 'd', 10, Math.min(5, pace.state().rate) / 2, 0);
    expect(pace.state().rate).toBeGreaterThanOrEqual(4.9);
    expect(s).toBeLessThan(25);
  });

  it("settling's overshoot sets a small account's plateau from counts with no hold in them, and cuts to under the limit at once", () => {
    // An account of 2 a second, slow start's end set no plateau: settling grew past the limit on
    // its burst to 2.38 with 2 a second accepted, just under the 0.85 of the rate that cuts from
    // what was accepted, so the cut left 2.14 and no plateau: two more overshoots followed (2 %
    // 429s over the simulation's 75 s).
    const pace = new FleetPace({ rate: 2.38, slowStart: false, settling: true, lastCutAt: 990_000, cutFor: 991_000 });
    const { t, before } = overshootAfter(pace, 4, 2.0, 0);
    expect(pace.state().rate).toBeLessThanOrEqual(0.9 * 0.85 * before + 1e-9);
    expect(pace.state().peak).toBeCloseTo(2.0, 5);
    // And it stays under the limit, near it, with no second overshoot.
    reports(pace, t + 1000, 60, 1.9, 0);
    expect(pace.state().rate).toBeLessThanOrEqual(2.0);
    expect(pace.state().rate).toBeGreaterThanOrEqual(0.95 * 2.0);
  });

  it("a small account's plateau goes by what the API accepted over the 10 s before its overshoot, not by a burst's last counts", () => {
    // A rate growing past an account of 6 a second is all accepted until the limit's burst has
    // drained: the report before the 429 counts 6.7 accepted, and a plateau from it sat over the
    // limit and met it again and again (a limiter that charges a refused call, 4-8 a second on
    // two and four workers: 1.2-1.6 % 429s in the simulation).
    const growing = (pace: FleetPace, seconds: number): { t: number; counted: number[] } => {
      const counted: number[] = [];
      let t = 1_000_000;
      for (let s = 0; s < seconds; s++, t += 1000) {
        counted.push(pace.state().rate);
        pace.report({ worker: 'a', want: 100, accepted: counted.at(-1)!, limited: 0 }, t);
      }
      return { t, counted };
    };
    const settling = () => new FleetPace({ rate: 5.4, slowStart: false, settling: true, lastCutAt: 980_000, cutFor: 981_000 });
    const pace = settling();
    const { t, counted } = growing(pace, 13);
    const before = pace.state().rate;
    pace.overshoot(t + 1000, t);
    // Their mean over the reports at a rate within 0.85 of the one that overshot (its last 8 s).
    const near = counted.filter((rate) => rate >= 0.85 * before);
    expect(near.length).toBe(8);
    expect(pace.state().peak).toBeCloseTo(near.reduce((a, b) => a + b, 0) / near.length, 5);
    expect(pace.state().peak).toBeLessThan(0.95 * counted.at(-1)!);
    // With a hold among those 10 s (the API holding the account for 11 s), the last report's counts, as before.
    const held = settling();
    const h = growing(held, 4);
    held.overshoot(h.t + 11_000, h.t);
    let u = h.t + 11_000;
    let last = 0;
    for (; u < h.t + 20_000; u += 1000) {
      last = held.state().rate;
      held.report({ worker: 'a', want: 100, accepted: last, limited: 0 }, u);
    }
    held.overshoot(u + 1000, u);
    expect(held.state().peak).toBeCloseTo(last, 5);
    // Nor where the last counts show the fleet spending under 0.95 of its rate (a worker leaving
    // its share unused): the span's mean is under the limit further still.
    const unused = settling();
    let w = 1_000_000;
    let lastCounted = 0;
    for (; w < 1_013_000; w += 1000) {
      lastCounted = 0.9 * unused.state().rate;
      unused.report({ worker: 'a', want: 100, accepted: lastCounted, limited: 0 }, w);
    }
    unused.overshoot(w + 1000, w);
    expect(unused.state().peak).toBeCloseTo(lastCounted, 5);
    // Nor under 3 a second: a report counts under 9 calls, and a worker's unused share takes the
    // span's mean under the limit (through four real workers, an account of 2 a second at 0.905).
    const small = new FleetPace({ rate: 1.8, slowStart: false, settling: true, lastCutAt: 980_000, cutFor: 981_000 });
    const m = growing(small, 13);
    small.overshoot(m.t + 1000, m.t);
    expect(small.state().peak).toBeCloseTo(m.counted.at(-1)!, 5);
    // Nor over a growth of a tenth a second (the quiet spell's): those counts are far under the limit.
    const quiet = new FleetPace({ rate: 2, slowStart: false, peak: 2.1, lastCutAt: 800_000 });
    const q = growing(quiet, 13);
    quiet.overshoot(q.t + 1000, q.t);
    expect(quiet.state().peak).toBeCloseTo(q.counted.at(-1)!, 5);
  });

  it("settling's overshoot at 10 a second or more cuts a tenth off what the API accepted over the 10 s before it, not off the burst's last counts", () => {
    // Settling grows 2 % a second through the limit's burst, all of it accepted until the burst
    // has drained: the last report counts the rate that met the 429, and a tenth off it left four
    // workers over an account of 10 a second (a limiter charging refused calls: 1.06-1.08 % 429s).
    const pace = new FleetPace({ rate: 11, slowStart: false, settling: true, lastCutAt: 980_000, cutFor: 981_000 });
    const counted: number[] = [];
    let t = 1_000_000;
    for (let s = 0; s < 13; s++, t += 1000) {
      counted.push(pace.state().rate);
      pace.report({ worker: 'a', want: 100, accepted: counted.at(-1)!, limited: 0 }, t);
    }
    const before = pace.state().rate;
    pace.overshoot(t + 1000, t);
    const near = counted.filter((rate) => rate >= 0.85 * before);
    expect(near.length).toBe(8);
    expect(pace.state().rate).toBeCloseTo(0.9 * (near.reduce((a, b) => a + b, 0) / near.length), 5);
    expect(pace.state().rate).toBeLessThan(0.9 * 0.95 * counted.at(-1)!);
    // Probing's overshoot still cuts off the last counts: its rate grew little over the span.
    const accepted = pace.state().rate;
    reports(pace, t + 2000, 5, accepted, 0);
    pace.overshoot(t + 8000, t + 7000);
    expect(pace.state().rate).toBeCloseTo(0.9 * accepted, 5);
  });

  it("an overshoot's plateau is no lower than half the rate it met: counts a charging limiter's deficit emptied cut no further", () => {
    // Four workers on an account of 2 a second whose limiter charges refused calls, demand that
    // ramped: slow start ended at 9.49 a second with 1.33 counted, settling met the limit at 4.27
    // while the limiter's deficit let 0.33 a second through, and the rate was cut to 0.30, there
    // for the 90 s quiet spell (0.16 of the limit).
    const pace = new FleetPace({ rate: 4.27, slowStart: false, settling: true, peak: 1.33, lastCutAt: 990_000, cutFor: 991_000 });
    const { before } = overshootAfter(pace, 4, 0.33, 1.67);
    expect(pace.state().peak).toBeGreaterThanOrEqual(before / 2);
    expect(pace.state().rate).toBeGreaterThanOrEqual(0.9 * (before / 2) - 1e-9);
  });

  it("a small account's plateau is no higher than what the API accepted between its last two cuts, from 6 a second", () => {
    // A token bucket is empty at both overshoots, so what it accepted between them is at most its
    // limit, whatever its burst; the last counts may hold the burst a rate over the limit drained:
    // four workers on an account of 6 a second, a limiter charging refused calls, met it again and
    // again from a plateau read from them (1.35 % 429s, bench pacing).
    const burst = (s: number): number => (s < 16 ? 0.92 : 1.02);
    const between = (rate: number, state: Partial<FleetPaceState> = {}, share = burst) => {
      const pace = new FleetPace({ rate, slowStart: false, ...state });
      pace.overshoot(1_001_000, 1_000_000);
      let t = 1_001_000;
      let sum = 0;
      for (let s = 0; s < 20; s++, t += 1000) {
        // What the limit let through, then its burst drained by a rate over it.
        const accepted = share(s) * rate;
        if (s > 0) sum += accepted;
        pace.report({ worker: 'a', want: 100, accepted, limited: 0 }, t);
      }
      pace.overshoot(t + 1000, t);
      return { pace, mean: (1000 * sum) / (t - 1_000_000) };
    };
    const six = between(6.5);
    expect(0.98 * six.pace.state().peak!).toBeLessThanOrEqual(six.mean + 1e-9);
    // The rate then waits there for the quiet spell.
    reports(six.pace, 1_030_000, 60, six.mean, 0);
    expect(six.pace.state().rate).toBeLessThanOrEqual(six.mean + 1e-9);
    // Not under 6 a second (the hold and the cut's climb back weigh more there), nor beside a
    // noise floor, nor from a cut of a run before a continue-as-new (its count began later).
    const five = between(5.5);
    expect(0.98 * five.pace.state().peak!).toBeGreaterThan(five.mean + 0.05);
    // A run continued as new 3 s after the cut counts the calls of its own 13 s only: read over
    // the 16 s since the cut, they would set the plateau at 0.75 of what the API accepted.
    const carried = new FleetPace({ ...between(8).pace.state(), pressedMs: 2_000 });
    let t = 1_024_000;
    for (let s = 0; s < 13; s++, t += 1000) carried.report({ worker: 'a', want: 100, accepted: 7.5, limited: 0 }, t);
    expect(carried.state().rate).toBeGreaterThanOrEqual(6);
    carried.overshoot(t + 1000, t);
    expect(0.98 * carried.state().peak!).toBeGreaterThan(6);
    // Nor where the fleet sent under 0.8 of its rate: that counts what a worker left unused.
    const unused = between(6.5, {}, (s) => (s < 10 ? 0.5 : 1));
    expect(unused.pace.state().peak).not.toBeCloseTo(unused.mean / 0.98, 3);
    const noisy = between(6.5, { fresh: { answers: 100, limited: 10 }, found: true });
    expect(noisy.pace.noiseFloor().share).toBeGreaterThan(0);
    expect(0.98 * noisy.pace.state().peak!).toBeGreaterThan(noisy.mean + 0.05);
  });

  it("a small account's growth past its last overshoot is cut to under what the API accepted, once", () => {
    // The quiet spell grows the rate by a tenth a second, to 1.6 times an account of 2 a second
    // before its first 429; cut by a tenth at each overshoot it met the limit five times more.
    const pace = new FleetPace({ rate: 2.1, slowStart: false, peak: 2.05, lastCutAt: 1_000_000 - 200_000, pressedMs: 200_000 });
    const t = reports(pace, 1_000_000, 5, 2.05, 0);
    expect(pace.state().rate).toBeGreaterThan(3);
    pace.overshoot(t + 1000, t);
    expect(pace.state().rate).toBeLessThanOrEqual(0.9 * 2.05 + 1e-9);
    // A rate a few percent over the limit, which the API accepted 0.92 of, shows the limit too.
    const over = new FleetPace({ rate: 5.3, slowStart: false, lastCutAt: 1_000_000 });
    const v = reports(over, 1_000_000, 3, 4.9, 0);
    over.overshoot(v + 1000, v);
    expect(over.state().peak).toBeCloseTo(4.9, 5);
    // An overshoot at a rate the API accepted far less of (429s no pace causes hold the account)
    // sets no plateau: the rate probes on, as before.
    const noisy = new FleetPace({ rate: 3, slowStart: false });
    const u = reports(noisy, 1_000_000, 3, 2, 0.3);
    noisy.overshoot(u + 1000, u);
    reports(noisy, u + 1000, 60, 2, 0.3);
    expect(noisy.state().rate).toBeGreaterThan(0.9 * 3 + 0.2);
  });

  it('four workers on an account of 2 a second: wants that swing with a call waiting or not leave none of the rate to nobody', () => {
    // A worker with one loop wants 0.33 or 1.33 a second, as its call waits at its report or
    // not; shares that followed each report moved every second, a share given up was taken only
    // at the others' next reports, and the fleet spent 0.89 of the account (the bench).
    const pace = new FleetPace({ rate: 2, slowStart: false });
    const granted = new Map<string, number>();
    const sums: number[] = [];
    for (let s = 0; s < 40; s++) {
      for (const [w, want] of [
        ['a', 2.7],
        ['b', 2.7],
        ['c', s % 3 === 0 ? 0.33 : 1.33],
        ['d', s % 3 === 1 ? 0.33 : 1.33],
      ] as const) {
        const grant = pace.report({ worker: w, want, accepted: granted.get(w) ?? 0, maxRate: 2 }, 1_000_000 + s * 1000 + w.charCodeAt(0));
        granted.set(w, grant.rate);
      }
      if (s >= 10) sums.push([...granted.values()].reduce((n, r) => n + r, 0));
    }
    expect(Math.min(...sums)).toBeGreaterThanOrEqual(0.97 * 2);
  });

  it("a continue-as-new keeps every worker's share and the grid: the next run's first report does not get the whole rate", () => {
    // Each run started with no lease: its first reporter got the whole rate (and sent it, beside
    // the others' shares of the run before), the others none until their next reports, on a grid
    // of its own. Four workers on an account of 5 a second (the accounts bench): a 429, a hold
    // and a second of next to nothing at every continue-as-new.
    let pace = new FleetPace({ rate: 5, slowStart: false });
    const workers = ['a', 'b', 'c', 'd'];
    let t = 1_000_000;
    const shares = new Map<string, number>();
    let grid: PaceGrant['grid'];
    for (let s = 0; s < 10; s++) {
      for (const [i, w] of workers.entries()) {
        const grant = pace.report({ worker: w, want: 8, accepted: shares.get(w) ?? 0, maxRate: 5 }, t + s * 1000 + i * 200);
        shares.set(w, grant.rate);
        grid = grant.grid;
      }
    }
    t += 10_000;
    expect([...shares.values()].map((r) => r.toFixed(2))).toEqual(['1.25', '1.25', '1.25', '1.25']);
    pace = new FleetPace(JSON.parse(JSON.stringify(pace.state())) as FleetPaceState);
    for (const [i, w] of workers.entries()) {
      const grant = pace.report({ worker: w, want: 8, accepted: 1.25, maxRate: 5 }, t + i * 200);
      expect(grant.rate).toBeCloseTo(1.25, 2);
      expect(grant.grid).toEqual(grid);
    }
  });

  it("slow start ends on every worker's last report when the account workflow's task waited past their leases", () => {
    // The holds of a task that waited 3 s run before the reports queued behind them: the leases
    // had run out by the workflow's clock, and slow start ended on the one report left.
    const pace = new FleetPace({ rate: 38, slowStart: true });
    const t = 1_000_000;
    for (const [w, at] of [
      ['a', 0],
      ['b', 0],
      ['c', 0],
      ['d', 1500],
    ] as const) {
      pace.report({ worker: w, want: 10, accepted: 5 }, t + at);
    }
    pace.overshoot(t + 3900 + 1000, t + 3900);
    expect(pace.state().slowStart).toBe(false);
    expect(pace.state().rate).toBeCloseTo(0.9 * 20, 5);
  });

  it("slow start's end on counts under half the step before is read again from the reports of the next lease; counts over it are not", () => {
    // One caller on each worker but a busy one, an account of 5 a second: the busy worker's first
    // grant came late, its report counted 1 accepted a second while the API accepted 9, and slow
    // start ended at 2.25, then settled 2 % a second for 40 s (0.86-0.88 of the limit).
    // (Each first report grows the rate half again: the overshoot meets 11.25.)
    const stale = new FleetPace({ rate: 7.5, slowStart: true });
    let t = 1_000_000;
    stale.report({ worker: 'a', want: 100, accepted: 2.5 }, t);
    stale.overshoot(t + 1500, t + 500);
    expect(stale.state()).toMatchObject({ slowStart: false, settling: true });
    expect(stale.state().rate).toBeCloseTo(2.25, 5);
    // The next report counts the seconds before the hold: the end is read again from it.
    stale.report({ worker: 'a', want: 100, accepted: 4.67 }, (t += 1500));
    expect(stale.state().rate).toBeGreaterThanOrEqual(0.9 * 4.67);
    expect(stale.state().rate).toBeLessThan(0.9 * 4.67 * 1.03);
    // Not past a lease from the end: the rate settles on from where it stands.
    const settled = stale.state().rate;
    stale.report({ worker: 'a', want: 100, accepted: 8 }, t + 3000);
    expect(stale.state().rate).toBeLessThan(settled * 1.03);

    // Counts over half the step before (a ramp at 8 a second: 7.33 at a rate of 16.9) end it for
    // good: the next reports hold the limit's burst, and read again they set the rate over the limit.
    const ramp = new FleetPace({ rate: 11.25, slowStart: true });
    t = 1_000_000;
    ramp.report({ worker: 'a', want: 100, accepted: 7.33 }, t);
    ramp.overshoot(t + 1500, t + 500);
    expect(ramp.state().rate).toBeCloseTo(0.9 * 7.33, 5);
    ramp.report({ worker: 'a', want: 100, accepted: 9.33 }, t + 1500);
    expect(ramp.state().rate).toBeLessThan(0.9 * 7.33 * 1.03);
  });

  it("a hold is carried over a continue-as-new: a small account's quiet spell counts from its end in the next run too", () => {
    const t = 1_000_000;
    const pace = new FleetPace({ rate: 2, slowStart: false, lastCutAt: t });
    // 100 s after the last cut, the API holds the account for 30 s (a long hold: no cut).
    pace.overshoot(t + 130_000, t + 100_000);
    // The next run, as workflows/account.ts starts it: the carried pace and the workflow's hold.
    const next = new FleetPace(JSON.parse(JSON.stringify(pace.state())) as FleetPaceState, t + 130_000);
    let rate = 0;
    for (let s = 1; s <= 5; s++) rate = next.report({ worker: 'a', want: 10, accepted: 2 }, t + 130_000 + s * 1000).accountRate;
    // A probe's growth, not the quiet spell's tenth a second (2 × 1.1⁵ = 3.2).
    expect(rate).toBeLessThan(2.1);
  });

  it('the quiet spell counts only the seconds calls waited for the rate: a fleet back from an idle minute probes, and grows a tenth a second a minute later', () => {
    // Counted from the last cut, a minute idle beside a rate the limit refused was a quiet spell:
    // the rate-limit bench's second batch grew 27 to 36 a second on an account of 20, its 429s
    // hidden in a noise floor of 0.12, 15-29 % of its calls refused by the limit.
    const t = 1_000_000;
    const pace = new FleetPace({ rate: 20, slowStart: false, lastCutAt: t });
    let rate = 0;
    // Ten seconds of calls waiting, then 80 s with fewer wanted than the rate, then calls wait again.
    for (let s = 1; s <= 10; s++) rate = pace.report({ worker: 'a', want: 40, accepted: 20 }, t + s * 1000).accountRate;
    for (let s = 11; s <= 90; s++) pace.report({ worker: 'a', want: 0.5, accepted: 0.5 }, t + s * 1000);
    const back = rate;
    for (let s = 91; s <= 96; s++) rate = pace.report({ worker: 'a', want: 40, accepted: 20 }, t + s * 1000).accountRate;
    // A probe's growth (under a percent a second), not the quiet spell's tenth (20 × 1.1⁶ = 35).
    expect(rate).toBeLessThan(1.05 * back);
    // A minute of calls waiting since the cut (10 s before the idle spell, 50 s after): quiet.
    for (let s = 97; s <= 130; s++) rate = pace.report({ worker: 'a', want: 400, accepted: 20 }, t + s * 1000).accountRate;
    const probing = rate;
    for (let s = 131; s <= 150; s++) rate = pace.report({ worker: 'a', want: 400, accepted: 20 }, t + s * 1000).accountRate;
    expect(rate).toBeGreaterThan(1.5 * probing);
    // A hold starts the count anew: the next growth is the probe's.
    pace.overshoot(t + 152_000, t + 151_000);
    const cut = pace.state().rate;
    for (let s = 153; s <= 160; s++) rate = pace.report({ worker: 'a', want: 400, accepted: 0.9 * cut }, t + s * 1000).accountRate;
    expect(rate).toBeLessThan(1.05 * cut);
  });

  it("a quiet spell's overshoot whose counts read under a rate the fleet held 20 s does not set the plateau under that rate", () => {
    // The accounts bench (two workers, a2, with a tried change that let its quiet spell come
    // there): 1.96 held for 200 s with no 429; the quiet spell met the limit at 2.6, the last
    // reports' counts read 1.67 (5 calls in 3 s), and the plateau held the account at 1.63 for
    // the rest of the run.
    const t = 1_000_000;
    const pace = new FleetPace({ rate: 1.9, slowStart: false, peak: 2, lastCutAt: t });
    let s = 1;
    for (; s <= 92; s++) pace.report({ worker: 'a', want: 10, accepted: 1.96 }, t + s * 1000);
    expect(pace.state().rate).toBeGreaterThan(1.1 * 1.96);
    pace.report({ worker: 'a', want: 10, accepted: 5 / 3 }, t + s * 1000);
    pace.overshoot(t + (s + 1) * 1000, t + s * 1000);
    for (s += 2; s <= 110; s++) pace.report({ worker: 'a', want: 10, accepted: 1.7 }, t + s * 1000);
    expect(pace.state().rate).toBeCloseTo(1.96, 5);
  });

  it("no quiet spell beside more 429s than a known floor explains: they are the limit's, which no worker relays", () => {
    // A floor of 0.02 left by noise that stopped; a 429 a second of 6 answers is the limit's,
    // within the floor's margin for the workers. The quiet spell grew through them a tenth a
    // second to twice an account of 5 a second (simulated).
    const quiet = (limited: number) => {
      const pace = new FleetPace({ rate: 5, slowStart: false, pressedMs: 100_000, noise: { answers: 300, limited: 6 } });
      let rate = 0;
      for (let s = 0; s < 5; s++) rate = pace.report({ worker: 'a', want: 8, accepted: 5, limited }, 1_000_000 + s * 1000).accountRate;
      return rate;
    };
    expect(quiet(1)).toBeLessThan(5 * 1.05);
    // Without them it is the quiet spell's tenth a second.
    expect(quiet(0)).toBeGreaterThan(5 * 1.3);
  });

  it("a worker's share goes by its need (a waiting call counted once); a report of an older build, without one, by its want", () => {
    const grants = (lone: { want: number; need?: number }) => {
      const pace = new FleetPace({ rate: 4, slowStart: false });
      const shares = { lone: 0, busy: 0, rate: 0 };
      // Reports a few times round: a share shrinks at its worker's report before the other's grows.
      for (let t = 1_000_000; t < 1_000_300; t += 100) {
        shares.busy = pace.report({ worker: 'busy', want: 10, need: 4, accepted: 2 }, t).rate;
        const grant = pace.report({ worker: 'lone', ...lone, accepted: 1 }, t + 10);
        shares.lone = grant.rate;
        shares.rate = grant.accountRate;
      }
      return shares;
    };
    // One call a second sent and one waiting at the report: a need of 4/3, a want of 2; the busy worker has the rest.
    const needs = grants({ want: 2, need: 4 / 3 });
    expect(needs.lone).toBeCloseTo(4 / 3, 5);
    expect(needs.busy).toBeCloseTo(needs.rate - 4 / 3, 5);
    // What the needs leave goes to the worker whose calls wait, not half of it to one whose do not:
    // spread evenly, a worker's share over what it sends let the limit's 429s count as fresh
    // answers, and a charging limiter's were learned as noise (4 workers, 6 and 10 a second: 3 of 96 runs).
    const spare = new FleetPace({ rate: 4, slowStart: false });
    let busy = 0;
    let lone = 0;
    for (let t = 1_000_000; t < 1_000_300; t += 100) {
      busy = spare.report({ worker: 'busy', want: 3, need: 2, accepted: 2 }, t).rate;
      lone = spare.report({ worker: 'lone', want: 1, need: 1, accepted: 1 }, t + 10).rate;
    }
    expect(lone).toBeCloseTo(1, 5);
    expect(busy).toBeCloseTo(3, 5);
    const older = grants({ want: 2 });
    expect(older.lone).toBeCloseTo(2, 5);
    expect(older.busy).toBeCloseTo(older.rate - 2, 5);
    // A need that is no number is an older build's: the share goes by the want, not by none.
    const malformed = grants({ want: 2, need: 'x' as unknown as number });
    expect(malformed.lone).toBeCloseTo(2, 5);
  });

  it('a carried lease that is not one is left out, and at most a thousand are carried', () => {
    const lease = { want: 1, demand: 1, accepted: 1, limited: 0, rate: 1, until: 2_000_000, since: 1_000_000 };
    const pace = new FleetPace({
      rate: 5,
      slowStart: false,
      leases: [
        { worker: 'ok', ...lease, maxRate: 4 },
        { worker: 'needs', ...lease, need: 0.5 },
        { worker: '', ...lease },
        { worker: 'x'.repeat(201), ...lease },
        { worker: 'no-until', ...lease, until: Number.NaN },
        null as unknown as CarriedLease,
        { worker: 'wild', ...lease, rate: -3, want: Number.POSITIVE_INFINITY },
        ...Array.from({ length: 2000 }, (_, i) => ({ worker: `w${i}`, ...lease })),
      ],
      grid: { rate: Number.NaN, origin: 0 },
    });
    const carried = pace.state().leases!;
    // The first thousand entries, less the four that are not leases.
    expect(carried).toHaveLength(996);
    // A lease an older build carried has no need: its share went by its want.
    expect(carried[0]).toEqual({ worker: 'ok', ...lease, need: 1, maxRate: 4 });
    expect(carried[1]).toEqual({ worker: 'needs', ...lease, need: 0.5 });
    expect(carried[2]).toMatchObject({ worker: 'wild', rate: 0, want: 0, need: 0 });
    expect(carried[2]!.maxRate).toBeUndefined();
    expect(pace.state().grid).toEqual({ rate: 0, origin: 0 });
  });

  /**
   * One worker at a limit of `limit` a second, `noise` of the calls the limit let through refused
   * too: each second it sends the mean of its last three shares, takes every 429 within the fleet's
   * floor as noise (none is relayed), and reports its answers. Returns the floor and share each second.
   */
  function atLimit(pace: FleetPace, o: { limit: number; noise?: number; seconds: number; share: number }) {
    const { limit, noise = 0, seconds } = o;
    const granted: number[] = [];
    const floors: number[] = [];
    const rates: number[] = [];
    let share = o.share;
    for (let s = 0; s < seconds; s++) {
      granted.push(share);
      const last = granted.slice(-3);
      const sent = last.reduce((n, g) => n + g, 0) / last.length;
      const through = Math.min(sent, limit);
      const grant = pace.report(
        { worker: 'a', want: 100, accepted: through * (1 - noise), limited: sent - through + through * noise },
        1_000_000 + s * 1000,
      );
      share = grant.rate;
      floors.push(grant.noise?.share ?? 0);
      rates.push(grant.rate);
    }
    return { floors, rates };
  }

  /** Beside a limit of 40 a second, with a floor (a pool of 300 answers, 10 % 429s) learned while the rate was low. */
  function besideLimit(noise: number, seconds: number): { floors: number[]; rates: number[] } {
    const pace = new FleetPace({ rate: 50, slowStart: false, noise: { answers: 300, limited: 30 }, all: { answers: 300, limited: 30 } });
    return atLimit(pace, { limit: 40, noise, seconds, share: 50 });
  }

  it('a floor learned at a low rate is checked beside the limit: forgotten when the noise stopped, kept while it lasts', () => {
    // The workers take the limit's 429s within the floor as noise: before the check the fleet
    // never saw answers under the limit again, and a floor of 0.15-0.2 hid 3-45 % 429s for good.
    const stopped = besideLimit(0, 180);
    expect(stopped.floors[0]).toBeCloseTo(0.1, 2);
    expect(stopped.floors.slice(120)).toEqual(new Array(60).fill(0));
    // The check holds the share under what the API accepts now (under the limit) a while.
    expect(Math.min(...stopped.rates.slice(0, 60))).toBeLessThan(40);

    const lasting = besideLimit(0.1, 300);
    expect(lasting.floors.every((f) => f > 0.09)).toBe(true);
  });

  it("a floor from a few fresh answers gives way to the pool's lower share, and to none when the pool holds only strays", () => {
    // 2 fresh 429s of 22, taken while the noise lasted, stayed the floor (0.091) beside 0.3 429s
    // in 105 answers of its checks: an account of 5 a second hid its limit's 429s in its margin.
    const lower = new FleetPace({ rate: 5, slowStart: false, fresh: { answers: 22, limited: 2 }, noise: { answers: 105, limited: 0.3 } });
    expect(lower.noiseFloor().share).toBeCloseTo(2.3 / 127, 4);
    expect(lower.noiseFloor().answers).toBeCloseTo(127, 6);
    const strays = new FleetPace({ rate: 5, slowStart: false, fresh: { answers: 22, limited: 2 }, noise: { answers: 105, limited: 0 } });
    expect(strays.noiseFloor()).toEqual({ share: 0, answers: 0 });
    // Fresh answers alone, or a pool that shows as much noise, keep their floor (young: less the 429 that made it one).
    expect(new FleetPace({ fresh: { answers: 22, limited: 2 } }).noiseFloor()).toEqual({ share: 1 / 22, answers: 22 });
    expect(new FleetPace({ fresh: { answers: 22, limited: 2 }, noise: { answers: 10, limited: 1 } }).noiseFloor().share).toBeCloseTo(
      2 / 32,
      6,
    );
  });

  /**
   * 120 s of reports beside a limit whose 429s hide in the floor's margin: `over` while the share
   * is at or over it, `under` while a check holds it below. When the first check came (0: none).
   * `relay`: once no floor is left, the workers relay the limit's 429s (a hold every other second).
   */
  function firstCheck(
    pace: FleetPace,
    o: {
      limit: number;
      want: number;
      over: { accepted: number; limited: number };
      under: { accepted: number; limited: number };
      relay?: boolean;
    },
  ): number {
    let t = 1_000_000;
    let share = pace.state().rate;
    let checkedAt = 0;
    for (let s = 0; s < 120; s++, t += 1000) {
      const checking = share < o.limit;
      const grant = pace.report({ worker: 'a', want: o.want, ...(checking ? o.under : o.over) }, t);
      if (grant.rate < o.limit && !checkedAt) checkedAt = t - 1_000_000;
      share = grant.rate;
      if (o.relay && !checking && checkedAt && pace.noiseFloor().share === 0 && s % 2 === 0) pace.overshoot(t + 1000, t);
    }
    return checkedAt;
  }

  it.each([
    // A young floor is checked 20 s after it was learned, whatever the rate does (YOUNG_CHECK_MS).
    ['young: 3 fresh 429s of 15', { fresh: { answers: 15, limited: 3 } }, 20_000, 25_000],
    // A floor on more answers only once the search stalled 70 s over it (a check costs a tenth of the calls for 7.5 s).
    ['on 150 answers', { noise: { answers: 150, limited: 30 } }, 70_000, 80_000],
  ] as const)('a search that stalls beside a floor (%s) is checked: the limit hidden in its margin is found', (_, pool, from, to) => {
    // Slow start sending all that was asked (want under the rate) never grows to an overshoot,
    // and a floor of 2 in 15 hid the limit's 429s (26-30 %) from it: two workers on accounts of
    // 20 and 40 a second, 29-30 % 429s for 200 s after the noise stopped, and no check (it searched).
    const pace = new FleetPace({ rate: 33, slowStart: true, lastCutAt: 1_000_000, ...pool });
    // A limit of 20 a second: a check holds the share under it, where the noise that stopped refuses nothing.
    const checkedAt = firstCheck(pace, {
      limit: 20,
      want: 29,
      over: { accepted: 20, limited: 7 },
      under: { accepted: 18, limited: 0 },
      relay: true,
    });
    expect(checkedAt).toBeGreaterThanOrEqual(from);
    expect(checkedAt).toBeLessThan(to);
    // Its answers showed the floor too high, and the limit's 429s (over what is left of it, or
    // relayed once none is) cut the rate.
    expect(pace.noiseFloor().share).toBeLessThan(0.05);
    expect(pace.state().rate).toBeLessThan(25);
  });

  it("a young floor too high for the limit's 429s to show over it is checked within half a minute, and learned again", () => {
    // 5 fresh 429s of 13 (10 % noise) and 1 of 7 answers at a low rate: a floor of 0.3 (now at most a quarter). Slow start
    // then stalled at 12 a second beside a limit of 5, a third of the answers 429s, never clearly
    // over the floor's margin: no overshoot, nothing pressed for a check, and the fleet ran at 2.4
    // times the limit to the end of the run (two workers, 240 s, a quarter of the calls the limit's 429s).
    const pace = new FleetPace({
      rate: 12,
      slowStart: true,
      lastCutAt: 1_000_000,
      fresh: { answers: 13, limited: 5 },
      noise: { answers: 7, limited: 1 },
    });
    expect(pace.noiseFloor().share).toBeCloseTo(0.25, 6);
    // Under the limit only the noise refuses (a tenth); over it, a third of the answers are 429s.
    // The fleet sends all that is asked (7.5 a second, under the rate): a check does not wait for more.
    const checkedAt = firstCheck(pace, { limit: 5, want: 7.5, over: { accepted: 5, limited: 2.5 }, under: { accepted: 4, limited: 0.45 } });
    expect(checkedAt).toBeGreaterThan(0);
    expect(checkedAt).toBeLessThan(30_000);
    // The checks' answers are the floor: the noise's tenth, over which the limit's 429s cut the rate.
    expect(pace.noiseFloor().share).toBeLessThan(0.15);
    expect(pace.state().rate).toBeLessThan(8);
  });

  it('while a check holds the shares, neither a search nor a quiet spell grows the rate: its calls are not sent', () => {
    // Slow start grew from 40 to 60 a second on an account of 20 during a check, and a quiet spell
    // to twice an account of 5; when the check ended the fleet sent it all (simulated).
    const during = (state: Partial<FleetPaceState>) => {
      const pace = new FleetPace({ slowStart: false, lastCutAt: 1_000_000, fresh: { answers: 15, limited: 3 }, ...state });
      let t = 1_000_000;
      let share = pace.state().rate;
      // The account's rate at each report of the first check.
      const rates: number[] = [];
      for (let s = 0; s < 40; s++, t += 1000) {
        // Every call sent goes through (the limit far off); a tenth are 429s no pace causes.
        const grant = pace.report({ worker: 'a', want: 100, accepted: 0.9 * share, limited: 0.1 * share }, t);
        share = grant.rate;
        if (grant.rate < 0.95 * grant.accountRate) rates.push(grant.accountRate);
        else if (rates.length > 0) break;
      }
      return rates;
    };
    // A search stands still; the probe goes on (half a percent a second), not the quiet spell's tenth.
    for (const [state, most] of [
      [{ rate: 10, settling: true }, 1.001],
      [{ rate: 10, slowStart: true }, 1.001],
      [{ rate: 10, pressedMs: 100_000 }, 1.06],
    ] as const) {
      const rates = during(state);
      expect(rates.length).toBeGreaterThan(3);
      expect(Math.max(...rates)).toBeLessThanOrEqual(rates[0]! * most);
    }
  });

  it("a search ends on no counts made under a check that just ended: they show the check's rate, not the limit's", () => {
    // After a check held an account of 20 at 13 a second, slow start met the limit at once; its
    // end read the reports' counts, still the check's, and set the rate to 0.9 of 13 (simulated).
    const pace = new FleetPace({ rate: 10, slowStart: false, settling: true, lastCutAt: 1_000_000, fresh: { answers: 15, limited: 3 } });
    let t = 1_000_000;
    let share = pace.state().rate;
    let checked = 0;
    let ended = false;
    for (let s = 0; s < 60 && !ended; s++, t += 1000) {
      const grant = pace.report({ worker: 'a', want: 100, accepted: 0.9 * share, limited: 0.1 * share }, t);
      if (grant.rate < 0.95 * grant.accountRate) checked = checked || share;
      else ended = checked > 0;
      share = grant.rate;
    }
    expect(ended).toBe(true);
    const rate = pace.state().rate;
    // The counts still the check's (0.9 of its share accepted), beside the limit's 429s of the rate back.
    const counts = { worker: 'a', want: 100, accepted: 0.9 * checked, limited: 0.6 * checked };
    for (let s = 0; s < 3; s++, t += 1000) pace.report(counts, t);
    expect(pace.state().rate).toBeGreaterThanOrEqual(rate);
    // Past them, such counts are an overshoot.
    for (let s = 0; s < 4; s++, t += 1000) pace.report(counts, t);
    expect(pace.state().rate).toBeLessThan(rate);
  });

  it("a batch's first seconds after an idle minute start no check from a few 429s, and no check holds a fleet under half the known-good pace", () => {
    // An account of 5 a second beside 10 % noise: 2 429s in the 11 answers of the batch's first
    // 3 s read as more than the floor explains, and a check took its rate from them, 0.9 a second
    // for 30 s (simulated, the idle minute between two batches).
    const idle = () => {
      const pace = new FleetPace({ rate: 6.5, slowStart: false, lastCutAt: 1_000_000, fresh: { answers: 15, limited: 3 } });
      let t = 1_000_000;
      for (let s = 0; s < 5; s++, t += 1000) pace.report({ worker: 'a', want: 10, accepted: 5.5, limited: 0.6 }, t);
      // The idle minute: no call, no report.
      return { pace, t: t + 60_000 };
    };
    const { pace, t } = idle();
    for (let s = 0; s < 5; s++) {
      const grant = pace.report({ worker: 'a', want: 7, accepted: 1, limited: 0.67 }, t + s * 1000);
      expect(grant.rate).toBeCloseTo(grant.accountRate, 6);
    }
    // A check of a fleet sending little (all it wants) holds it no lower than half the best it was accepted.
    const quiet = idle();
    let lowest = Number.POSITIVE_INFINITY;
    for (let s = 0; s < 10; s++)
      lowest = Math.min(lowest, quiet.pace.report({ worker: 'a', want: 1, accepted: 1, limited: 0 }, quiet.t + s * 1000).rate);
    expect(lowest).toBeGreaterThanOrEqual(0.5 * 5.5 - 1e-9);
  });

  it("a check's rate is told by what the API accepts at the rate, not under the check before it", () => {
    // What the API accepted of a small account with calls waiting, 1.5-2.3 a second under a rate
    // of 3.8 (the noise's Retry-After), set a check at 2.1; the next began as it ended, at 0.9 of
    // what that one let through, and the next under that: 2.1, 1.5, 1.2 a second, for 150 s. (A
    // fleet sending so far under its rate is no longer checked at all; here it sends its share.)
    const pace = new FleetPace({ rate: 4, slowStart: false, lastCutAt: 1_000_000, fresh: { answers: 19, limited: 3 } });
    let t = 1_000_000;
    let share = 4;
    const held: number[] = [];
    let run = 0;
    let longest = 0;
    for (let s = 0; s < 180; s++, t += 1000) {
      // The API accepts 0.9 of what the share lets through; a tenth are 429s (under the floor).
      const grant = pace.report({ worker: 'a', want: 6, accepted: 0.9 * share, limited: 0.1 * share }, t);
      share = grant.rate;
      if (share < 0.9 * 4) held.push(share);
      run = share < 0.9 * 4 ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    expect(held.length).toBeGreaterThan(0);
    // Every check holds at 0.9 of what the API accepts at the rate: 0.9 x 0.9 x 4.
    expect(Math.min(...held)).toBeGreaterThan(0.9 * 0.9 * 4 * 0.95);
    // None lasts longer than the 30 s between them (70 answers at 2.2 a second would be 37 s).
    expect(longest).toBeLessThanOrEqual(30);
  });

  it("a low floor the checks' answers cannot show clearly too high is learned again from a hundred of them", () => {
    // 0.02 is clearly too high only after 400 answers with no 429 (eight checks at 20 a second):
    // the noise's answers stayed in the pools, and one worker on an account of 20 a second kept a
    // floor of 0.011-0.03 for 180 s after the noise stopped, with the limit's 429s in its margin (2.3 %).
    const pace = new FleetPace({
      rate: 20,
      slowStart: false,
      lastCutAt: 1_000_000,
      noise: { answers: 300, limited: 6 },
      all: { answers: 300, limited: 6 },
    });
    // The noise stopped; a limit of 19.5 a second refuses what the share sends over it.
    const { floors } = atLimit(pace, { limit: 19.5, seconds: 60, share: 20 });
    expect(floors[0]).toBeCloseTo(0.02, 3);
    // Two checks' answers (about 110, no 429 among them) are the floor: none.
    expect(floors.slice(45)).toEqual(new Array(15).fill(0));
  });
});
