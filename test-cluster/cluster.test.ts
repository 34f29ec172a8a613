/**
 * The shipment path on the production topology: `npm run cluster` (PostgreSQL, the Temporal
 * server on it, the Web UI, the fake API and two worker processes on one task queue), driven
 * from outside as an operator would. The tests run in order against one cluster.
 */
import { spawnSync } from 'node:child_process';
import fs, { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { NAMESPACE_RETENTION_DAYS } from '../cluster/config';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from '../cluster/binaries';
import { TEMPORAL_CLI_VERSION } from '../dev-server/temporal-cli';
import { SEARCH_ATTRIBUTE_KEYS, type ShipmentOutcome } from '../workflow-definitions/shipment';
import { TEST_CREDENTIALS } from '../test/helpers/harness';
import { order } from '../test/helpers/orders';
import { waitFor } from '../test/helpers/wait';
import { startCluster, type RunningCluster } from '../cluster/process';

let cluster: RunningCluster;
let connection: Connection;
let client: Client;
let taskQueue: string;
let apiUrl: string;

beforeAll(async () => {
  cluster = await startCluster({
    workers: 2,
    trackingStepMs: 150,
    env: {
      TRACKING_POLL_INTERVAL: '200ms',
      // This test's client has no codec: the workers run in clear on purpose (else the cluster makes a key).
      PAYLOAD_ENCRYPTION: 'off',
      SHIPPING_API_KEY: TEST_CREDENTIALS.apiKey,
      SHIPPING_API_TOKEN: TEST_CREDENTIALS.apiToken,
    },
  });
  const status = await cluster.status();
  taskQueue = status.taskQueue;
  apiUrl = status.shippingApi;
  connection = await Connection.connect({ address: status.temporalAddress });
  client = new Client({ connection, namespace: status.namespace });
});

afterAll(async () => {
  await connection?.close();
  await cluster?.stop();
});

async function admin(pathname: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${apiUrl}/__admin/${pathname}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.ok).toBe(true);
  return res.json();
}

const setFaults = (faults: Record<string, unknown>) => admin('faults', faults);
const noFaults = () => setFaults({ latencyMs: 0, endpoints: null });

async function labelsOf(orderIds: string[]): Promise<Map<string, Array<{ idempotencyKey: string; id: string }>>> {
  const { labels } = (await admin('labels')) as { labels: Array<{ idempotencyKey: string; id: string; customerOrderNumber?: string }> };
  return new Map(orderIds.map((id) => [id, labels.filter((l) => l.customerOrderNumber === id)]));
}

async function startOrders(shop: string, orderIds: string[]) {
  return Promise.all(
    orderIds.map(async (orderId) => {
      const started = await startShipment(client, taskQueue, order(shop, orderId));
      return client.workflow.getHandle(started.workflowId);
    }),
  );
}

/** Every order delivered, with exactly one label under its first-revision key. */
async function expectDeliveredOnce(shop: string, orderIds: string[], handles: Array<{ result(): Promise<ShipmentOutcome> }>) {
  const results = await Promise.all(handles.map((h) => h.result()));
  expect(results.map((r) => r.outcome)).toEqual(orderIds.map(() => 'delivered'));
  const labels = await labelsOf(orderIds);
  for (const [i, orderId] of orderIds.entries()) {
    expect(labels.get(orderId)).toHaveLength(1);
    expect(labels.get(orderId)![0]!.idempotencyKey).toBe(`${shop}:${orderId}:r1`);
    expect(results[i]!.labelId).toBe(labels.get(orderId)![0]!.id);
  }
}

it('runs the server and UI versions the Temporal CLI v1.5.1 embeds (its go.mod)', () => {
  const download = spawnSync('go', ['mod', 'download', '-json', `github.com/temporalio/cli@${TEMPORAL_CLI_VERSION}`], { encoding: 'utf8' });
  expect(download.status, download.stderr).toBe(0);
  const goMod = readFileSync((JSON.parse(download.stdout) as { GoMod: string }).GoMod, 'utf8');
  expect(goMod).toMatch(new RegExp(`^\\s*go\\.temporal\\.io/server v${TEMPORAL_SERVER_VERSION.replace(/\./g, '\\.')}$`, 'm'));
  expect(goMod).toMatch(new RegExp(`^\\s*github\\.com/temporalio/ui-server/v2 v${TEMPORAL_UI_VERSION.replace(/\./g, '\\.')}$`, 'm'));
});

it('status lists every service running, at the pinned versions, with the namespace set up', async () => {
  const status = await cluster.status();
  expect(status.services.map((s) => [s.name, s.state])).toEqual([
    ['postgres', 'running'],
    ['temporal', 'running'],
    ['ui', 'running'],
    ['fake-api', 'running'],
    ['worker-1', 'running'],
    ['worker-2', 'running'],
  ]);
  expect(status.versions).toMatchObject({ temporalServer: TEMPORAL_SERVER_VERSION, ui: TEMPORAL_UI_VERSION });

  // The server itself says which version it is and that it runs on PostgreSQL.
  const info = await connection.workflowService.getSystemInfo({});
  expect(info.serverVersion).toBe(TEMPORAL_SERVER_VERSION);
  const ns = await connection.workflowService.describeNamespace({ namespace: status.namespace });
  expect(Number(ns.config?.workflowExecutionRetentionTtl?.seconds)).toBe(NAMESPACE_RETENTION_DAYS * 86_400);
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: status.namespace });
  expect(Object.keys(customAttributes ?? {}).sort()).toEqual(SEARCH_ATTRIBUTE_KEYS.map((k) => k.name).sort());

  const ui = await fetch(status.webUi);
  expect(ui.status).toBe(200);
  expect(await ui.text()).toContain('<html');

  const table = await cluster.cli('status');
  expect(table.status).toBe(0);
  expect(table.stdout).toMatch(/^worker-2\s+running\s+\d+/m);
});

it('ships orders end to end with two workers on the task queue, searchable in the SQL visibility store', async () => {
  const shop = 'e2e';
  const orderIds = Array.from({ length: 8 }, (_, i) => `E-${i + 1}`);
  const handles = await startOrders(shop, orderIds);
  await expectDeliveredOnce(shop, orderIds, handles);

  // Visibility in PostgreSQL answers queries on the project's search attributes.
  const found = await waitFor(
    async () => {
      const ids: string[] = [];
      for await (const wf of client.workflow.list({ query: `ShipmentShop = "${shop}" AND ShipmentStatus = "delivered"` }))
        ids.push(wf.workflowId);
      return ids.length === orderIds.length ? ids : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 500, what: 'visibility to list the delivered shipments' },
  );
  expect(found.sort()).toEqual(orderIds.map((id) => `shipment-${shop}-${id}`).sort());
});

it('a worker killed with SIGKILL while its labels are in flight: the other worker finishes, one label per order', async () => {
  const shop = 'kill';
  const orderIds = ['K-1', 'K-2', 'K-3', 'K-4'];
  // Only worker-1 runs while the orders start, so it holds every label request in flight.
  expect((await cluster.cli('stop', 'worker-2')).status).toBe(0);
  // The API creates each label at once but answers only after 60 s: the kill loses the answers.
  await setFaults({ latencyMs: 60_000, endpoints: ['POST /labels'] });
  try {
    const handles = await startOrders(shop, orderIds);
    await waitFor(async () => ([...(await labelsOf(orderIds)).values()].every((l) => l.length === 1) ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'every label to exist on the API',
    });
    expect((await cluster.cli('start', 'worker-2')).status).toBe(0);
    const worker1 = (await cluster.status()).services.find((s) => s.name === 'worker-1')!;
    process.kill(worker1.pid!, 'SIGKILL');
    await noFaults();

    await expectDeliveredOnce(shop, orderIds, handles);
    const after = (await cluster.status()).services.find((s) => s.name === 'worker-1')!;
    expect(after).toMatchObject({ state: 'exited', lastExit: 'killed by SIGKILL', pid: null });
    // The retried requests were answered from their keys, not created again.
    const stats = (await admin('stats')) as { idempotentReplays: number };
    expect(stats.idempotentReplays).toBeGreaterThanOrEqual(orderIds.length);
  } finally {
    await noFaults();
  }
  // Back to two workers for what follows.
  expect((await cluster.cli('start', 'worker-1')).status).toBe(0);
});

it('the Temporal server restarted in the middle of shipments: all complete, no duplicate label', async () => {
  const shop = 'restart';
  const orderIds = Array.from({ length: 6 }, (_, i) => `R-${i + 1}`);
  // Slow answers, so label requests and tracking polls are in flight when the server goes down.
  await setFaults({ latencyMs: 1_500, endpoints: ['POST /labels', 'GET /tracking'] });
  try {
    const handles = await startOrders(shop, orderIds);
    await waitFor(async () => ([...(await labelsOf(orderIds)).values()].some((l) => l.length === 1) ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'a first label to exist on the API',
    });
    const before = (await cluster.status()).services.find((s) => s.name === 'temporal')!;
    const restart = await cluster.cli('restart', 'temporal');
    expect(restart.status, restart.stderr).toBe(0);
    const after = (await cluster.status()).services.find((s) => s.name === 'temporal')!;
    expect(after.state).toBe('running');
    expect(after.restarts).toBe(before.restarts + 1);
    expect(after.pid).not.toBe(before.pid);
    await noFaults();
    await expectDeliveredOnce(shop, orderIds, handles);
  } finally {
    await noFaults();
  }
  // Both workers rode through the outage.
  expect((await cluster.status()).services.filter((s) => s.name.startsWith('worker-')).map((s) => s.state)).toEqual(['running', 'running']);
});

it('keeps every secret out of what it prints and writes, and `down` stops everything', async () => {
  const pgPassword = fs.readFileSync(path.join(cluster.dataDir, 'pg-password'), 'utf8').trim();
  expect(pgPassword.length).toBeGreaterThan(20);
  const serverConfig = fs.readFileSync(path.join(cluster.dataDir, 'temporal', 'cluster.yaml'), 'utf8');
  expect(serverConfig).not.toContain(pgPassword);
  expect(serverConfig).toContain('{{ env "TEMPORAL_SQL_PASSWORD" }}');

  const pids = (await cluster.status()).services.map((s) => s.pid).filter((p): p is number => p !== null);
  expect(pids.length).toBe(6);
  const down = await cluster.cli('down');
  expect(down.status, down.stderr).toBe(0);
  expect(await cluster.exited).toBe(0);
  for (const pid of pids) expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
  expect(fs.existsSync(path.join(cluster.dataDir, 'control.sock'))).toBe(false);
  expect((await cluster.cli('status')).status).toBe(3);

  const output = cluster.output();
  expect(output).toContain('All stopped.');
  for (const secret of [pgPassword, TEST_CREDENTIALS.apiKey, TEST_CREDENTIALS.apiToken]) expect(output).not.toContain(secret);
});
