/**
 * Health and metrics of the real worker process (`worker/main.ts`) against a real dev server and
 * the fake API over loopback: /readyz through start-up, polling, draining and a lost server; the SDK's
 * Prometheus endpoint; the project's counters after shipments with a 429 and a label rejection,
 * checked against the fake's own counts. The shop delivery counts go through a real in-process
 * worker running an activity named `deliverShopEvents` that answers like the real one (activities/shop-delivery.ts).
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { shipmentMetricsInterceptor } from '../metrics/activity-interceptor';
import { registry } from '../metrics/counters';
import { WorkerReadiness } from '../metrics/health-server';
import { stateQuery } from '../workflow-definitions/shipment';
import { shipmentWorkflowId, type ShopDeliveryResult } from '../domain/shipment';
import type { ProbeMode } from './fixtures/workflows/shop-delivery-probe';
import { TEST_CREDENTIALS } from './helpers/harness';
import { freePort } from '../dev-server/free-port';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { spawnWorkerProcess, type WorkerProcess, workerEnv } from './helpers/worker-process';

let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;
const workers: HealthWorker[] = [];
const taskQueue = `health-${randomUUID()}`;

beforeAll(async () => {
  env = await createTestEnv();
  fake = await startFakeShippingApi({ port: 0, trackingStepMs: 150, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
});
afterAll(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await fake?.close();
  await env?.teardown();
});

interface Probe {
  status: number;
  body: string;
}

async function get(url: string): Promise<Probe | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined; // not listening (yet, or any more)
  }
}

/** The value of one series of a Prometheus text exposition, matching all its labels exactly. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const seen = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    const same = Object.keys(seen).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => seen[k] === v);
    if (same) return Number(match[3]);
  }
  return undefined;
}

interface HealthWorker extends WorkerProcess {
  healthUrl: string;
  sdkMetricsUrl: string;
}

/**
 * The real worker entry point as its own process, with the health server and the SDK's metrics
 * on free loopback ports. No prebuilt bundle: it bundles its workflows at start (seconds), the
 * window in which it is alive but not ready.
 */
async function startHealthWorker(): Promise<HealthWorker> {
  const healthPort = await freePort();
  const sdkPort = await freePort();
  const started: HealthWorker = {
    ...spawnWorkerProcess({
      ...workerEnv(env.address, taskQueue, fake.baseUrl),
      TRACKING_POLL_INTERVAL: '200ms',
      LOG_LEVEL: 'info',
      WORKER_HEALTH_PORT: String(healthPort),
      WORKER_HEALTH_HOST: '127.0.0.1',
      METRICS_BIND_ADDRESS: `127.0.0.1:${sdkPort}`,
    }),
    healthUrl: `http://127.0.0.1:${healthPort}`,
    sdkMetricsUrl: `http://127.0.0.1:${sdkPort}/metrics`,
  };
  workers.push(started);
  return started;
}

/** Probes /readyz (and /livez) as an orchestrator would, from the process start until ready. */
async function probeUntilReady(w: HealthWorker): Promise<Array<Probe & { live: number | undefined }>> {
  const answers: Array<Probe & { live: number | undefined }> = [];
  await waitFor(
    async () => {
      if (w.child.exitCode !== null) throw new Error(`worker exited:\n${w.output()}`);
      const ready = await get(`${w.healthUrl}/readyz`);
      if (!ready) return undefined;
      answers.push({ ...ready, live: (await get(`${w.healthUrl}/livez`))?.status });
      return ready.status === 200 ? ready : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 25, what: '/readyz 200' },
  );
  return answers;
}

it('readiness follows start-up; the project counters count a 429, a rejection, labels and outcomes', { timeout: 120_000 }, async () => {
  const w = await startHealthWorker();
  const { healthUrl, sdkMetricsUrl } = w;
  const answers = await probeUntilReady(w);
  const notReady = answers.filter((a) => a.status === 503);
  expect(notReady.length).toBeGreaterThan(0); // bundling takes seconds: probes saw it
  expect(notReady.every((a) => a.live === 200)).toBe(true); // alive all along
  expect(JSON.parse(notReady[0]!.body)).toMatchObject({ ready: false, state: 'starting' });
  expect(JSON.parse(answers.at(-1)!.body)).toEqual({ ready: true, state: 'RUNNING', temporal: 'reachable' });
  expect(w.output()).toContain('health and metrics endpoints listening');

  // Before any shipment: the closed label sets read 0.
  const before = (await get(`${healthUrl}/metrics`))!;
  expect(before.status).toBe(200);
  expect(sample(before.body, 'shipping_api_rate_limited_total', { activity: 'createLabel' })).toBe(0);
  expect(sample(before.body, 'shipping_api_answers_total', { account: 'default', answer: 'rate_limited' })).toBe(0);
  expect(sample(before.body, 'shipping_api_pace_alone', { account: 'default' })).toBe(0);
  expect(sample(before.body, 'shop_deliveries_total', { shop: 'other', result: 'delivered' })).toBe(0);
  expect(sample(before.body, 'shipping_labels_created_total', { courier: 'dhl-express' })).toBeUndefined();

  // The courier label is from the account's GET /couriers, which the worker reads at start under
  // the account's pace (the fleet's first share can take a second or two): labels created before
  // it answers count as `other`.
  await waitFor(() => (fake.stats().requests['GET /couriers']?.['200'] ? true : undefined), { timeoutMs: 20_000, what: 'GET /couriers' });
  await new Promise((resolve) => setTimeout(resolve, 100)); // the answer reaches the worker

  // One 429 on the first label request, one on a tracking poll.
  fake.setFaults({
    failNext: [
      { endpoint: 'POST /labels', status: 429, retryAfter: '1' },
      { endpoint: 'GET /tracking', status: 429, retryAfter: '1' },
    ],
  });
  const delivered = await startShipment(env.client, taskQueue, order('acme', 'M-1'));
  // The 429 is taken by M-1's first attempt before the others start, so they create theirs at once.
  await waitFor(() => (fake.stats().requests['POST /labels']?.['429'] === 1 ? true : undefined), { timeoutMs: 20_000 });
  const rejected = await startShipment(env.client, taskQueue, order('acme', 'M-2', { postalCode: '00000' }));
  const exception = await startShipment(env.client, taskQueue, order('acme', 'M-3', { marker: 'EXCEPTION' }));

  expect((await env.client.workflow.getHandle(delivered.workflowId).result()).outcome).toBe('delivered');
  expect((await env.client.workflow.getHandle(exception.workflowId).result()).outcome).toBe('exception');
  const rejectedHandle = env.client.workflow.getHandle(rejected.workflowId);
  await waitFor(async () => ((await rejectedHandle.query(stateQuery)).phase === 'awaiting_correction' ? true : undefined), {
    timeoutMs: 20_000,
  });

  // M-3's label came from its first attempt, a local activity: no createLabel activity task in its history.
  const m3History = await env.client.workflow.getHandle(shipmentWorkflowId({ shop: 'acme', orderId: 'M-3' })).fetchHistory();
  const scheduled = (m3History.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
  expect(scheduled).not.toContain('createLabel');
  expect((m3History.events ?? []).some((e) => e.markerRecordedEventAttributes)).toBe(true);

  const stats = fake.stats();
  const fake429s = Object.values(stats.requests).reduce((sum, byStatus) => sum + (byStatus['429'] ?? 0), 0);
  expect(stats.labelsCreated).toBe(2);
  expect(stats.labelsRejected).toBe(1);
  expect(fake429s).toBe(2);

  const after = (await get(`${healthUrl}/metrics`))!.body;
  expect(sample(after, 'shipping_labels_created_total', { courier: 'dhl-express' })).toBe(stats.labelsCreated);
  expect(sample(after, 'shipping_labels_rejected_total', { courier: 'dhl-express', kind: 'courier_error' })).toBe(stats.labelsRejected);
  expect(sample(after, 'shipping_api_rate_limited_total', { activity: 'createLabel' })).toBe(1);
  expect(sample(after, 'shipping_api_rate_limited_total', { activity: 'pollTrackingSpan' })).toBe(1);
  expect(sample(after, 'shipping_api_rate_limited_total', { activity: 'readOrder' })).toBe(0);
  // The account workflow answered this worker's pace reports throughout.
  expect(sample(after, 'shipping_api_pace_alone', { account: 'default' })).toBe(0);
  // Per account and per call: every call the fake answered, each poll of the pollers' span among them.
  const answered = Object.values(stats.requests).reduce((sum, byStatus) => sum + Object.values(byStatus).reduce((a, b) => a + b, 0), 0);
  const byAnswer = (answer: string) => sample(after, 'shipping_api_answers_total', { account: 'default', answer }) ?? 0;
  expect(byAnswer('rate_limited')).toBe(fake429s);
  expect(byAnswer('ok') + byAnswer('rate_limited') + byAnswer('error')).toBe(answered);
  expect(sample(after, 'shipping_tracking_completed_total', { outcome: 'delivered', tag: 'Delivered' })).toBe(1);
  expect(sample(after, 'shipping_tracking_completed_total', { outcome: 'exception', tag: 'Exception' })).toBe(1);
  expect(sample(after, 'shipping_tracking_completed_total', { outcome: 'cancelled', tag: 'Cancelled' })).toBeUndefined();
  // The process's own figures come with them.
  expect(sample(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);

  // The SDK's own Prometheus endpoint, on its own port.
  const sdk = (await get(sdkMetricsUrl))!;
  expect(sdk.status).toBe(200);
  expect(sdk.body).toMatch(/^temporal_workflow_task_execution_latency\w*\{[^}]*task_queue="health-/m);
  expect(sdk.body).toMatch(/^temporal_activity_execution_latency\w*\{/m);
  expect(sdk.body).toMatch(/^temporal_worker_task_slots_available\{/m);

  expect(await get(`${healthUrl}/nothing`)).toMatchObject({ status: 404 });
});

it(
  'counts shop deliveries from deliverShopEvents results and failures, regular or local; readiness of a stopped worker',
  { timeout: 60_000 },
  async () => {
    const attempts = new Map<ProbeMode, number>();
    const probeQueue = `shop-probe-${randomUUID()}`;
    const shopWorker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: probeQueue,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: path.join(__dirname, 'fixtures', 'workflows', 'shop-delivery-probe.ts'),
        logger: new DefaultLogger('WARN'),
      }),
      activities: {
        // Results of the real activity's type (activities/shop-delivery.ts), chosen by the probe.
        async deliverShopEvents({ mode }: { shop: string; mode: ProbeMode }): Promise<ShopDeliveryResult | string> {
          const attempt = (attempts.get(mode) ?? 0) + 1;
          attempts.set(mode, attempt);
          const at = { sequence: 4, status: 422, message: 'HTTP 422' };
          switch (mode) {
            case 'some-failed': // three acknowledged, the fourth refused
              return { delivered: 3, stopped: { reason: 'rejected', ...at }, retry: null };
            case 'gone':
              return { delivered: 0, stopped: { reason: 'gone', ...at, status: 410 }, retry: null };
            case 'flaky':
              if (attempt === 1) throw new Error('shop answered 503');
              return { delivered: 1, stopped: null, retry: null };
            case 'odd-shape':
              return 'sent';
            case 'fatal':
              throw ApplicationFailure.nonRetryable('shop refused the signature', 'ShopRejected');
          }
        },
      },
      interceptors: { activity: [shipmentMetricsInterceptor(['Delivered'])] },
    });
    const count = async (result: string) =>
      (await registry.getSingleMetric('shop_deliveries_total')!.get()).values
        .filter((v) => v.labels.result === result)
        .reduce((sum, v) => sum + v.value, 0);
    const before = Object.fromEntries(await Promise.all(['delivered', 'failed', 'gone', 'retry'].map(async (r) => [r, await count(r)])));

    // The readiness /readyz answers from, on this real worker: ready while it polls, not once stopped.
    const readiness = new WorkerReadiness();
    expect(await readiness.check()).toMatchObject({ ready: false, state: 'starting' });
    readiness.watch(shopWorker, env.nativeConnection);
    expect(await readiness.check()).toMatchObject({ ready: false, state: 'INITIALIZED' });
    const answer = await shopWorker.runUntil(async () => {
      expect(await readiness.check()).toEqual({ ready: true, state: 'RUNNING', temporal: 'reachable' });
      return env.client.workflow.execute('shopDeliveryProbe', {
        taskQueue: probeQueue,
        workflowId: `probe-${randomUUID()}`,
        args: ['acme'],
      });
    });
    expect(await readiness.check()).toMatchObject({ ready: false, state: 'STOPPED' });
    expect(answer).toBe('fatal failed as expected');
    expect(attempts.get('flaky')).toBe(2);
    expect((await count('delivered'))! - before.delivered!).toBe(4); // 3 + 1
    expect((await count('failed'))! - before.failed!).toBe(2); // the refused event + the non-retryable failure
    expect((await count('gone'))! - before.gone!).toBe(1); // from the local activity
    expect((await count('retry'))! - before.retry!).toBe(1); // the flaky first attempt
  },
);

it('/readyz is 503 while the worker drains after SIGTERM, then the process exits 0', { timeout: 60_000 }, async () => {
  const w = workers[0]!;
  expect((await get(`${w.healthUrl}/readyz`))?.status).toBe(200);
  // A label answer that takes 3 s keeps a task in flight while the worker drains.
  fake.setFaults({ latencyMs: 3_000, endpoints: ['POST /labels'] });
  await startShipment(env.client, taskQueue, order('acme', 'M-4'));
  await waitFor(() => (fake.labels().some((l) => l.customerOrderNumber === 'M-4') ? true : undefined), { timeoutMs: 20_000 });
  w.child.kill('SIGTERM');
  const draining = await waitFor(
    async () => {
      const ready = await get(`${w.healthUrl}/readyz`);
      return ready?.status === 503 ? ready : undefined;
    },
    { timeoutMs: 5_000, what: '/readyz 503 while draining' },
  );
  expect(JSON.parse(draining.body)).toMatchObject({ ready: false, state: expect.stringMatching(/^(STOPPING|DRAINING|DRAINED)$/) });
  expect((await get(`${w.healthUrl}/livez`))?.status).toBe(200);
  expect(await w.exited).toBe(0);
  fake.setFaults({ latencyMs: 0, endpoints: null });
});

it('/readyz turns 503 when the Temporal server goes away, while /livez stays 200', { timeout: 60_000 }, async () => {
  const w = await startHealthWorker();
  await probeUntilReady(w);
  await env.teardown(); // stops the dev server
  const lost = await waitFor(
    async () => {
      const ready = await get(`${w.healthUrl}/readyz`);
      return ready?.status === 503 ? ready : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 100, what: '/readyz 503' }, // the check's own timeout is 1 s
  );
  expect(JSON.parse(lost.body)).toMatchObject({ ready: false, state: 'RUNNING', temporal: 'unreachable' });
  expect((await get(`${w.healthUrl}/livez`))?.status).toBe(200);
  env = undefined as unknown as TestWorkflowEnvironment; // torn down already
});
