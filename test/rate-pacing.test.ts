/**
 * Account-wide pacing on a real Temporal dev server with the fake API over loopback: a 429's
 * Retry-After holds every call of the account on every worker (relayed through the account's
 * workflow, and still known to a worker started after the 429), and label creation goes before
 * tracking polls when the pace is short.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import type { PacingSettings } from '../config/settings';
import { createShipmentWorker } from '../worker/create-worker';
import { accountWorkflowId, fleetRateLimits, type FleetRateLimits } from '../pacing/fleet-rate-limit';
import { stateQuery } from '../workflow-definitions/shipment';
import { shipmentWorkflowId } from '../domain/shipment';
import { TEST_CREDENTIALS } from './helpers/harness';
import { order } from './helpers/orders';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';
import { killWorkerProcesses, startWorkerProcess, workerEnv } from './helpers/worker-process';
import { waitFor } from './helpers/wait';

let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;
const running: Array<{ worker: Worker; done: Promise<void>; fleet?: FleetRateLimits }> = [];

beforeAll(async () => {
  env = await createTestEnv();
  fake = await startFakeShippingApi({ port: 0, trackingStepMs: 600_000, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
});
afterEach(async () => {
  for (const w of running.splice(0)) await stop(w);
});
afterAll(async () => {
  await fake?.close();
  await env?.teardown();
});

const silentLog = { warn: () => undefined, info: () => undefined, debug: () => undefined };

/** The times the worker process logged "account held by the fleet" (pino's `time`). */
function processHeldAt(output: string): number[] {
  return output
    .split('\n')
    .filter((line) => line.includes('"msg":"account held by the fleet"'))
    .map((line) => Number(/"time":(\d+)/.exec(line)?.[1]));
}
afterAll(() => killWorkerProcesses());

/** The real worker process (`npm run worker`): the fleet's other member, with its own pacer. */
function startWorkerProcessFor(taskQueue: string) {
  return startWorkerProcess(
    {
      ...workerEnv(env.address, taskQueue, fake.baseUrl),
      TRACKING_POLL_INTERVAL: '60s',
      LOG_LEVEL: 'info',
    },
    'RUNNING',
  );
}

async function startWorker(taskQueue: string, pacing: PacingSettings, opts: { fleet?: boolean; pollIntervalMs?: number } = {}) {
  const fleet = opts.fleet
    ? fleetRateLimits({
        client: env.client,
        taskQueue,
        workflowId: accountWorkflowId({ name: 'default', baseUrl: fake.baseUrl }, taskQueue),
        log: silentLog,
      })
    : undefined;
  const worker = await createShipmentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    shippingApi: { baseUrl: fake.baseUrl, ...TEST_CREDENTIALS },
    tracking: { pollIntervalMs: opts.pollIntervalMs ?? 60_000, pollIntervalsMs: {} },
    workflowBundle: await getWorkflowBundle(),
    pacing,
    fleet,
  });
  const entry = { worker, done: worker.run(), fleet };
  running.push(entry);
  return entry;
}

async function stop(entry: { worker: Worker; done: Promise<void>; fleet?: FleetRateLimits }) {
  if (entry.worker.getState() === 'RUNNING') entry.worker.shutdown();
  await entry.done.catch(() => undefined);
  await entry.fleet?.close();
}

/** The 429 the fake answered first after `since`, and every request of the account after it. */
function after429(since: number) {
  const log = fake.requestLog().filter((r) => r.at >= since);
  const limited = log.find((r) => r.status === 429);
  if (!limited) throw new Error('no 429 in the request log');
  return { at: limited.at, retryAfterMs: Number(limited.retryAfter) * 1000, later: log.filter((r) => r.at > limited.at) };
}

it("a 429's Retry-After holds every call of the account on both workers of the fleet", async () => {
  const taskQueue = `pacing-fleet-${randomUUID()}`;
  // Two real worker processes: each logs when the hold reaches it, and neither shares the
  // event loop of the fake, whose arrival times are what is checked.
  const workers = await Promise.all([startWorkerProcessFor(taskQueue), startWorkerProcessFor(taskQueue)]);
  try {
    await new Promise((r) => setTimeout(r, 500)); // both workers listening to the account workflow
    const since = Date.now();
    fake.setFaults({ failNext: [{ endpoint: 'POST /labels', status: 429, retryAfter: '3' }] });
    const handles = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const started = await startShipment(env.client, taskQueue, order('acme', `P-${i}-${since}`));
        return env.client.workflow.getHandle(started.workflowId);
      }),
    );
    await waitFor(
      async () => {
        const states = await Promise.all(handles.map((h) => h.query(stateQuery)));
        return states.every((s) => s.phase === 'tracking') ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'every shipment in tracking' },
    );

    const { at, retryAfterMs, later } = after429(since);
    expect(retryAfterMs).toBe(3000);
    // The relay reaches both workers (the one that got the 429 holds at once), in a fraction of
    // a second on a quiet machine; from then on nothing of the account goes out until
    // Retry-After has passed. Calls granted before the hold arrived are not recalled: they may
    // still arrive within 200 ms.
    const relayed = Math.max(...workers.map((w) => processHeldAt(w.output()).find((t) => t >= at) ?? Infinity));
    expect(relayed - at).toBeLessThan(retryAfterMs); // both workers learned of it in time
    const early = later.filter((r) => r.receivedAt >= relayed + 200 && r.receivedAt < at + retryAfterMs);
    expect(early, `429 answered at ${at}, hold logged by both workers by ${relayed}`).toEqual([]);
    expect(later.filter((r) => r.at >= at + retryAfterMs).length).toBeGreaterThan(0);
    // Exactly one label per order despite the wait.
    for (let i = 0; i < 12; i++) expect(fake.labels().filter((l) => l.customerOrderNumber === `P-${i}-${since}`)).toHaveLength(1);
  } finally {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
  }
}, 90_000);

it("a worker process restarted inside the fleet's Retry-After sends nothing before it ends, its courier read at start included", async () => {
  const taskQueue = `pacing-process-restart-${randomUUID()}`;
  const first = await startWorkerProcessFor(taskQueue);
  const since = Date.now();
  fake.setFaults({ failNext: [{ endpoint: 'POST /labels', status: 429, retryAfter: '12' }] });
  await startShipment(env.client, taskQueue, order('acme', `K-${since}`));
  await waitFor(() => (processHeldAt(first.output()).some((t) => t >= since) ? true : undefined), { timeoutMs: 15_000, what: 'the hold' });
  // Killed as the chaos run kills workers: the new process knows only what the account workflow recorded.
  first.child.kill('SIGKILL');
  await first.exited;
  const second = await startWorkerProcessFor(taskQueue);
  try {
    const { at, retryAfterMs } = after429(since);
    await waitFor(() => (fake.requestLog().some((r) => r.endpoint === 'GET /couriers' && r.at > at) ? true : undefined), {
      timeoutMs: 20_000,
      what: "the new worker's courier read",
    });
    const { later } = after429(since);
    expect(later.filter((r) => r.at < at + retryAfterMs)).toEqual([]);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
}, 60_000);

it('a worker started after the 429 learns the hold from the account workflow', async () => {
  const taskQueue = `pacing-restart-${randomUUID()}`;
  const first = await startWorker(taskQueue, { mode: 'adaptive' }, { fleet: true });
  await new Promise((r) => setTimeout(r, 500));
  const since = Date.now();
  fake.setFaults({ failNext: [{ endpoint: 'POST /labels', status: 429, retryAfter: '4' }] });
  const handle = env.client.workflow.getHandle((await startShipment(env.client, taskQueue, order('acme', `R-${since}`))).workflowId);
  await waitFor(() => (fake.requestLog().some((r) => r.at >= since && r.status === 429) ? true : undefined), { timeoutMs: 10_000 });
  // The worker that got the 429 goes away; a fresh one (a new pacer, knowing nothing) takes over.
  await stop(first);
  const second = await startWorker(taskQueue, { mode: 'adaptive' }, { fleet: true });
  const others = await Promise.all(
    Array.from({ length: 4 }, async (_, i) =>
      env.client.workflow.getHandle((await startShipment(env.client, taskQueue, order('acme', `R-${i}-${since}`))).workflowId),
    ),
  );
  await waitFor(async () => ((await handle.query(stateQuery)).phase === 'tracking' ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  await Promise.all(
    others.map((h) =>
      waitFor(async () => ((await h.query(stateQuery)).phase === 'tracking' ? true : undefined), { timeoutMs: 30_000, intervalMs: 200 }),
    ),
  );
  const { at, retryAfterMs, later } = after429(since);
  expect(later.filter((r) => r.at < at + retryAfterMs)).toEqual([]);
  await stop(second);
});

it('labels go before waiting tracking polls when the pace is short, and polls still get their share', async () => {
  const taskQueue = `pacing-labels-${randomUUID()}`;
  // A ceiling of 4 calls a second and 10 shipments polling every 100 ms: polls always wait.
  await startWorker(taskQueue, { mode: 'adaptive', maxRequestsPerSecond: 4 }, { pollIntervalMs: 100 });
  const stamp = Date.now();
  await Promise.all(Array.from({ length: 10 }, (_, i) => startShipment(env.client, taskQueue, order('acme', `W-${i}-${stamp}`))));
  await waitFor(() => (fake.requestLog().filter((r) => r.at >= stamp && r.endpoint === 'GET /tracking').length >= 12 ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: 'the tracking wave',
  });
  const importedAt = Date.now();
  await Promise.all(Array.from({ length: 3 }, (_, i) => startShipment(env.client, taskQueue, order('acme', `N-${i}-${stamp}`))));
  await waitFor(() => (fake.labels().filter((l) => l.customerOrderNumber.startsWith('N-')).length >= 3 ? true : undefined), {
    timeoutMs: 20_000,
    intervalMs: 100,
  });
  const after = await waitFor(
    () => {
      const log = fake.requestLog().filter((r) => r.at >= importedAt);
      return log.length >= 12 ? log : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100, what: '12 calls after the import' },
  );
  const labelPositions = after.map((r, i) => (r.endpoint === 'POST /labels' ? i : -1)).filter((i) => i >= 0);
  // Each new label takes one of the next free slots (the import's workflow task comes first),
  // not a place behind the queue of polls.
  expect(labelPositions).toHaveLength(3);
  expect(Math.max(...labelPositions)).toBeLessThanOrEqual(6);
  // Polls are not starved while labels and order reads wait: at least one slot in four is theirs.
  expect(after.slice(0, 12).filter((r) => r.endpoint === 'GET /tracking').length).toBeGreaterThanOrEqual(2);
});

it('a first attempt that gets no turn within 2 s leaves the workflow task unsent, and the regular activity makes the call', async () => {
  const taskQueue = `pacing-first-${randomUUID()}`;
  // One call a second for 8 new shipments (a label and an order read each): most first attempts
  // cannot get a turn within 2 s.
  await startWorker(taskQueue, { mode: 'adaptive', maxRequestsPerSecond: 1 });
  const stamp = Date.now();
  const ids = Array.from({ length: 8 }, (_, i) => `F-${i}-${stamp}`);
  await Promise.all(ids.map((id) => startShipment(env.client, taskQueue, order('acme', id))));
  const handles = ids.map((id) => env.client.workflow.getHandle(shipmentWorkflowId({ shop: 'acme', orderId: id })));
  await waitFor(
    async () => {
      const phases = await Promise.all(handles.map(async (h) => (await h.query(stateQuery)).phase));
      return phases.every((p) => p === 'tracking') ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'every shipment tracking' },
  );
  // One label request per order, none refused: the API never failed, so every regular activity
  // below was a first attempt handed over unsent.
  const sent = fake.requestLog().filter((r) => r.endpoint === 'POST /labels' && ids.includes(r.customerOrderNumber ?? ''));
  expect(sent.map((r) => r.status)).toEqual(ids.map(() => 201));
  // (How long the tasks took is measured, not asserted here: on a quiet machine the longest was
  // 4.2 s, against 8.0 s with first attempts waiting in the task; see docs/retries-and-pacing.md.)
  let handedOver = 0;
  for (const handle of handles) {
    const events = (await handle.fetchHistory()).events ?? [];
    handedOver += events.filter((e) =>
      ['createLabel', 'readOrder'].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''),
    ).length;
  }
  expect(handedOver).toBeGreaterThan(0);
}, 90_000);
