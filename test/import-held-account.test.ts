/**
 * An import of orders for several shipping accounts while one of them is held by a Retry-After:
 * the import command as its own process (`npm run cli -- import`), a dev server, and the fake API
 * serving three accounts, the held one the accounts file's default. The preflight waits the
 * hold out (saying so) up to --deadline; the other accounts' orders are started either way.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { shipmentWorkflowId } from '../domain/shipment';
import { runCli } from './helpers/cli';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'import-held-'));
const ACCOUNTS = ['alpha', 'beta', 'gamma'] as const;
const SHOPS = { 'alpha-shop': 'alpha', 'beta-shop': 'beta', 'gamma-shop': 'gamma' } as const;
let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;
let accountsFile: string;

beforeAll(async () => {
  env = await createTestEnv();
  fake = await startFakeShippingApi({ accounts: ACCOUNTS.map((name) => ({ name, apiKey: `key-${name}`, apiToken: `token-${name}` })) });
  const accounts: Record<string, unknown> = {};
  for (const name of ACCOUNTS) {
    writeFileSync(path.join(tmp, `${name}.key`), `key-${name}\n`);
    writeFileSync(path.join(tmp, `${name}.token`), `token-${name}\n`);
    accounts[name] = { baseUrl: fake.baseUrl, apiKeyFile: `${name}.key`, apiTokenFile: `${name}.token` };
  }
  accountsFile = path.join(tmp, 'accounts.json');
  // alpha-shop is in no list: it falls back to the default account, alpha.
  writeFileSync(accountsFile, JSON.stringify({ accounts, shops: { 'beta-shop': 'beta', 'gamma-shop': 'gamma' }, defaultAccount: 'alpha' }));
});
afterAll(async () => {
  await fake?.close();
  await env?.teardown();
  rmSync(tmp, { recursive: true, force: true });
});

/** 30 orders, 10 a shop, interleaved; the file and the ids. */
function ordersFile(run: string): { file: string; ids: Array<{ shop: string; orderId: string }> } {
  const ids = Array.from({ length: 30 }, (_, i) => ({ shop: Object.keys(SHOPS)[i % 3]!, orderId: `${run}-${i}` }));
  const file = path.join(tmp, `${run}.ndjson`);
  writeFileSync(file, ids.map(({ shop, orderId }) => JSON.stringify(order(shop, orderId))).join('\n'));
  return { file, ids };
}

async function started(ids: Array<{ shop: string; orderId: string }>): Promise<Set<string>> {
  const found = new Set<string>();
  for (const id of ids) {
    const described = await env.client.workflow
      .getHandle(shipmentWorkflowId(id))
      .describe()
      .catch(() => null);
    if (described) found.add(`${id.shop}/${id.orderId}`);
  }
  return found;
}

function importWith(file: string, ...args: string[]) {
  const taskQueue = `import-held-${randomUUID()}`;
  return runCli(['import', file, ...args], {
    env: { TEMPORAL_ADDRESS: env.address, TEMPORAL_TASK_QUEUE: taskQueue, SHIPPING_ACCOUNTS_FILE: accountsFile },
    timeoutMs: 60_000,
  });
}

it('waits out a short hold of the default account before its orders, saying so, and starts every order', async () => {
  fake.setFaults({ failNext: [{ endpoint: 'GET /couriers', account: 'alpha', status: 429, retryAfter: '2' }] });
  const { file, ids } = ordersFile(`short-${randomUUID().slice(0, 8)}`);
  const run = await importWith(file, '--max-backlog', '0');
  expect(run.stderr).toMatch(
    /preflight of shipping account "alpha": GET \/couriers: the account is held \(429, Retry-After 2 s\); reading again then/,
  );
  expect(run.code, run.stderr).toBe(0);
  expect((await started(ids)).size).toBe(30);
  const couriers = fake.requestLog().filter((r) => r.endpoint === 'GET /couriers' && r.account === 'alpha');
  const limited = couriers.findIndex((r) => r.status === 429);
  expect(couriers[limited + 1]!.receivedAt - couriers[limited]!.at).toBeGreaterThanOrEqual(2_000);
}, 90_000);

it('with the default account held past --deadline, starts the other accounts’ orders and reports its own as failed to start (exit 3)', async () => {
  fake.setFaults({ failNext: [{ endpoint: 'GET /couriers', account: 'alpha', status: 429, retryAfter: '600' }] });
  const { file, ids } = ordersFile(`long-${randomUUID().slice(0, 8)}`);
  const run = await importWith(file, '--max-backlog', '0', '--deadline', '3s');
  expect(run.code, run.stderr).toBe(3);
  expect(run.stderr).toContain('the orders of shipping account "alpha" wait for its preflight');
  expect(run.stderr).toMatch(/failed to start .*alpha-shop.*--deadline/);
  // One report per account: why, how many, and the command that starts them (the others are skipped then).
  expect(run.stdout).toContain(
    'Shipping account "alpha": 10 orders not started, its preflight could not be read: cannot read GET /couriers:',
  );
  expect(run.stdout).toContain(`run again: npm run cli -- import --no-encryption ${file} --max-backlog 0 --deadline 3s`);
  expect(run.stdout).not.toMatch(/Shipping account "(beta|gamma)"/);
  const ok = await started(ids);
  expect([...ok].sort()).toEqual(
    ids
      .filter((id) => id.shop !== 'alpha-shop')
      .map((id) => `${id.shop}/${id.orderId}`)
      .sort(),
  );
}, 90_000);

it("backs off a 5xx of the default account's couriers and of another account's products, saying so, and starts every order", async () => {
  fake.setFaults({
    failNext: [
      { endpoint: 'GET /couriers', account: 'alpha', status: 503 },
      { endpoint: 'GET /products', account: 'beta', status: 500 },
    ],
  });
  const { file, ids } = ordersFile(`fivexx-${randomUUID().slice(0, 8)}`);
  const run = await importWith(file, '--max-backlog', '0', '--json');
  expect(run.stderr).toMatch(
    /preflight of shipping account "alpha": GET \/couriers: .*\(HTTP 503\); reading again in 1 s \(failure 1 in a row/,
  );
  expect(run.stderr).toMatch(/preflight of shipping account "beta": GET \/products\?courier=\S+: .*\(HTTP 500\); reading again in 1 s/);
  expect(run.code, run.stderr).toBe(0);
  expect((JSON.parse(run.stdout) as { notStarted: unknown[] }).notStarted).toEqual([]);
  expect((await started(ids)).size).toBe(30);
}, 60_000);

it('`couriers` and `products` back off a 5xx, saying so, and list', async () => {
  fake.setFaults({
    failNext: [
      { endpoint: 'GET /couriers', account: 'beta', status: 502 },
      { endpoint: 'GET /products', account: 'beta', status: 500 },
    ],
  });
  const apiEnv = { SHIPPING_API_BASE_URL: fake.baseUrl, SHIPPING_API_KEY: 'key-beta', SHIPPING_API_TOKEN: 'token-beta' };
  const couriers = await runCli(['couriers', '--json'], { env: apiEnv });
  expect(couriers.stderr).toMatch(/GET \/couriers: .*\(HTTP 502\); reading again in 1 s/);
  expect(couriers.code, couriers.stderr).toBe(0);
  const [first] = (JSON.parse(couriers.stdout) as { couriers: Array<{ code: string }> }).couriers;
  const products = await runCli(['products', first!.code], { env: apiEnv });
  expect(products.stderr).toMatch(/GET \/products\?courier=\S+: .*\(HTTP 500\); reading again in 1 s/);
  expect(products.code, products.stderr).toBe(0);
}, 60_000);

it('`couriers` waits out a 429 of its account, saying so, and lists', async () => {
  fake.setFaults({ failNext: [{ endpoint: 'GET /couriers', account: 'beta', status: 429, retryAfter: '1' }] });
  const run = await runCli(['couriers', '--json'], {
    env: { SHIPPING_API_BASE_URL: fake.baseUrl, SHIPPING_API_KEY: 'key-beta', SHIPPING_API_TOKEN: 'token-beta' },
  });
  expect(run.stderr).toMatch(/GET \/couriers: the account is held \(429, Retry-After 1 s\); reading again then/);
  expect(run.code, run.stderr).toBe(0);
  expect((JSON.parse(run.stdout) as { couriers: unknown[] }).couriers.length).toBeGreaterThan(0);
}, 60_000);
