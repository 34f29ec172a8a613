/**
 * A rollout through real worker processes of two builds on a real dev server. Build A (today's
 * workflows) runs shipments in several phases: tracking, waiting for corrected label data, and
 * making a label behind a shipping API that answers 429. Build B (test/helpers/workflows-build-b.ts)
 * changes the shipment incompatibly: it sleeps before its label. After `deployment promote B`:
 * no workflow task fails (no non-determinism), every A shipment finishes on A (pinned), new
 * shipments run on B, `deployment status` shows A draining to 0, A's worker stops and retires,
 * and every shipment ends delivered.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { main } from '../client/cli';
import { describeDeployment } from '../worker-deployment/deployments';
import { defaultBuildId } from '../config/deployment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startShipment } from '../order-import/start-shipment';
import { WORKFLOW_CODE } from '../worker-deployment/workflow-bundle';
import { resubmitLabelUpdate, stateQuery, type ShipmentOutcome } from '../workflow-definitions/shipment';
import { captureIo } from './helpers/cli';
import { labelRequest, order } from './helpers/orders';
import { TEST_CREDENTIALS } from './helpers/harness';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { killWorkerProcesses, startWorkerProcess, workerEnv, type WorkerProcess } from './helpers/worker-process';

let env: TestWorkflowEnvironment;
let api: FakeShippingApi;
let dir: string;
const taskQueue = `rollout-${randomUUID()}`;
const deployment = `rollout-${randomUUID().slice(0, 8)}`;
const shop = 'rollout';

beforeAll(async () => {
  env = await createTestEnv();
  // A tracking stage every 3 s: a shipment tracks for 12 s, long enough to be caught mid-way.
  api = await startFakeShippingApi({ port: 0, trackingStepMs: 3000, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
  dir = await mkdtemp(path.join(tmpdir(), 'rollout-'));
});
afterAll(async () => {
  killWorkerProcesses();
  await api?.close();
  await env?.teardown();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A worker process of the bundle in `file`, as a version of the test's deployment. */
function startBuild(file: string, becomeCurrent: 'if-none' | 'never'): Promise<WorkerProcess> {
  return startWorkerProcess({
    ...workerEnv(env.address, taskQueue, api.baseUrl),
    TRACKING_POLL_INTERVAL: '200ms',
    WORKFLOW_BUNDLE_PATH: file,
    WORKER_VERSIONING: 'on',
    WORKER_DEPLOYMENT_NAME: deployment,
    WORKER_BECOME_CURRENT: becomeCurrent,
  });
}

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo({ env: { TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: 'default', WORKER_DEPLOYMENT_NAME: deployment } });
  const code = await main(args, c.io).catch((err: { exitCode?: number; message: string }) => {
    c.io.stderr.write(err.message);
    return err.exitCode ?? 1;
  });
  return { code, out: c.stdout(), err: c.stderr() };
}

/** The build ids of the workflow tasks a shipment's history records, and whether any task failed. */
async function buildsOf(workflowId: string): Promise<{ builds: Set<string>; failedTasks: number; firstCommand: string | undefined }> {
  const builds = new Set<string>();
  let failedTasks = 0;
  let firstCommand: string | undefined;
  // Every run of the chain (a continue-as-new would show as a second run).
  for await (const run of env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history = await env.client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    for (const event of history.events ?? []) {
      const done = event.workflowTaskCompletedEventAttributes;
      if (done?.deploymentVersion?.buildId) builds.add(done.deploymentVersion.buildId);
      if (event.workflowTaskFailedEventAttributes) failedTasks += 1;
      if (
        !firstCommand &&
        (event.activityTaskScheduledEventAttributes || event.timerStartedEventAttributes || event.markerRecordedEventAttributes)
      )
        firstCommand = event.timerStartedEventAttributes ? 'timer' : 'activity';
    }
  }
  return { builds, failedTasks, firstCommand };
}

const phaseOf = async (workflowId: string) => (await env.client.workflow.getHandle(workflowId).query(stateQuery)).phase;
const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 40_000) =>
  waitFor(probe, { what, timeoutMs, intervalMs: 200 });

it('promotes build B while build A holds shipments in every phase: A drains to 0 on A, new ones run on B, nothing fails or is lost', async () => {
  const codeA = (await getWorkflowBundle()).code;
  const codeB = (
    await bundleWorkflowCode({
      ...WORKFLOW_CODE,
      workflowsPath: path.join(__dirname, 'helpers', 'workflows-build-b.ts'),
      logger: new DefaultLogger('ERROR'),
    })
  ).code;
  const [buildA, buildB] = [defaultBuildId(codeA), defaultBuildId(codeB)];
  expect(buildA).not.toBe(buildB);
  await writeFile(path.join(dir, 'a.js'), codeA);
  await writeFile(path.join(dir, 'b.js'), codeB);

  const workerA = await startBuild(path.join(dir, 'a.js'), 'if-none');
  await until('build A current', async () => ((await describeDeployment(env.client, deployment))?.current === buildA ? true : undefined));
  // B polls beside A from here on, and gets nothing until it is promoted.
  const workerB = await startBuild(path.join(dir, 'b.js'), 'never');

  // On A: two tracking, one waiting for corrected label data, two making their label behind 429s.
  const start = async (orderId: string, o: Parameters<typeof order>[2] = {}) =>
    (await startShipment(env.client, taskQueue, order(shop, orderId, o))).workflowId;
  const tracking = [await start('A-TRACK-1'), await start('A-TRACK-2')];
  const correction = await start('A-FIX-1', { postalCode: '00000' });
  await until('A tracking', async () => ((await Promise.all(tracking.map(phaseOf))).every((p) => p === 'tracking') ? true : undefined));
  await until('A awaiting correction', async () => ((await phaseOf(correction)) === 'awaiting_correction' ? true : undefined));
  api.setFaults({ rateLimitedRate: 1, rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 1 }, endpoints: ['POST /labels'] });
  const throttled = [await start('A-LABEL-1'), await start('A-LABEL-2')];
  await until('A labels throttled', async () =>
    (await Promise.all(throttled.map((id) => env.client.workflow.getHandle(id).describe()))).every((d) =>
      d.raw.pendingActivities?.some((a) => (a.attempt ?? 0) > 1),
    )
      ? true
      : undefined,
  );
  const onA = [...tracking, correction, ...throttled];

  const promoted = await cli('deployment', 'promote', buildB);
  expect(promoted, promoted.err).toMatchObject({ code: 0 });
  const status = await cli('deployment', 'status', '--json');
  expect(JSON.parse(status.out)).toMatchObject({ current: buildB });

  // The per-build view before anything drained: all five of A's shipments, by phase.
  const onBuildA = await until('A shipments visible', async () => {
    const view = JSON.parse((await cli('deployment', 'shipments', buildA, '--json')).out) as { total: number; byStatus: object };
    return view.total === onA.length ? view : undefined;
  });
  expect(onBuildA.byStatus).toMatchObject({ tracking: 2, awaiting_correction: 1 });

  const onB = [await start('B-NEW-1'), await start('B-NEW-2')];
  api.setFaults({ rateLimitedRate: 0, endpoints: null });
  await env.client.workflow
    .getHandle(correction)
    .executeUpdate(resubmitLabelUpdate, { args: [{ labelRequest: labelRequest('A-FIX-1'), reason: 'postal code fixed' }] });

  const outcomes = await Promise.all(
    [...onA, ...onB].map(async (id) => [id, (await env.client.workflow.getHandle(id).result()) as ShipmentOutcome] as const),
  );
  for (const [id, outcome] of outcomes) expect(outcome.outcome, id).toBe('delivered');

  for (const id of onA) expect(await buildsOf(id), id).toEqual({ builds: new Set([buildA]), failedTasks: 0, firstCommand: 'activity' });
  for (const id of onB) expect(await buildsOf(id), id).toEqual({ builds: new Set([buildB]), failedTasks: 0, firstCommand: 'timer' });

  // The per-build view: A drained (visibility follows the server by a moment).
  const drained = await until('A drained in deployment status', async () => {
    // The server answers a describe from its deployment's own workflow, which can be slow to: asked again.
    const answer = await cli('deployment', 'status', '--json');
    if (answer.code !== 0) return undefined;
    const view = JSON.parse(answer.out) as { builds: Array<{ buildId: string; status: string; open: Record<string, number> }> };
    const a = view.builds.find((b) => b.buildId === buildA)!;
    // Pinned shipments and pulls drain; pollers move on by themselves at their next task.
    return a.open.shipmentWorkflow === 0 && a.open.shopPullWorkflow === 0 ? a : undefined;
  });
  expect(drained.status).toBe('DRAINING');
  expect((await cli('deployment', 'shipments', buildA, '--json')).out).toContain('"total":0');

  workerA.child.kill('SIGTERM');
  expect(await workerA.exited).toBe(0);
  // After A is gone, a shipment still finishes (on B).
  const late = await start('B-LATE-1');
  expect(((await env.client.workflow.getHandle(late).result()) as ShipmentOutcome).outcome).toBe('delivered');
  expect((await buildsOf(late)).builds).toEqual(new Set([buildB]));

  // Retire: refused while current; for A, nothing runs there any more.
  expect((await cli('deployment', 'retire', buildB)).code).toBe(1);
  const retired = await cli('deployment', 'retire', buildA);
  expect(retired.err).not.toContain('still runs');
  workerB.child.kill('SIGTERM');
  expect(await workerB.exited).toBe(0);
}, 180_000);
