/**
 * `resolve` on a shipment that has ended with a reason only a person can close (here the
 * courier's exception): the CLI as a child process against a real dev server and worker.
 */
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../client/cli-support';
import { startShipment } from '../order-import/start-shipment';
import { attentionResolutionWorkflowId, type EndedShipmentResolution } from '../workflow-definitions/shipment';
import { shipmentWorkflowId } from '../domain/shipment';
import { runCli } from './helpers/cli';
import { startHarness, type Harness } from './helpers/harness';
import { order } from './helpers/orders';
import { waitFor } from './helpers/wait';
import { saveFixture } from './helpers/fixtures';
import { ATTENTION_GAUGE, watchAttention } from '../metrics/attention-gauge';
import { registry } from '../metrics/counters';

let h: Harness;
let client: Client;
let env: Record<string, string>;
const cli = (...args: string[]) => runCli(args, { env });

beforeAll(async () => {
  h = await startHarness();
  client = h.env.client;
  env = { TEMPORAL_ADDRESS: h.env.address, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: h.taskQueue, ...h.shippingEnv };
});
afterAll(async () => {
  await h?.stop();
});

describe('resolve on an ended shipment', () => {
  it('an exception: resolve --note --by records who, when and the note; attention drops it; a second resolve is refused; status shows it', async () => {
    const shop = 'resolve-ended';
    const orderId = 'RE-1';
    const workflowId = shipmentWorkflowId({ shop, orderId });
    await startShipment(client, h.taskQueue, order(shop, orderId, { marker: 'EXCEPTION' }));
    expect(await client.workflow.getHandle(workflowId).result()).toMatchObject({ outcome: 'exception' });

    const listed = await cli('attention', '--json');
    expect(listed.code, listed.stderr).toBe(EXIT.rejected);
    expect(JSON.parse(listed.stdout).shipments).toEqual([
      expect.objectContaining({
        reason: 'exception',
        orderId,
        next: expect.stringMatching(/then npm run cli -- resolve resolve-ended RE-1 --note/),
      }),
    ]);

    // Bad input is refused before anything is started.
    const control = await cli('resolve', shop, orderId, '--note', 'line\nbreak');
    expect(control).toMatchObject({ code: 2, stderr: expect.stringMatching(/--note must be 1 to 500 characters, without control/) });

    const done = await cli('resolve', shop, orderId, '--note', 'DPD redelivered it to the corrected address, ticket 4712', '--by', 'anna');
    expect(done.code, done.stderr).toBe(EXIT.ok);
    expect(done.stdout).toMatch(/Resolved exception of shop resolve-ended order RE-1 \(ended\): by anna at \S+\./);

    // The record is its own workflow: its result is the resolution.
    const record = client.workflow.getHandle(attentionResolutionWorkflowId(workflowId));
    expect((await record.result()) as EndedShipmentResolution).toMatchObject({
      shipmentWorkflowId: workflowId,
      shop,
      orderId,
      reason: 'exception',
      by: 'anna',
      note: 'DPD redelivered it to the corrected address, ticket 4712',
    });

    // Visibility follows the start shortly after.
    await saveFixture(record, 'attention-resolution-exception');
    const after = await waitFor(
      async () => {
        const run = await cli('attention', '--json');
        return run.code === EXIT.ok ? run : undefined;
      },
      { what: 'attention to drop the resolved exception', timeoutMs: 20_000, intervalMs: 500 },
    );
    expect(JSON.parse(after.stdout).shipments).toEqual([]);
    // The worker's gauge (and so the alert ShipmentsNeedAPerson) counts the exception no more.
    watchAttention(client, (message) => {
      throw new Error(message);
    });
    const gauge = (await registry.getSingleMetric(ATTENTION_GAUGE)!.get()).values;
    expect(gauge.find((v) => v.labels.reason === 'exception')?.value).toBe(0);
    expect(gauge.every((v) => v.value === 0)).toBe(true);

    const again = await cli('resolve', shop, orderId, '--note', 'again');
    expect(again.code).toBe(EXIT.rejected);
    expect(again.stdout + again.stderr).toMatch(/resolved already/);

    const status = await cli('status', shop, orderId);
    expect(status.code, status.stderr).toBe(EXIT.ok);
    expect(status.stdout).toMatch(/Resolved\s+exception by anna at \S+: DPD redelivered it to the corrected address, ticket 4712/);
  });

  it('an ended shipment with nothing left for a person is refused (exit 1), nothing started', async () => {
    const shop = 'resolve-ended';
    const orderId = 'RE-2';
    const workflowId = shipmentWorkflowId({ shop, orderId });
    await startShipment(client, h.taskQueue, order(shop, orderId));
    expect(await client.workflow.getHandle(workflowId).result()).toMatchObject({ outcome: 'delivered' });
    const run = await cli('resolve', shop, orderId, '--note', 'nothing');
    expect(run.code).toBe(EXIT.rejected);
    expect(run.stderr).toMatch(
      /has already ended \(COMPLETED\); nothing to resolve: it ended delivered, which leaves nothing for a person/,
    );
    const started = await client.workflow.count(`WorkflowId = '${attentionResolutionWorkflowId(workflowId)}'`);
    expect(started.count).toBe(0);
  });
});
