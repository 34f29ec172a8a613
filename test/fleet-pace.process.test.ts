/**
 * The account's one rate for the fleet (the default), through two real worker processes (`npm
 * run worker`) on a real Temporal dev server and the fake API over loopback: the fleet spends a
 * token bucket's limit it is not told, follows one that falls, and
 * `SHIPPING_API_MAX_REQUESTS_PER_SECOND` is the account's ceiling, fleet-wide, not each worker's.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import type { FakeRequest } from '../fake-shipping-api/types';
import { stateQuery } from '../workflow-definitions/shipment';
import { TEST_CREDENTIALS } from './helpers/harness';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { killWorkerProcesses, startWorkerProcess, workerEnv } from './helpers/worker-process';
import { waitFor } from './helpers/wait';

let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;

beforeAll(async () => {
  env = await createTestEnv();
  fake = await startFakeShippingApi({ port: 0, trackingStepMs: 600_000, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
});
afterAll(async () => {
  killWorkerProcesses();
  await fake?.close();
  await env?.teardown();
});

/** Two worker processes of one fleet, `shipments` new orders at once, until all are in tracking (and `pollingMs` more): the fake's log of that run. */
async function burst(shipments: number, extraEnv: Record<string, string>, pollingMs = 0, outputs: string[] = []): Promise<FakeRequest[]> {
  const taskQueue = `fleet-pace-${randomUUID()}`;
  const env2 = {
    ...workerEnv(env.address, taskQueue, fake.baseUrl),
    TRACKING_POLL_INTERVAL: '60s',
    LOG_LEVEL: 'info',
    // Nothing about the pace set: one rate per account for the fleet is the default.
    ...extraEnv,
  };
  const workers = await Promise.all([startWorkerProcess(env2, 'RUNNING'), startWorkerProcess(env2, 'RUNNING')]);
  try {
    const since = Date.now();
    const handles = await Promise.all(
      Array.from({ length: shipments }, async (_, i) => {
        const started = await startShipment(env.client, taskQueue, order('acme', `F-${i}-${since}`));
        return env.client.workflow.getHandle(started.workflowId);
      }),
    );
    await waitFor(
      async () => {
        const states = await Promise.all(handles.map((h) => h.query(stateQuery)));
        return states.every((s) => s.phase === 'tracking') ? true : undefined;
      },
      { timeoutMs: 150_000, intervalMs: 500, what: 'every shipment in tracking' },
    );
    await new Promise((r) => setTimeout(r, pollingMs));
    return fake.requestLog().filter((r) => r.receivedAt >= since && r.endpoint !== 'GET /couriers');
  } finally {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    outputs.push(...workers.map((w) => w.output()));
  }
}

/**
 * Accepted calls a second over the whole seconds from the first call's + `skipS` to the last, the
 * best five seconds' rate in that span, and the 429s' share of all answers.
 */
function spent(log: FakeRequest[], skipS: number): { perSecond: number; best5s: number; share429: number } {
  const first = Math.min(...log.map((r) => r.at)) + skipS * 1000;
  const last = Math.max(...log.map((r) => r.at));
  const window = log.filter((r) => r.at >= first && r.at < last);
  const accepted = window.filter((r) => r.status !== 429);
  const perWholeSecond = new Array<number>(Math.max(1, Math.floor((last - first) / 1000))).fill(0);
  for (const r of accepted) {
    const i = Math.floor((r.at - first) / 1000);
    if (i < perWholeSecond.length) perWholeSecond[i] = (perWholeSecond[i] ?? 0) + 1;
  }
  let best5s = 0;
  for (let i = 0; i + 5 <= perWholeSecond.length; i++) {
    best5s = Math.max(best5s, perWholeSecond.slice(i, i + 5).reduce((a, b) => a + b, 0) / 5);
  }
  const result = {
    perSecond: accepted.length / ((last - first) / 1000),
    best5s,
    share429: window.filter((r) => r.status === 429).length / Math.max(1, window.length),
  };
  // Each second's count too: a failed run then tells a pace held low from a machine that stalled.
  console.info('fleet-pace measured', result, {
    calls: window.length,
    seconds: (last - first) / 1000,
    perWholeSecond: perWholeSecond.join(' '),
  });
  return result;
}

it('two worker processes spend an account limited to 8 calls a second as one, with few 429s, told nothing of the limit', async () => {
  fake.setFaults({ rateLimit: { perSecond: 8, burst: 8 } });
  try {
    const log = await burst(60, {});
    // Slow start from 5 a second for the whole fleet takes a few seconds; measured after it.
    const { perSecond, best5s, share429 } = spent(log, 5);
    // Never well over the limit, and the limit reached by the two as one: the best five seconds
    // near it (a worker stuck at half its share makes 4 a second, a pace that never leaves slow
    // start 5), and a loose floor over the whole run, since a loaded machine slows the workers
    // themselves (a clean CI run measured 0.68 of the limit while other tests ran beside it, and
    // another a best five seconds of 6.4; alone 8.2-9; how close to the limit is the bench's to
    // say: npm run bench:pacing).
    expect(share429).toBeLessThanOrEqual(0.05);
    expect(best5s).toBeGreaterThanOrEqual(0.75 * 8);
    expect(perSecond).toBeGreaterThanOrEqual(0.55 * 8);
  } finally {
    fake.setFaults({ rateLimit: null });
  }
}, 240_000);

it("SHIPPING_API_MAX_REQUESTS_PER_SECOND is the account's ceiling: two workers set to 4 send about 4 a second between them", async () => {
  const log = await burst(40, { SHIPPING_API_MAX_REQUESTS_PER_SECOND: '4' });
  const { perSecond } = spent(log, 3);
  // Each worker capped at 4 sent up to 8 a second between them.
  expect(perSecond).toBeLessThanOrEqual(4 * 1.15);
  expect(perSecond).toBeGreaterThanOrEqual(4 * 0.7);
}, 240_000);

it('an account of 5 a second shared by two workers, polls due beyond it: the limit spent, none of its 429s taken for noise', async () => {
  // Each worker finding its own pace (the default before 1.1), an independent check saw both
  // workers log "429s no pace causes" in 2 of 4 runs on such an account, and 25 % of its calls
  // 429 (here each worker's own pace passed too: 4.85 a second, 0.6 % 429s, against the fleet's
  // 4.07-4.35 and 0-1.3 %). Nothing about the pace or the noise is set here.
  fake.setFaults({ rateLimit: { perSecond: 5, burst: 5 } });
  try {
    const outputs: string[] = [];
    // 20 shipments polling every second: four times the limit.
    const log = await burst(20, { TRACKING_POLL_INTERVAL: '1s' }, 30_000, outputs);
    // From 10 s in (the labels and order reads take 8 s of the limit, after slow start).
    const { perSecond, best5s, share429 } = spent(log, 10);
    expect(outputs.filter((o) => o.includes('429s no pace causes'))).toEqual([]);
    expect(share429).toBeLessThanOrEqual(0.05);
    // As above: the limit reached at its best five seconds (a pace held low by 429s taken for
    // noise stays under 4), and a loose floor over the whole run, since a loaded machine slows the
    // workers themselves (alone here 4.16-4.36 a second; one clean CI run measured 2.92 while
    // other tests ran beside it).
    expect(best5s).toBeGreaterThanOrEqual(0.8 * 5);
    expect(perSecond).toBeGreaterThanOrEqual(0.5 * 5);
  } finally {
    fake.setFaults({ rateLimit: null });
  }
}, 240_000);

it('a limit that falls from 10 calls a second to 5 under two workers, polls due beyond it: followed, and a floor learned from its 429s forgotten within seconds', async () => {
  // A limit that falls refuses the calls right after the first holds, which go at what the API
  // accepted before, and those 429s were learned as noise: here a floor of 0.03 the workers kept
  // 22-36 s or to the end (the build before; 4-6 s now), in the simulation half the calls
  // refused for a minute (bench pacing, a limit that falls). It is forgotten at the first
  // overshoot of the search it restarted (FleetNoiseFloor.refuted).
  fake.setFaults({ rateLimit: { perSecond: 10, burst: 10, refusedTakesToken: true } });
  const fall = setTimeout(() => fake.setFaults({ rateLimit: { perSecond: 5, burst: 5, refusedTakesToken: true } }), 20_000);
  try {
    const outputs: string[] = [];
    // 24 shipments polling every second: over twice the limit before the fall, nearly five times after.
    const log = await burst(24, { TRACKING_POLL_INTERVAL: '1s' }, 45_000, outputs);
    const end = Math.max(...log.map((r) => r.at));
    // The last 20 s, some 20 s after the fall.
    const { perSecond, share429 } = spent(
      log.filter((r) => r.at >= end - 20_000),
      0,
    );
    expect(share429).toBeLessThanOrEqual(0.05);
    // Loose: not stuck near nothing (the simulation's 5 to 3 a second, the build before: 0.55 of
    // the limit). After the fall the fleet waits at a small account's plateau read over the
    // charging limiter's refusals, 2.5-3.8 a second here alone on the machine (the build before
    // 2.2-2.9), for its 90 s quiet spell (docs/retries-and-pacing.md, what it still gets wrong).
    expect(perSecond).toBeGreaterThanOrEqual(0.25 * 5);
    for (const output of outputs) {
      const noise = output
        .split('\n')
        .filter((l) => l.includes('429s no pace causes'))
        .map((l) => JSON.parse(l) as { time: number; msg: string });
      console.info(
        'floors learned and forgotten',
        noise.map((n) => `${n.msg} at ${n.time}`),
      );
      for (let i = 0; i < noise.length; i += 2) {
        expect(noise[i]!.msg).toBe('shipping API: 429s no pace causes');
        expect(noise[i + 1]?.msg, 'a floor kept to the end').toBe('shipping API: 429s no pace causes have stopped');
        expect(noise[i + 1]!.time - noise[i]!.time).toBeLessThanOrEqual(15_000);
      }
    }
  } finally {
    clearTimeout(fall);
    fake.setFaults({ rateLimit: null });
  }
}, 300_000);
