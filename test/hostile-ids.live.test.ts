/**
 * Against the real dev server (no worker needed: only starts): the workflow id limit this project
 * checks before any start is the server's, and an ambiguous workflow id that already belongs to
 * another order is a failure, never "already known" (which would silently drop the order).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { MAX_WORKFLOW_ID_BYTES, startShipment } from '../order-import/start-shipment';
import { WORKFLOW_TYPE } from '../workflow-definitions/shipment';
import { createTestEnv } from './helpers/temporal-env';

let env: TestWorkflowEnvironment;
const taskQueue = `hostile-ids-${process.pid}`;
const labelRequest = { courier: 'ups', service: { productCode: 'UPS_STANDARD' }, shipment: {} };

beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.teardown();
});

it(`has the server refuse a workflow id of ${MAX_WORKFLOW_ID_BYTES + 1} bytes and take one of ${MAX_WORKFLOW_ID_BYTES} (limit.maxIDLength)`, async () => {
  const start = (bytes: number) => env.client.workflow.start(WORKFLOW_TYPE, { workflowId: 'w'.repeat(bytes), taskQueue, args: [] });
  await expect(start(MAX_WORKFLOW_ID_BYTES)).resolves.toBeDefined();
  await expect(start(MAX_WORKFLOW_ID_BYTES + 1)).rejects.toThrow();
});

it('reports a start whose ambiguous workflow id belongs to another order as a failure naming both', async () => {
  // shipment-nordic-outdoor-7 is shop "nordic-outdoor" order "7" and shop "nordic" order "outdoor-7".
  const first = await startShipment(env.client, taskQueue, { shop: 'nordic-outdoor', orderId: '7', labelRequest });
  expect(first.status).toBe('started');
  await expect(startShipment(env.client, taskQueue, { shop: 'nordic', orderId: 'outdoor-7', labelRequest })).rejects.toThrow(
    /workflow id shipment-nordic-outdoor-7 already belongs to shop "nordic-outdoor" order "7"/,
  );
  // The same order again is still just already known.
  await expect(startShipment(env.client, taskQueue, { shop: 'nordic-outdoor', orderId: '7', labelRequest })).resolves.toMatchObject({
    status: 'already_known',
  });
});
