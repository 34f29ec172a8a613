/**
 * One stuck shipment never stops its shop's pulls: the real dev server refuses an update to a
 * shipment whose workflow task is failing, and the change detection defers that order (the pull
 * keeps it in its cursor to be read again) instead of failing the page. Before, the refusal failed
 * the whole page, so every pull that re-read that order failed. A shipment that never answers (no
 * worker runs its workflow task) is deferred too, once its time to answer is over: before, the
 * client asked again until it answered, and the page waited as long.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { shipmentWorkflowId } from '../domain/shipment';
import { ShopChangeNotifier } from '../shop-import/changes';
import { orderIdOf } from '../shop-import/mapping';
import type { PlatformOrder } from '../domain/platform-order';
import { ImportMapping } from '../config/shop-import';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `failing-task-${randomUUID()}`;

beforeAll(async () => {
  env = await createTestEnv();
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: path.join(__dirname, 'fixtures', 'workflows', 'failing-task.ts'),
  });
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

const mapping = ImportMapping.parse({ defaultService: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' } });

function order(platformOrderId: string, postalCode: string): PlatformOrder {
  const address = { firstName: 'Ana', lastName: 'Silva', company: null, state: null, phone: null, countryCode: 'PT' };
  return {
    platformOrderId,
    name: `#${platformOrderId}`,
    number: platformOrderId,
    modifiedAt: new Date().toISOString(),
    shippingMethod: null,
    currency: 'EUR',
    email: 'ana@example.org',
    shipTo: { ...address, streetLines: ['Rua Nova 3'], city: 'Lisboa', postalCode },
    shipFrom: { ...address, company: 'Warehouse', streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262' },
    lines: [{ sku: 'TENT-2', title: 'Tent', quantity: 1, unitPrice: 189, unitWeight: { value: 2, unit: 'kg' } }],
    skip: null,
    problem: null,
    merchant: { status: 'open', platformStatus: 'processing', lines: [{ item: 'TENT-2', quantity: 1, location: 'Warehouse' }] },
  };
}

it("a shipment whose workflow task is failing: its order's change is deferred, the rest of the page is told", async () => {
  const shop = `stuck-${randomUUID().slice(0, 8)}`;
  const stuck = order('7001', '1100-002');
  const workflowId = shipmentWorkflowId({ shop, orderId: orderIdOf(stuck, mapping) });
  const handle = await env.client.workflow.start('shipmentWorkflow', { workflowId, taskQueue, args: [] });
  await waitFor(async () => ((await handle.fetchHistory()).events!.some((e) => e.workflowTaskFailedEventAttributes) ? true : undefined), {
    what: 'the failed workflow task',
    timeoutMs: 30_000,
  });
  // Beside it on the page, an order with no shipment: refused ("unchanged"), as before.
  const gone = order('7002', '1100-003');

  const counts = await new ShopChangeNotifier(env.client).notice(shop, [stuck, gone], mapping, new Set());

  expect(counts).toEqual({ told: 0, unchanged: 1, deferred: ['7001'] });
  await handle.terminate('test done');
}, 60_000);

it('a shipment that does not answer (no worker runs its workflow task): deferred once its time to answer is over', async () => {
  const shop = `silent-${randomUUID().slice(0, 8)}`;
  const silent = order('7101', '1100-004');
  const workflowId = shipmentWorkflowId({ shop, orderId: orderIdOf(silent, mapping) });
  // A task queue no worker polls, as the queue of a fleet that is down or was killed.
  const handle = await env.client.workflow.start('shipmentWorkflow', { workflowId, taskQueue: `nobody-${randomUUID()}`, args: [] });
  // 2 s to answer here; the test's own timeout is what a notifier that waits for the answer meets.
  const counts = await new ShopChangeNotifier(env.client, 2_000).notice(shop, [silent], mapping, new Set());

  expect(counts).toEqual({ told: 0, unchanged: 0, deferred: ['7101'] });
  await handle.terminate('test done');
}, 60_000);
