/**
 * The fleet's memory of the account's 429s on a real Temporal dev server: the account workflow
 * (workflows/account.ts) keeps the hold a 429 named, and the fresh answers the workers counted
 * (pacing/noise-floor.ts), so a worker started later knows both before its first call. And its
 * pace reaches every worker across the workflow's continue-as-new.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { callPacing } from '../worker/create-worker';
import {
  accountHoldsWorkflowId,
  accountWorkflowId,
  FRESH_MAX_AGE_MS,
  FRESH_READ_MS,
  FRESH_REPORT_MS,
  fleetRateLimits,
} from '../pacing/fleet-rate-limit';
import { accountFreshAnswersSignal, ACCOUNT_WORKFLOW_TYPE, poolFresh } from '../workflow-definitions/account';
import { saveFixture } from './helpers/fixtures';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.teardown();
});

const silentLog = { warn: () => undefined, info: () => undefined, debug: () => undefined };

/**
 * Until the account workflow's history holds `n` fresh-answer reports: a signal that comes while
 * a workflow task runs is written to the history only when the task completes.
 */
async function reportsInHistory(handle: WorkflowHandle, n: number): Promise<void> {
  await waitFor(
    async () => {
      const { events } = await handle.fetchHistory();
      const reports = (events ?? []).filter(
        (e) => e.workflowExecutionSignaledEventAttributes?.signalName === accountFreshAnswersSignal.name,
      );
      return reports.length >= n ? true : undefined;
    },
    { timeoutMs: 10_000 },
  );
}

/** A worker for the account workflow alone, and the fleet channel of one worker process. */
async function account(taskQueue: string) {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundle: await getWorkflowBundle(),
  });
  const done = worker.run();
  const workflowId = accountWorkflowId({ name: 'default', baseUrl: 'http://127.0.0.1:1' }, taskQueue);
  const fleet = fleetRateLimits({ client: env.client, taskQueue, workflowId, log: silentLog });
  return {
    fleet,
    handle: env.client.workflow.getHandle(workflowId),
    async stop() {
      await fleet.close();
      worker.shutdown();
      await done;
    },
  };
}

/**
 * Two workers' fleet channels of an account whose workflow no worker runs (a queue nobody polls),
 * the second listening; `stop` closes both and ends the account's workflows.
 */
async function publisherAndListener(queuePrefix: string, holdsRunMs?: number) {
  const taskQueue = `${queuePrefix}-${randomUUID()}`;
  const workflowId = accountWorkflowId({ name: 'default', baseUrl: 'http://127.0.0.1:1' }, taskQueue);
  const options = { client: env.client, taskQueue, workflowId, log: silentLog, ...(holdsRunMs ? { holdsRunMs } : {}) };
  const publisher = fleetRateLimits(options);
  const listener = fleetRateLimits(options);
  const heard: number[] = [];
  await listener.subscribe((until) => heard.push(until));
  const mailbox = env.client.workflow.getHandle(accountHoldsWorkflowId(workflowId));
  return {
    taskQueue,
    workflowId,
    publisher,
    heard,
    mailbox,
    async stop() {
      await Promise.all([publisher.close(), listener.close()]);
      for (const handle of [env.client.workflow.getHandle(workflowId), mailbox]) await handle.terminate('test over').catch(() => undefined);
    },
  };
}

it('relays a hold to a listening worker and records it for a worker started later', async () => {
  const taskQueue = `account-${randomUUID()}`;
  const first = await account(taskQueue);
  const heard: number[] = [];
  await first.fleet.subscribe((until) => heard.push(until));
  const until = Date.now() + 60_000;
  first.fleet.publish(until);
  await waitFor(() => (heard.includes(until) ? true : undefined), { timeoutMs: 10_000 });
  const later = fleetRateLimits({ client: env.client, taskQueue, workflowId: first.handle.workflowId, log: silentLog });
  const recorded: number[] = [];
  await later.subscribe((t) => recorded.push(t));
  expect(recorded[0]).toBe(until);
  await later.close();
  await saveFixture(first.handle, 'account-held');
  await first.stop();
}, 30_000);

it("relays a hold though no worker runs the account workflow's task: the relay does not wait behind it", async () => {
  // No worker polls this queue: the workflow's tasks wait for good, as they wait behind every
  // shipment's on a busy fleet. The relay reads the signal from the history the server writes.
  const { publisher, heard, stop } = await publisherAndListener('account-unpolled');
  await publisher.subscribe(() => undefined);
  await new Promise((r) => setTimeout(r, 500)); // both reading the history
  const until = Date.now() + 60_000;
  publisher.publish(until);
  // Waiting on the workflow (as 1.0 workers do), it never comes: no worker answers.
  await waitFor(() => (heard.includes(until) ? true : undefined), { timeoutMs: 10_000, intervalMs: 10 });
  await stop();
}, 30_000);

it("relays a hold while a task of the account workflow runs: the mailbox has it at once, the account workflow's history after the task", async () => {
  const { taskQueue, workflowId, publisher, heard, stop } = await publisherAndListener('account-busy');
  await publisher.subscribe(() => undefined);
  // A worker takes the account workflow's task and is slow with it (a replay, a loaded event
  // loop): a signal that comes meanwhile is written to that history only when the task ends.
  const task = await env.client.connection.withDeadline(Date.now() + 10_000, () =>
    env.client.workflowService.pollWorkflowTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue },
      identity: 'a worker slow with its task',
    }),
  );
  expect(task.taskToken?.length).toBeGreaterThan(0);
  await new Promise((r) => setTimeout(r, 300)); // the listener reading both histories
  const until = Date.now() + 60_000;
  const sent = Date.now();
  publisher.publish(until);
  await waitFor(() => (heard.includes(until) ? true : undefined), { timeoutMs: 3000, intervalMs: 5 });
  const lag = Date.now() - sent;
  const account = await env.client.workflow.getHandle(workflowId).fetchHistory();
  const signaled = (account.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'rateLimited');
  expect(signaled).toHaveLength(0); // still behind the task (10 s): the hold came from the mailbox
  expect(lag).toBeLessThan(1000);
  await stop();
}, 30_000);

it('follows the hold mailbox across its runs: once one has timed out, a hold reaches the listener through the next', async () => {
  const { publisher, heard, mailbox, stop } = await publisherAndListener('account-unpolled', 2000);
  // The listener starts the mailbox; its run times out after 2 s, and the listener starts the next.
  const runId = async () => (await mailbox.describe().catch(() => null))?.runId;
  const first = await waitFor(runId, { timeoutMs: 5000, intervalMs: 50 });
  await waitFor(async () => ((await runId()) !== first ? true : undefined), { timeoutMs: 10_000, intervalMs: 100 });
  const until = Date.now() + 60_000;
  publisher.publish(until);
  await waitFor(() => (heard.includes(until) ? true : undefined), { timeoutMs: 3000, intervalMs: 10 });
  const runs: string[] = [];
  for await (const run of env.client.workflow.list({ query: `WorkflowId = '${mailbox.workflowId}'` })) runs.push(run.status.name);
  expect(runs).toContain('TIMED_OUT');
  await stop();
}, 30_000);

it('pools the fresh answers workers report, and a worker started later knows the noise before its first call', async () => {
  const taskQueue = `account-${randomUUID()}`;
  const first = await account(taskQueue);
  await first.fleet.subscribe(() => undefined);
  // Every tenth fresh answer a 429: 60 answers, as from short-lived workers, in three reports.
  for (let i = 1; i <= 60; i++) {
    first.fleet.reportFresh({ answers: 1, limited: i % 10 === 0 ? 1 : 0 });
    if (i % 20 === 0) await new Promise((r) => setTimeout(r, FRESH_REPORT_MS + 500));
  }
  // Reports the workflow ignores: too old to say anything of now, and not a count.
  await first.handle.signal(accountFreshAnswersSignal, { answers: 100, limited: 100, at: Date.now() - FRESH_MAX_AGE_MS - 1000 });
  await first.handle.signal(accountFreshAnswersSignal, { answers: 5, limited: 9, at: Date.now() });
  await reportsInHistory(first.handle, 5);
  await saveFixture(first.handle, 'account-fresh-answers');

  const logged: Array<{ message: string; meta: Record<string, unknown> }> = [];
  const later = fleetRateLimits({ client: env.client, taskQueue, workflowId: first.handle.workflowId, log: silentLog });
  await callPacing({ mode: 'adaptive' }, later, { info: (message, meta) => logged.push({ message, meta }) });
  expect(later.recordedFresh()).toEqual({ answers: 60, limited: 6 });
  expect(logged).toEqual([{ message: 'shipping API: 429s no pace causes', meta: { share: 0.1 } }]);
  await later.close();
  await first.stop();
}, 60_000);

it('reads the pool a continued run carried over, and pools it as the workflow does (at most 300 answers)', async () => {
  const taskQueue = `account-${randomUUID()}`;
  const first = await account(taskQueue);
  // The input of a run continued as new: the hold, and the pool of the run before.
  await env.client.workflow.start(ACCOUNT_WORKFLOW_TYPE, {
    taskQueue,
    workflowId: first.handle.workflowId,
    args: [{ notBefore: 0, fresh: { answers: 300, limited: 30, at: Date.now() } }],
  });
  await first.handle.signal(accountFreshAnswersSignal, { answers: 300, limited: 0, at: Date.now() });
  await reportsInHistory(first.handle, 1);
  const later = fleetRateLimits({ client: env.client, taskQueue, workflowId: first.handle.workflowId, log: silentLog });
  await later.subscribe(() => undefined);
  expect(later.recordedFresh()).toEqual({ answers: 300, limited: 15 });
  expect(poolFresh({ answers: 300, limited: 30, at: 1 }, { answers: 300, limited: 0, at: 2 })).toEqual({
    answers: 300,
    limited: 15,
    at: 2,
  });
  expect(poolFresh(null, { answers: 0, limited: 0, at: 1 })).toBeNull();
  expect(poolFresh(null, { answers: Number.NaN, limited: 0, at: 1 })).toBeNull();
  await later.close();
  await first.stop();
}, 30_000);

it('hands a worker that had 429s lately the pool again every 10 s, with the answers other workers reported since it started', async () => {
  const taskQueue = `account-${randomUUID()}`;
  const learner = await account(taskQueue);
  await learner.fleet.subscribe(() => undefined);
  expect(learner.fleet.recordedFresh()).toEqual({ answers: 0, limited: 0 });
  const adopted: Array<{ answers: number; limited: number }> = [];
  let limited = true;
  learner.fleet.watchFresh(
    () => limited,
    (answers) => adopted.push(answers),
  );
  const other = fleetRateLimits({ client: env.client, taskQueue, workflowId: learner.handle.workflowId, log: silentLog });
  await other.subscribe(() => undefined);
  for (let i = 1; i <= 40; i++) other.reportFresh({ answers: 1, limited: i % 10 === 0 ? 1 : 0 });
  await other.close(); // reports what it has left
  await waitFor(() => adopted.at(-1), { timeoutMs: FRESH_READ_MS + 5_000 });
  expect(adopted.at(-1)).toEqual({ answers: 40, limited: 4 });
  // A worker without 429s lately reads nothing.
  limited = false;
  const count = adopted.length;
  await new Promise((r) => setTimeout(r, FRESH_READ_MS + 1000));
  expect(adopted.length).toBe(count);
  await learner.stop();
}, 60_000);

// The account workflow continues as new every 2,000 events (four workers' reports fill a run in
// about 90 s); a worker's reports must reach the run that follows, whether it was reporting
// through the continue-as-new or started after it (through start's own handle, which names the
// run it found as the chain's first, no update reached a later run: the worker paced alone).
it("a worker's pace reports get shares from the run after a continue-as-new, and so do a worker's started after it", async () => {
  const taskQueue = `account-${randomUUID()}`;
  const first = await account(taskQueue);
  const report = { want: 2, accepted: 1, limited: 0 };
  const later = fleetRateLimits({ client: env.client, taskQueue, workflowId: first.handle.workflowId, log: silentLog });
  try {
    expect(await first.fleet.pace(report)).not.toBeNull();
    const run = (await first.handle.describe()).runId;
    // Fresh-answer reports until the run continues as new, a pace report among them.
    let signals = 0;
    while ((await first.handle.describe()).runId === run) {
      await Promise.all(
        Array.from({ length: 200 }, () => first.handle.signal(accountFreshAnswersSignal, { answers: 1, limited: 0, at: Date.now() })),
      );
      await first.fleet.pace(report);
      signals += 200;
      expect(signals, 'the account workflow never continued as new').toBeLessThan(5000);
    }
    // The reporting worker: a report may meet the run closing, the next ones the new run.
    const after: unknown[] = [];
    for (let i = 0; i < 5; i++) after.push(await first.fleet.pace(report));
    expect(after.slice(-3).every((grant) => grant !== null)).toBe(true);
    expect(await later.pace(report)).not.toBeNull();
  } finally {
    await later.close();
    await first.stop();
  }
}, 120_000);
