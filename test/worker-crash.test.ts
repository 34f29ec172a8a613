/**
 * Durability through real processes: the worker (`worker/main.ts`, as `npm run worker` runs it)
 * is killed with SIGKILL while the label request is in flight and the label already exists on
 * the API side; a new worker process finishes the order. Exactly one label may exist.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startShopReceiver, type WebhookAnswer } from '../shop-receiver/server';
import { redeliverShopEventsUpdate, stateQuery, type ShipmentOutcome } from '../workflow-definitions/shipment';
import { saveFixture } from './helpers/fixtures';
import { TEST_CREDENTIALS } from './helpers/harness';
import { killWorkerProcesses, spawnWorkerProcess, startWorkerProcess, type WorkerProcess, workerEnv } from './helpers/worker-process';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { prebuiltBundlePath } from './helpers/workflow-bundle';
import { freePort } from '../dev-server/free-port';

let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'worker-crash-'));
/** Built as `npm run build` does, so the restarted worker runs the production start path. */
let prebuiltBundle = '';

beforeAll(async () => {
  prebuiltBundle = prebuiltBundlePath();
  env = await createTestEnv();
  fake = await startFakeShippingApi({ port: 0, trackingStepMs: 150, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
});
afterAll(async () => {
  killWorkerProcesses();
  await fake?.close();
  await env?.teardown();
  rmSync(tmp, { recursive: true, force: true });
});

/** The worker process against this file's dev server and fake API. */
function startWorkerFor(taskQueue: string, extraEnv: Record<string, string> = {}): Promise<WorkerProcess> {
  return startWorkerProcess({
    ...workerEnv(env.address, taskQueue, fake.baseUrl),
    TRACKING_POLL_INTERVAL: '200ms',
    LOG_LEVEL: 'info',
    ...extraEnv,
  });
}

it('a worker killed with SIGKILL during label creation, then restarted, ends with exactly one label', async () => {
  const taskQueue = `crash-${randomUUID()}`;
  const orderId = 'K-1';
  // The API creates the label at once but answers only after 5 s: the crash loses the answer.
  fake.setFaults({ latencyMs: 5_000, endpoints: ['POST /labels'] });

  const first = await startWorkerFor(taskQueue);
  const started = await startShipment(env.client, taskQueue, order('acme', orderId));
  const handle = env.client.workflow.getHandle(started.workflowId);

  const until = Date.now() + 30_000;
  while (!fake.labels().some((l) => l.customerOrderNumber === orderId)) {
    if (Date.now() > until) throw new Error('label request never reached the API');
    await new Promise((r) => setTimeout(r, 50));
  }
  first.child.kill('SIGKILL');
  expect(await first.exited).toBeNull(); // killed by the signal, not exited
  fake.setFaults({ latencyMs: 0, endpoints: null });

  const metricsPort = await freePort();
  const second = await startWorkerFor(taskQueue, {
    WORKFLOW_BUNDLE_PATH: prebuiltBundle,
    METRICS_BIND_ADDRESS: `127.0.0.1:${metricsPort}`,
  });
  expect(second.output()).toContain('"prebuiltBundle":true');
  const result = await handle.result();
  expect(result.outcome).toBe('delivered');

  const labels = fake.labels().filter((l) => l.customerOrderNumber === orderId);
  expect(labels).toHaveLength(1);
  expect(labels[0]!.idempotencyKey).toBe('acme:K-1:r1');
  expect(result.labelId).toBe(labels[0]!.id);
  // The retried request was answered from the key, not created again.
  expect(fake.stats().idempotentReplays).toBeGreaterThanOrEqual(1);
  expect((await handle.query(stateQuery)).attempts.labelRequests).toBe(1);

  // The restarted worker exposes Prometheus metrics of its work.
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  expect(metrics).toMatch(/^temporal_activity_execution_latency\w*\{/m);
  expect(metrics).toContain(`task_queue="${taskQueue}"`);

  // Graceful shutdown on SIGTERM, and no credentials in anything either worker logged.
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
  const logs = first.output() + second.output();
  expect(logs).toContain('"workflowId":"shipment-acme-K-1"');
  expect(logs).toContain('worker stopped');
  expect(logs).not.toContain(TEST_CREDENTIALS.apiKey);
  expect(logs).not.toContain(TEST_CREDENTIALS.apiToken);
});

it('a worker SIGKILLed after the shop answered 2xx, before the delivery completed, sends the event again with the same id', async () => {
  const taskQueue = `crash-shop-${randomUUID()}`;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const answered: WebhookAnswer[] = [];
  let armed: (() => void) | null = null;
  const receiver = await startShopReceiver({
    secrets: [secret],
    // The shop refuses event 1 at first, so the whole shipment's events queue up behind it.
    faults: { failNext: [{ status: 422 }] },
    onWebhookAnswered: (answer) => {
      answered.push(answer);
      if (answer.status === 200 && armed) {
        armed(); // the 2xx is on the wire: kill before the worker can report the delivery
        armed = null;
      }
    },
  });
  try {
    const shopEnv = {
      SHOP_CONNECTORS: JSON.stringify({ maxBackoff: '1s', acme: { type: 'webhook', url: receiver.webhookUrl('acme'), secrets: [secret] } }),
    };
    const first = await startWorkerFor(taskQueue, shopEnv);
    const started = await startShipment(env.client, taskQueue, order('acme', 'K-2'));
    const handle = env.client.workflow.getHandle(started.workflowId);
    const waiting = await (async () => {
      const until = Date.now() + 30_000;
      for (;;) {
        const state = await handle.query(stateQuery);
        if (state.outcome !== null && state.shopSync?.status === 'failed') return state;
        if (Date.now() > until) throw new Error(`shipment did not end with a refused event: ${JSON.stringify(state.shopSync)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    expect(waiting.shopSync!.pending.length).toBeGreaterThanOrEqual(3);

    // The redelivery sends events 1..n in one call; the worker dies right after the shop's 200 for event 1.
    // (The update is answered when its workflow task completes, which the kill prevents: the
    // restarted worker answers it.)
    armed = () => first.child.kill('SIGKILL');
    const redelivery = handle.executeUpdate(redeliverShopEventsUpdate);
    expect(await first.exited).toBeNull();
    const killedAfter = answered.find((a) => a.status === 200)!.webhookId!;
    // Event 1 was answered; event 2 may already have been on the wire when the kill landed.
    const beforeRestart = receiver.state().orders.find((o) => o.orderId === 'K-2')!.received;
    expect(beforeRestart[0]).toBe(1);
    expect(beforeRestart.length).toBeLessThanOrEqual(2);

    const second = await startWorkerFor(taskQueue, shopEnv);
    expect(await redelivery).toMatchObject({ fromSequence: 1, previousStatus: 'failed' });
    const outcome = (await handle.result()) as ShipmentOutcome;
    expect(outcome.shopSync).toMatchObject({ status: 'up_to_date', delivered: outcome.shopSync!.emitted });
    // Event 1 reached the shop twice with the same webhook-id; the shop kept it once.
    expect(answered.filter((a) => a.webhookId === killedAfter && a.status === 200)).toHaveLength(2);
    const view = receiver.state().orders.find((o) => o.orderId === 'K-2')!;
    expect(view.duplicates).toBeGreaterThanOrEqual(1);
    expect(view.received).toEqual(Array.from({ length: outcome.shopSync!.emitted }, (_, i) => i + 1));
    expect(view.outOfOrder).toBe(false);
    await saveFixture(handle, 'shop-sync-killed-after-2xx');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(first.output() + second.output()).not.toContain(secret);
  } finally {
    await receiver.close();
  }
});

it('refuses to start with a message naming each missing or invalid setting', async () => {
  const worker = spawnWorkerProcess({ SHIPPING_API_BASE_URL: 'not a url', TRACKING_POLL_INTERVAL: 'soon' });
  const code = await worker.exited;
  const stderr = worker.output();
  expect(code).toBe(2);
  expect(stderr).toContain('SHIPPING_API_BASE_URL: must be an http(s) URL');
  expect(stderr).toContain('SHIPPING_API_KEY: is required');
  expect(stderr).toContain('SHIPPING_API_TOKEN: is required');
  expect(stderr).toContain('TRACKING_POLL_INTERVAL: must be a positive duration');
});
