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
import { FleetPace, REPORT_MS } from '../pacing/fleet-pace';
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

describe('FleetPace on its own (pure)', () => {
  /** One worker reporting `accepted` and `limited` calls a second with plenty waiting, once a second from `at`, for `seconds`. */
  function reports(pace: FleetPace, at: number, seconds: number, accepted: number, limited: number): number {
    for (let s = 0; s < seconds; s++) pace.report({ worker: 'a', want: 100, accepted, limited }, at + s * 1000);
    return at + seconds * 1000;
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
});
