/**
 * The fleet's pace across the account workflow's continue-as-new, on a real Temporal dev server:
 * the workflow continues as new every couple of thousand events (a few minutes of four workers'
 * reports), and a worker's reports must reach the run that follows, whether it was reporting
 * through the continue-as-new or started after it.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { accountWorkflowId, fleetRateLimits } from '../pacing/fleet-rate-limit';
import { accountFreshAnswersSignal } from '../workflow-definitions/account';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.teardown();
});

const silentLog = { warn: () => undefined, info: () => undefined, debug: () => undefined };
const report = { want: 2, accepted: 1, limited: 0 };

it("a worker's reports get shares from the run after a continue-as-new, and so do a worker's started after it", async () => {
  const taskQueue = `account-can-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundle: await getWorkflowBundle(),
  });
  const done = worker.run();
  const workflowId = accountWorkflowId({ name: 'default', baseUrl: 'http://127.0.0.1:1' }, taskQueue);
  const reporting = fleetRateLimits({ client: env.client, taskQueue, workflowId, log: silentLog });
  const opened: Array<{ close(): Promise<void> }> = [reporting];
  try {
    expect(await reporting.pace(report)).not.toBeNull();
    const first = (await env.client.workflow.getHandle(workflowId).describe()).runId;
    // Fresh-answer reports until the run continues as new (past 2,000 events), a report to the pace among them.
    const account = env.client.workflow.getHandle(workflowId);
    let signals = 0;
    while ((await account.describe()).runId === first) {
      await Promise.all(
        Array.from({ length: 200 }, () => account.signal(accountFreshAnswersSignal, { answers: 1, limited: 0, at: Date.now() })),
      );
      await reporting.pace(report);
      signals += 200;
      expect(signals, 'the account workflow never continued as new').toBeLessThan(5000);
    }
    // The reporting worker: a report may meet the run closing, the next ones the new run.
    const after: Array<unknown> = [];
    for (let i = 0; i < 5; i++) after.push(await reporting.pace(report));
    expect(after.slice(-3).every((grant) => grant !== null)).toBe(true);
    // A worker process started after the continue-as-new.
    const later = fleetRateLimits({ client: env.client, taskQueue, workflowId, log: silentLog });
    opened.push(later);
    expect(await later.pace(report)).not.toBeNull();
  } finally {
    for (const fleet of opened) await fleet.close();
    worker.shutdown();
    await done;
  }
}, 180_000);
