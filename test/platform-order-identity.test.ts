/**
 * A platform order has one identity whatever form it arrives in: Shopify's GraphQL id in a file,
 * its legacy id in a pull. Through the real CLI (a child process), a real dev server and the fake
 * Shopify store over loopback: a file names two orders the GraphQL way, then `import --from` of the
 * same shop finds them already known instead of refusing them as another platform order's.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { runCli, REPO_ROOT } from './helpers/cli';
import { createTestEnv } from './helpers/temporal-env';

const SHOP = 'identity-shopify';
let shopify: FakeShopify;
let env: TestWorkflowEnvironment;

beforeAll(async () => {
  [shopify, env] = await Promise.all([startFakeShopify(), createTestEnv()]);
});
afterAll(async () => {
  await Promise.all([shopify?.close(), env?.teardown()]);
});

it('orders imported from a file by their GraphQL id are already known to import --from, not another order', async () => {
  const ids = Array.from(
    { length: 3 },
    () => shopify.createOrder({ lineItems: [{ sku: 'BEAN-1', quantity: 1, grams: 500 }] }).legacyResourceId,
  );
  const connectors = {
    [SHOP]: {
      type: 'shopify',
      storeDomain: 'fake-store.myshopify.com',
      adminUrl: shopify.baseUrl,
      accessToken: 'shpat_fake_dev_token',
      timeout: '2s',
      import: {
        every: '1h',
        paused: true,
        mapping: {
          orderId: 'id',
          orderIdPrefix: 'ID-',
          shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } },
          defaultService: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
          units: { weight: 'kg', dimension: 'cm' },
        },
      },
    },
  };
  const cliEnv = {
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: 'default',
    // No worker: the shipments are started, not run.
    TEMPORAL_TASK_QUEUE: `identity-${randomUUID()}`,
    SHOP_CONNECTORS: JSON.stringify(connectors),
  };
  // An example record's label request, under this shop's order ids: two GraphQL ids, one legacy id.
  const example = JSON.parse(readFileSync(path.join(REPO_ROOT, 'examples/platform-orders.ndjson'), 'utf8').split('\n')[1]!);
  const records = ids.map((id, i) => ({
    ...example,
    shop: SHOP,
    orderId: `ID-${id}`,
    platformOrderId: i < 2 ? `gid://shopify/Order/${id}` : id,
  }));
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'identity-')), 'orders.ndjson');
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');

  const fromFile = await runCli(['import', file, '--skip-preflight', '--json'], { env: cliEnv, timeoutMs: 120_000 });
  expect(fromFile.code, `${fromFile.stderr}\n${fromFile.stdout}`).toBe(0);
  expect(JSON.parse(fromFile.stdout).counts.started).toBe(3);

  const pulled = await runCli(['import', '--from', SHOP, '--since', '2h', '--skip-preflight', '--json'], {
    env: cliEnv,
    timeoutMs: 120_000,
  });
  expect(pulled.code, `${pulled.stderr}\n${pulled.stdout}`).toBe(0);
  const summary = JSON.parse(pulled.stdout);
  expect(JSON.stringify(summary.rejections ?? [])).not.toMatch(/already belongs to platform order/);
  expect(summary.counts.alreadyKnown).toBe(3);
  expect(summary.counts.started).toBe(0);

  // The shipment keeps the one id the pulls read, whichever form the file gave.
  const memo = (await env.client.workflow.getHandle(`shipment-${SHOP}-ID-${ids[0]}`).describe()).memo;
  expect(memo?.platformOrderId).toBe(ids[0]);
});
