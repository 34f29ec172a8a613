/**
 * An emitted event never changes: an independent Standard Webhooks receiver (a plain HTTP server
 * that keeps every body it is sent) holds its answer to an event while the worker process is
 * SIGKILLed; the new worker sends the event again, and every send of an id is byte for byte the
 * first one (occurredAt included). Held: the first event (the label's, sent by the regular
 * activity once its task is recorded), and the first tracking change (sent inside the very task
 * that applied it, which the new worker runs again).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import type { ShipmentOutcome } from '../workflow-definitions/shipment';
import { saveFixture } from './helpers/fixtures';
import { TEST_CREDENTIALS } from './helpers/harness';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { killWorkerProcesses, startWorkerProcess, workerEnv } from './helpers/worker-process';

let env: TestWorkflowEnvironment;
let api: FakeShippingApi;
let receiver: Server;
/** Every body received, by webhook-id, in arrival order. */
const bodies = new Map<string, string[]>();
/** The held request's answer, kept until the test lets it go (or the worker dies). */
let held: ServerResponse | null = null;
/** Which body to hold: the first one that matches, once. */
let holdWhen: ((body: string) => boolean) | null = () => true;

beforeAll(async () => {
  env = await createTestEnv();
  api = await startFakeShippingApi({ port: 0, trackingStepPolls: 1, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.set(id, [...(bodies.get(id) ?? []), body]);
      if (holdWhen?.(body)) {
        holdWhen = null;
        held = res;
        return;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  killWorkerProcesses();
  held?.destroy();
  await new Promise((resolve) => receiver?.close(resolve));
  await api?.close();
  await env?.teardown();
});

async function killWhileHeld(orderId: string, fixture: string): Promise<void> {
  const taskQueue = `immutable-events-${randomUUID()}`;
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const workerSettings = {
    ...workerEnv(env.address, taskQueue, api.baseUrl),
    TRACKING_POLL_INTERVAL: '200ms',
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: '1s',
      acme: { type: 'webhook', url, secrets: [`whsec_${randomBytes(32).toString('base64')}`] },
    }),
  };
  held = null;
  const first = await startWorkerProcess(workerSettings);
  const started = await startShipment(env.client, taskQueue, order('acme', orderId));
  await waitFor(() => (held ? true : undefined), { timeoutMs: 30_000, what: 'the held event at the shop' });
  first.child.kill('SIGKILL');
  expect(await first.exited).toBeNull();
  held!.destroy();

  const second = await startWorkerProcess(workerSettings);
  const handle = env.client.workflow.getHandle(started.workflowId);
  const outcome = (await handle.result()) as ShipmentOutcome;
  expect(outcome.shopSync).toMatchObject({ status: 'up_to_date', delivered: outcome.shopSync!.emitted });
  const ours = [...bodies.entries()].filter(([, all]) => all[0]!.includes(`"orderId":"${orderId}"`));
  const heldId = ours.find(([, all]) => all.length >= 2)?.[0];
  expect(heldId, 'the held event was sent again after the kill').toBeDefined();
  for (const [id, all] of ours) expect(new Set(all).size, `${id}: ${all.join('\n')}`).toBe(1);
  expect(ours.length).toBe(outcome.shopSync!.emitted);
  await saveFixture(handle, fixture);
  second.child.kill('SIGTERM');
  await second.exited;
}

it('a worker SIGKILLed while the shop holds its answer to the first event: every send of an event id carries the same bytes', async () => {
  holdWhen = () => true;
  await killWhileHeld('IMM-1', 'immutable-event-sent-once-recorded');
}, 180_000);

it('a worker SIGKILLed while the shop holds its answer to a tracking change sent inside its task: the task run again sends the same bytes', async () => {
  holdWhen = (body) => body.includes('"type":"tracking.updated"');
  await killWhileHeld('IMM-2', 'immutable-event-tracking-told-in-its-task');
}, 180_000);
