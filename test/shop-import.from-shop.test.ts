/**
 * `import --from` against slow and busy stores: a read that fails in passing is read again with
 * the schedule's rules until the deadline; only a refusal ends it; an order listed again later in
 * the same read is taken in its newer version. The last test is the target: 300 orders of
 * a store answering 4 % of reads 429/503/502, through the real CLI and a real dev server.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../client/cli-support';
import { Listing, readShop } from '../client/import/from-shop';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { loadShopConnectors } from '../platforms/connectors';
import type { ImportConnector } from '../platforms/order-source';
import { runCli } from './helpers/cli';
import { createTestEnv } from './helpers/temporal-env';

const MAPPING = {
  shippingMethods: {
    Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
    flat_rate: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
    free_shipping: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
  },
  units: { weight: 'kg', dimension: 'cm' },
};
const SHIP_FROM = { address: { streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' } };

let shopify: FakeShopify;
let woo: FakeWooCommerce;
let config: Record<string, unknown>;

beforeAll(async () => {
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  const imported = { every: '1h', overlap: '2m', firstPull: '1d', paused: true }; // no tick of the schedule mid-test
  config = {
    'from-shopify': {
      type: 'shopify',
      storeDomain: 'fake-store.myshopify.com',
      adminUrl: shopify.baseUrl,
      accessToken: 'shpat_fake_dev_token',
      timeout: '2s',
      import: { ...imported, pageSize: 4, mapping: { ...MAPPING, orderIdPrefix: 'S-' } },
    },
    'from-woo': {
      type: 'woocommerce',
      url: woo.baseUrl,
      consumerKey: 'ck_fake_dev_key',
      consumerSecret: 'cs_fake_dev_secret',
      timeout: '2s',
      import: { ...imported, pageSize: 10, mapping: { ...MAPPING, shipFrom: SHIP_FROM, orderIdPrefix: 'W-' } },
    },
  };
});
afterAll(async () => {
  await Promise.all([shopify?.close(), woo?.close()]);
});

function connector(shop: string, extra: Record<string, unknown> = {}): ImportConnector {
  const entries = { ...config, [shop]: { ...(config[shop] as object), ...extra } };
  return loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(entries) }).connectorFor(shop) as ImportConnector;
}

async function readAll(c: ImportConnector, deadlineInMs = 60_000) {
  const waits: string[] = [];
  const input = readShop(c, Date.now() - 10 * 60_000, new AbortController().signal, {
    deadline: Date.now() + deadlineInMs,
    onWait: (line) => waits.push(line),
  });
  const records: Array<{ platformOrderId: string }> = [];
  for await (const r of input.records) records.push(r as unknown as { platformOrderId: string });
  return { records, waits, skipped: input.skipped() };
}

describe('import --from reads through passing failures', () => {
  it('WooCommerce: a 500, a 504, then 503 and 429 with Retry-After are each read again, as the pull is; every order comes', async () => {
    const ids = Array.from({ length: 12 }, () => woo.createOrder({ status: 'processing', lineItems: [{ sku: 'A', quantity: 1 }] }).id);
    woo.setFaults({
      failNext: [
        { route: 'GET orders', kind: '500' },
        { route: 'GET orders', kind: '504' },
        { route: 'GET orders', kind: '503', retryAfterSeconds: 1 },
        { route: 'GET orders', kind: '429', retryAfterSeconds: 1 },
      ],
    });
    const { records, waits } = await readAll(connector('from-woo'));
    expect(waits).toHaveLength(4);
    // As the pull's retry policy: 2 s doubling by attempt, a Retry-After exactly.
    expect(waits[0]).toMatch(/HTTP 500.*; reading again in 2 s \(failure 1 in a row, deadline /);
    expect(waits[1]).toMatch(/reading again in 4 s \(failure 2 in a row/);
    expect(waits[2]).toMatch(/the shop asked to wait 1 s \(HTTP 503\); reading again in 1 s \(failure 3 in a row/);
    expect(waits[3]).toMatch(/\(HTTP 429\); reading again in 1 s/);
    for (const id of ids) expect(records.map((r) => r.platformOrderId)).toContain(String(id));
    expect(woo.stats().callsBeforeRetryAfter).toBe(0);
  });

  it('Shopify: three THROTTLED answers in a row and a 500 are waited out', async () => {
    const ids = Array.from({ length: 6 }, () => shopify.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] }).legacyResourceId);
    shopify.setFaults({
      failNext: [
        { operation: 'orders', kind: 'throttled' },
        { operation: 'orders', kind: 'throttled' },
        { operation: 'orders', kind: 'throttled' },
        { operation: 'orders', kind: '500' },
      ],
    });
    const { records, waits } = await readAll(connector('from-shopify'));
    expect(waits.length).toBeGreaterThanOrEqual(1);
    for (const id of ids) expect(records.map((r) => r.platformOrderId)).toContain(id);
  });

  it('a refusal ends it at once; a passing failure past the deadline ends it with the deadline named', async () => {
    const refused = await readAll(connector('from-woo', { consumerSecret: 'cs_wrong' })).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CliError);
    expect((refused as CliError).exitCode).toBe(2);
    woo.setFaults({ failNext: [{ route: 'GET orders', kind: '429', retryAfterSeconds: 30 }] });
    const late = await readAll(connector('from-woo'), 5_000).catch((e: unknown) => e);
    expect((late as CliError).exitCode).toBe(5);
    expect((late as CliError).message).toMatch(/the --deadline \(.+\) comes first; try again later/);
  });
});

it('an order listed again later in the same read is taken in its newer version; one already given is left out', () => {
  const listing = new Listing();
  // Page 1: the held order is skipped, 7 others need labels.
  const page1 = [{ platformOrderId: 'held' }, ...Array.from({ length: 7 }, (_, i) => ({ platformOrderId: `o${i}` }))];
  expect(listing.unseen(page1)).toHaveLength(8);
  listing.took({ records: page1.slice(1), skipped: [page1[0]!] });
  expect(listing.skipped()).toBe(1);
  // The last page: the released order (now needing a label) and o3, edited meanwhile.
  const last = [{ platformOrderId: 'o3' }, { platformOrderId: 'held' }];
  expect(listing.unseen(last)).toEqual([{ platformOrderId: 'held' }]);
  listing.took({ records: [{ platformOrderId: 'held' }], skipped: [] });
  expect(listing.skipped()).toBe(0);
});

describe('the target', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await createTestEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it('import --from of 300 orders against a store answering 4 % of reads 429/503/502: exit 0, every order started', async () => {
    const store = await startFakeWooCommerce({ seed: 27 });
    try {
      // The generator's sticker product has no weight until an order sets one (as the import bench does).
      store.createOrder({ status: 'completed', lineItems: [{ sku: 'GEN-STICKERS', quantity: 1, weight: '0.02' }] });
      store.generateOrders({
        count: 300,
        seed: 27,
        spreadSeconds: 3_000,
        endGmt: new Date(Date.now() - 60_000).toISOString().slice(0, 19),
      });
      store.setFaults({ rateLimitedRate: 0.015, unavailableRate: 0.015, badGatewayRate: 0.01, retryAfterSeconds: 1 });
      const shops = { 'from-woo': { ...(config['from-woo'] as object), url: store.baseUrl } };
      const run = await runCli(['import', '--from', 'from-woo', '--since', '2h', '--skip-preflight', '--max-backlog', '0', '--json'], {
        env: {
          TEMPORAL_ADDRESS: env.address,
          TEMPORAL_NAMESPACE: 'default',
          // No worker: the shipments are started, not run.
          TEMPORAL_TASK_QUEUE: `from-shop-${randomUUID()}`,
          SHOP_CONNECTORS: JSON.stringify(shops),
        },
        timeoutMs: 180_000,
      });
      expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
      const summary = JSON.parse(run.stdout);
      const stats = store.stats();
      expect(stats.rateLimited + stats.unavailable + stats.gatewayTimeouts, JSON.stringify(stats)).toBeGreaterThan(0);
      const generated = store.orders().filter((o) => o.status === 'processing');
      const needLabels = generated.filter((o) => o.shippingMethod.methodId !== 'local_pickup').length;
      expect(summary.counts.started).toBe(needLabels);
      expect(summary.counts.started + summary.skipped).toBe(300);
      expect(run.stderr).toMatch(/passing failures are read again until/);
      expect(run.stderr).toMatch(/reading again in \d+ s/);
    } finally {
      await store.close();
    }
  });
});
