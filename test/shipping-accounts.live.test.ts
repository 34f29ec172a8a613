/**
 * Many shipping accounts in one fleet, through a real worker process (`worker/main.ts` with
 * SHIPPING_ACCOUNTS_FILE), the real import and status commands, the dev server and the fake
 * serving two accounts: "sandbox" (the two headers, credentials in files) and "production"
 * (Bearer, with its shipperAccountId). Each shipment calls its shop's account only; one
 * account's Retry-After holds none of the other's; a shop moved to another account moves only
 * its new shipments; rotated credential files are used without a restart and appear nowhere.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { shipmentWorkflowId } from '../domain/shipment';
import { labelIdempotencyKey } from '../activities/shipping-api';
import { stateQuery } from '../workflow-definitions/shipment';
import { shardOf, trackingPollerId } from '../workflow-definitions/tracking-poller';
import { TRACKING_POLLER_DEFAULTS } from '../config/settings';
import { accountWorkflowId } from '../pacing/fleet-rate-limit';
import type { Io } from '../client/cli-support';
import { cancelCommand } from '../client/commands/cancel';
import { statusCommand } from '../client/commands/status';
import { importCommand } from '../client/import/main';
import { captureIo } from './helpers/cli';
import { saveFixture } from './helpers/fixtures';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { killWorkerProcesses, startWorkerProcess, type WorkerProcess } from './helpers/worker-process';
import { prebuiltBundlePath } from './helpers/workflow-bundle';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'accounts-live-'));
let bundle = '';
const accountsFile = path.join(tmp, 'accounts.json');
const taskQueue = `accounts-${randomUUID()}`;
const SECRETS = ['key-sb-old-1', 'token-sb-old-1', 'access-pr-1', 'key-sb-new-2', 'token-sb-new-2'];
let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;
let worker: WorkerProcess;

function writeAccounts(shops: Record<string, string>): void {
  writeFileSync(
    accountsFile,
    JSON.stringify({
      accounts: {
        sandbox: { baseUrl: fake.baseUrl, apiKeyFile: 'sandbox.key', apiTokenFile: 'sandbox.token' },
        production: { baseUrl: fake.baseUrl, auth: 'bearer', accessTokenFile: 'production.token', shipperAccountId: 'SA-42' },
      },
      shops,
      defaultAccount: 'sandbox',
    }),
  );
}

/** Replaced as a secret mount or `mv` replaces a file: a new inode under the same name. */
function replaceFile(name: string, text: string): void {
  writeFileSync(path.join(tmp, `${name}.new`), text);
  renameSync(path.join(tmp, `${name}.new`), path.join(tmp, name));
}

const cliEnv = () => ({ TEMPORAL_ADDRESS: env.address, TEMPORAL_TASK_QUEUE: taskQueue, SHIPPING_ACCOUNTS_FILE: accountsFile });

/** The import command (in this process, with its own environment), as an operator runs it. */
async function importOrders(...orders: Array<[string, string]>): Promise<void> {
  const file = path.join(tmp, `orders-${randomUUID()}.ndjson`);
  writeFileSync(file, orders.map(([shop, id]) => JSON.stringify(order(shop, id))).join('\n'));
  const run = captureIo({ env: cliEnv() });
  expect(await importCommand([file], run.io)).toBe(0);
}

async function command(run: (argv: string[], io: Io) => Promise<number>, argv: string[]): Promise<{ code: number; stdout: string }> {
  const out = captureIo({ env: cliEnv() });
  const code = await run(argv, out.io);
  return { code, stdout: out.stdout() };
}

const labelOf = (shop: string, orderId: string) =>
  fake.labels().find((l) => l.idempotencyKey === labelIdempotencyKey({ shop, orderId, revision: 1 }));

/** Waits until the shipment polls tracking, `polls` polls after `after` (ms since epoch) at least. */
async function polling(shop: string, orderId: string, polls = 2, after = 0): Promise<string> {
  const label = await waitFor(() => labelOf(shop, orderId), { timeoutMs: 30_000, what: `label of ${orderId}` });
  await waitFor(() => (fake.requestLog().filter((r) => r.id === label.id && r.at > after).length > polls ? true : undefined), {
    timeoutMs: 30_000,
    what: `polls of ${orderId}`,
  });
  return label.id;
}

beforeAll(async () => {
  bundle = prebuiltBundlePath();
  env = await createTestEnv();
  fake = await startFakeShippingApi({
    trackingStepMs: 3_600_000, // tracking never moves: every shipment keeps polling
    accounts: [
      { name: 'sandbox', apiKey: 'key-sb-old-1', apiToken: 'token-sb-old-1' },
      { name: 'production', auth: 'bearer', accessToken: 'access-pr-1', shipperAccountId: 'SA-42' },
    ],
  });
  writeFileSync(path.join(tmp, 'sandbox.key'), 'key-sb-old-1\n');
  writeFileSync(path.join(tmp, 'sandbox.token'), 'token-sb-old-1\n');
  writeFileSync(path.join(tmp, 'production.token'), 'access-pr-1\n');
  writeAccounts({ 'north-shop': 'production' });
  worker = await startWorkerProcess({
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    SHIPPING_ACCOUNTS_FILE: accountsFile,
    TRACKING_POLL_INTERVAL: '300ms',
    WORKFLOW_BUNDLE_PATH: bundle,
    LOG_FORMAT: 'json',
  });
}, 120_000);

afterAll(async () => {
  killWorkerProcesses();
  await fake?.close();
  await env?.teardown();
  rmSync(tmp, { recursive: true, force: true });
});

it('calls each shop’s account only, with that account’s credentials; the import preflights against it; status shows it', async () => {
  await importOrders(['north-shop', 'N-1'], ['south-shop', 'S-1']);
  const north = await polling('north-shop', 'N-1');
  const south = await polling('south-shop', 'S-1');
  expect(labelOf('north-shop', 'N-1')!.account).toBe('production');
  expect(labelOf('south-shop', 'S-1')!.account).toBe('sandbox');
  const log = fake.requestLog();
  // Every call about a label came with its own account's credentials; none was refused.
  expect(log.filter((r) => r.id === north).every((r) => r.account === 'production')).toBe(true);
  expect(log.filter((r) => r.id === south).every((r) => r.account === 'sandbox')).toBe(true);
  expect(log.filter((r) => r.status === 401 || r.status === 403)).toEqual([]);
  // The preflight read each account's couriers.
  expect(new Set(log.filter((r) => r.endpoint === 'GET /couriers').map((r) => r.account))).toEqual(new Set(['production', 'sandbox']));

  const status = await command(statusCommand, ['north-shop', 'N-1']);
  expect(status.stdout).toMatch(/Shipping account +production/);
  const handle = env.client.workflow.getHandle(shipmentWorkflowId({ shop: 'north-shop', orderId: 'N-1' }));
  expect((await handle.query(stateQuery)).account).toBe('production');
  const cancel = await command(cancelCommand, ['--wait', 'north-shop', 'N-1']);
  expect(cancel.code).toBe(0);
  await saveFixture(handle, 'accounts-named-account-cancelled');
}, 90_000);

it('the fleet’s tracking pollers poll each account’s labels with that account’s credentials, from shards of its own', async () => {
  await importOrders(['north-shop', 'P-N'], ['south-shop', 'P-S']);
  const since = Date.now();
  const labels = { production: await polling('north-shop', 'P-N', 3), sandbox: await polling('south-shop', 'P-S', 3) };
  const polls = fake.requestLog().filter((r) => r.endpoint === 'GET /tracking' && r.at >= since);
  for (const [account, labelId] of Object.entries(labels)) {
    // Counted per account at the fake: each label's polls came with its own account's credentials only.
    const ofLabel = polls.filter((r) => r.id === labelId);
    expect(ofLabel.length).toBeGreaterThanOrEqual(3);
    expect(ofLabel.filter((r) => r.account !== account)).toEqual([]);
  }
  expect(fake.requestLog().filter((r) => r.status === 401 || r.status === 403)).toEqual([]);
  for (const [shop, orderId, account] of [
    ['north-shop', 'P-N', 'production'],
    ['south-shop', 'P-S', 'sandbox'],
  ] as const) {
    const workflowId = shipmentWorkflowId({ shop, orderId });
    const handle = env.client.workflow.getHandle(workflowId);
    // Polled by a shard of its account, not by an activity of its own.
    const shard = trackingPollerId(taskQueue, shardOf(workflowId, TRACKING_POLLER_DEFAULTS.shards), account);
    expect((await handle.query(stateQuery)).trackingPoller).toBe(shard);
    expect(shard).toContain(`/${account}-`);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'awaitTrackingChange')).toEqual([]);
    expect((await env.client.workflow.getHandle(shard).describe()).status.name).toBe('RUNNING');
  }
  const north = env.client.workflow.getHandle(shipmentWorkflowId({ shop: 'north-shop', orderId: 'P-N' }));
  expect((await command(cancelCommand, ['--wait', 'north-shop', 'P-N'])).code).toBe(0);
  await saveFixture(north, 'fleet-named-account-cancelled');
}, 90_000);

it('holds one account for its Retry-After without slowing the other’s shipments', async () => {
  fake.setFaults({ failNext: [{ endpoint: 'POST /labels', account: 'sandbox', status: 429, retryAfter: '10' }] });
  await importOrders(['south-shop', 'S-2']);
  const held = await waitFor(() => fake.requestLog().find((r) => r.status === 429 && r.account === 'sandbox'), {
    timeoutMs: 30_000,
    what: 'the sandbox 429',
  });
  const asked = Date.now();
  await importOrders(['north-shop', 'N-2']);
  const north = await waitFor(() => labelOf('north-shop', 'N-2'), { timeoutMs: 30_000, what: 'the production label' });
  // Production's label came at once while sandbox was held, and sandbox sent nothing inside its Retry-After.
  expect(Date.parse(north.createdAt) - asked).toBeLessThan(5000);
  expect(Date.parse(north.createdAt)).toBeLessThan(held.at + 10_000);
  expect(fake.requestLog().filter((r) => r.account === 'sandbox' && r.at > held.at + 200 && r.at < held.at + 9800)).toEqual([]);
  // Each account has its own fleet pacer: the hold was relayed on sandbox's account workflow only.
  const signals = async (name: string) => {
    const id = accountWorkflowId({ name, baseUrl: fake.baseUrl }, taskQueue);
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'rateLimited').length;
  };
  expect(await signals('sandbox')).toBeGreaterThanOrEqual(1);
  expect(await signals('production')).toBe(0);
  await waitFor(() => labelOf('south-shop', 'S-2'), { timeoutMs: 30_000, what: 'the sandbox label after its hold' });
}, 90_000);

it('moves only new shipments when a shop moves to another account', async () => {
  await importOrders(['east-shop', 'E-1']);
  const before = await polling('east-shop', 'E-1');
  writeAccounts({ 'north-shop': 'production', 'east-shop': 'production' });
  const moved = Date.now();
  await importOrders(['east-shop', 'E-2']);
  await polling('east-shop', 'E-2');
  await polling('east-shop', 'E-1', 2, moved);
  expect(labelOf('east-shop', 'E-1')!.account).toBe('sandbox');
  expect(labelOf('east-shop', 'E-2')!.account).toBe('production');
  expect(fake.requestLog().filter((r) => r.id === before && r.account !== 'sandbox')).toEqual([]);
}, 90_000);

it('rotates file credentials without a restart: at most one refused call, no credential in logs or histories', async () => {
  await polling('south-shop', 'S-1');
  const pid = worker.child.pid;
  replaceFile('sandbox.key', 'key-sb-new-2\n');
  replaceFile('sandbox.token', 'token-sb-new-2\n');
  fake.rotateCredentials('sandbox', { apiKey: 'key-sb-new-2', apiToken: 'token-sb-new-2' });
  const rotated = Date.now();
  await importOrders(['south-shop', 'S-3']);
  await polling('south-shop', 'S-3');
  await polling('south-shop', 'S-1', 3, rotated);
  expect(fake.requestLog().filter((r) => r.status === 401).length).toBeLessThanOrEqual(1);
  expect(worker.child.pid).toBe(pid);
  expect(worker.child.exitCode).toBeNull();
  await waitFor(() => (worker.output().includes('shipping account credentials reloaded') ? true : undefined), {
    what: 'the reload line',
  });
  // The credentials, old and new, are in no log line, workflow history or the accounts settings the worker logged.
  const histories = await Promise.all(
    [
      ['south-shop', 'S-1'],
      ['south-shop', 'S-3'],
      ['north-shop', 'N-1'],
    ].map(async ([shop, orderId]) =>
      JSON.stringify(await env.client.workflow.getHandle(shipmentWorkflowId({ shop: shop!, orderId: orderId! })).fetchHistory()),
    ),
  );
  for (const secret of SECRETS) {
    expect(worker.output()).not.toContain(secret);
    for (const history of histories) expect(history).not.toContain(secret);
  }
  expect(readFileSync(accountsFile, 'utf8')).not.toContain('key-sb');
}, 90_000);
