/**
 * An order read's 429 is waited out from when the API answered it, through a real worker
 * restart. The first attempt runs inside the workflow task, right after the label's; the
 * workflow's clock stands at the task's start, so a wait counted from it ends early by however
 * long the label took. Pacing is off in both workers: the call's own carried wait is then all
 * that stands between the 429 and its retry, as for a 429 the pacer takes for noise.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { saveFixture } from './helpers/fixtures';
import { TEST_CREDENTIALS } from './helpers/harness';
import { killWorkerProcesses, startWorkerProcess, type WorkerProcess, workerEnv } from './helpers/worker-process';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { prebuiltBundlePath } from './helpers/workflow-bundle';

let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'order-read-retry-after-'));
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

function startWorkerFor(taskQueue: string): Promise<WorkerProcess> {
  return startWorkerProcess({
    ...workerEnv(env.address, taskQueue, fake.baseUrl),
    WORKFLOW_BUNDLE_PATH: prebuiltBundle,
    SHIPPING_API_PACING: 'off',
    TRACKING_POLL_INTERVAL: '200ms',
    LOG_LEVEL: 'info',
  });
}

it('an order read retried after a worker restart waits the whole Retry-After from the 429, however long the label took before it', async () => {
  const taskQueue = `order-read-${randomUUID()}`;
  const orderId = 'RA-1';
  // Every label answer takes 3 s, so the order read's first attempt comes 3 s into its workflow task.
  fake.setFaults({ latencyMs: 3_000, endpoints: ['POST /labels'], failNext: [{ endpoint: 'GET /orders', status: 429, retryAfter: '3' }] });

  const first = await startWorkerFor(taskQueue);
  const started = await startShipment(env.client, taskQueue, order('acme', orderId));
  const handle = env.client.workflow.getHandle(started.workflowId);
  const until = Date.now() + 30_000;
  while (!fake.labels().some((l) => l.customerOrderNumber === orderId)) {
    if (Date.now() > until) throw new Error('label request never reached the API');
    await new Promise((r) => setTimeout(r, 50));
  }
  // Killed with the label's answer on its way: the next worker makes the whole task again.
  first.child.kill('SIGKILL');
  expect(await first.exited).toBeNull();
  await startWorkerFor(taskQueue);

  expect((await handle.result()).outcome).toBe('delivered');
  const reads = fake.requestLog().filter((r) => r.endpoint.startsWith('GET /orders'));
  const limited = reads.findIndex((r) => r.status === 429);
  expect(limited).toBeGreaterThanOrEqual(0);
  const retry = reads[limited + 1];
  expect(retry, 'the order read was retried').toBeDefined();
  // Sent no earlier than the Retry-After after the 429 was answered (`at`: when it was sent).
  expect(retry!.receivedAt - reads[limited]!.at).toBeGreaterThanOrEqual(3_000);
  await saveFixture(handle, 'order-read-429-after-slow-label');
}, 120_000);
