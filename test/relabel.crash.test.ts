/**
 * A relabel from the shop through real worker processes: `resubmit --from-shop` made the new
 * label, and the worker is SIGKILLed while the new tracking number is written to the shop (the
 * store applies the write at once and holds its answer, so the kill loses it). A new worker
 * process finishes: exactly two labels (r1, r2), the shop shows the new number exactly once and
 * the replaced one no more, the shipment ends delivered.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../client/cli';
import { shipmentWorkflowId } from '../domain/shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { stateQuery, type ShipmentOutcome, type ShipmentState } from '../workflow-definitions/shipment';
import { captureIo } from './helpers/cli';
import { TEST_CREDENTIALS } from './helpers/harness';
import { pullNow } from './helpers/shop-pulls';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { holdTrackingBack } from './helpers/api';
import { killWorkerProcesses, startWorkerProcess, workerEnv, type WorkerProcess } from './helpers/worker-process';

let env: TestWorkflowEnvironment;
let api: FakeShippingApi;
let shopify: FakeShopify;
let woo: FakeWooCommerce;
/** The worker serving the shops' task queue: each test kills it and starts the next. */
let worker: WorkerProcess;
const taskQueue = `relabel-crash-${randomUUID()}`;

beforeAll(async () => {
  env = await createTestEnv();
  // A tracking stage every 2 s: the number comes 4 s after the label, delivery 8 s after.
  api = await startFakeShippingApi({ port: 0, trackingStepMs: 2000, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  worker = await startWorker();
});
afterAll(async () => {
  killWorkerProcesses();
  await Promise.all([api?.close(), shopify?.close(), woo?.close()]);
  await env?.teardown();
});

const IMPORT = {
  every: '1h',
  paused: true, // only the test's triggers pull
  firstPull: '1d',
  mapping: {
    shippingMethods: {
      Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
      flat_rate: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
    },
    shipFrom: { address: { streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' } },
  },
};

function startWorker(): Promise<WorkerProcess> {
  return startWorkerProcess({
    ...workerEnv(env.address, taskQueue, api.baseUrl),
    TRACKING_POLL_INTERVAL: '200ms',
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: '1s',
      'rc-shopify': {
        type: 'shopify',
        storeDomain: 'fake-store.myshopify.com',
        adminUrl: shopify.baseUrl,
        accessToken: 'shpat_fake_dev_token',
        timeout: '2s',
        import: { ...IMPORT, mapping: { ...IMPORT.mapping, orderIdPrefix: 'RCS-' } },
      },
      'rc-woo': {
        type: 'woocommerce',
        url: woo.baseUrl,
        consumerKey: 'ck_fake_dev_key',
        consumerSecret: 'cs_fake_dev_secret',
        timeout: '2s',
        import: { ...IMPORT, mapping: { ...IMPORT.mapping, orderIdPrefix: 'RCW-' } },
      },
    }),
  });
}

interface Platform {
  shop: string;
  place(): { id: string; orderId: string; number: string };
  moveTo(id: string, postalCode: string): void;
  /** The tracking numbers the order shows: the fulfillments', or the tracking items'. */
  shownTracking(id: string): string[];
  /** The write of a tracking number is applied at once, its answer held 20 s. */
  holdTrackingWrite(): void;
  /** Writes that put a tracking number on the order, as the store applied them. */
  trackingWrites(): number;
  delivered(id: string): boolean;
}

const platforms: Array<[string, Platform]> = [
  [
    'Shopify',
    {
      shop: 'rc-shopify',
      place() {
        const o = shopify.createOrder({ lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }], shippingAddress: { zip: '51147' } });
        return { id: o.legacyResourceId, orderId: `RCS-${o.name.replace('#', '')}`, number: o.name };
      },
      moveTo: (id, zip) => void shopify.editOrder(id, { shippingAddress: { zip } }),
      shownTracking: (id) => shopify.order(id)!.fulfillments.flatMap((f) => f.trackingInfo.map((t) => t.number!)),
      holdTrackingWrite: () =>
        void shopify.setFaults({ failNext: [{ operation: 'fulfillmentTrackingInfoUpdate', kind: 'slow', delayMs: 20_000 }] }),
      trackingWrites: () => shopify.stats().mutationsApplied.fulfillmentTrackingInfoUpdate ?? 0,
      delivered: (id) => shopify.order(id)!.fulfillments.some((f) => f.displayStatus === 'DELIVERED'),
    },
  ],
  [
    'WooCommerce',
    {
      shop: 'rc-woo',
      place() {
        const o = woo.createOrder({
          status: 'processing',
          lineItems: [{ sku: 'PORT-10', quantity: 1, weight: '1.5' }],
          shipping: { postcode: '1100-001', country: 'PT', city: 'Lisboa', address_1: 'Rua Nova 3' },
        });
        return { id: String(o.id), orderId: `RCW-${o.number}`, number: o.number };
      },
      moveTo: (id, postcode) => void woo.editOrder(Number(id), { shipping: { postcode } }),
      shownTracking: (id) => woo.order(Number(id))!.trackingItems.map((t) => t.tracking_number),
      holdTrackingWrite: () => void woo.setFaults({ failNext: [{ route: 'POST shipment-trackings', kind: 'slow', delayMs: 20_000 }] }),
      trackingWrites: () => woo.stats().writesApplied['POST shipment-trackings'] ?? 0,
      delivered: (id) => woo.order(Number(id))!.status === 'completed',
    },
  ],
];

const stateOf = (workflowId: string): Promise<ShipmentState> => env.client.workflow.getHandle(workflowId).query(stateQuery);
const until = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined) =>
  waitFor(async () => (await probe()) ?? undefined, { what, timeoutMs: 30_000, intervalMs: 100 });

describe.each(platforms)('%s', (_name, p) => {
  it('a worker killed while the new tracking number is written: two labels, the number shown once, delivered', async () => {
    const order = p.place();
    const workflowId = shipmentWorkflowId({ shop: p.shop, orderId: order.orderId });
    expect((await pullNow(env.client, p.shop)).counts.started).toBe(1);
    const r1 = await until('the first label with its number', async () => {
      const s = await stateOf(workflowId).catch(() => undefined);
      return s?.trackingNumber ? s : undefined;
    });
    const releaseTracking = holdTrackingBack(api);
    try {
      await until('the first number in the shop', () => (p.shownTracking(order.id).length === 1 ? true : undefined));
      expect(p.shownTracking(order.id)).toEqual([r1.trackingNumber]);

      p.moveTo(order.id, '20095');
      expect((await pullNow(env.client, p.shop)).counts.changed).toBe(1);
      const writesBefore = p.trackingWrites();
      p.holdTrackingWrite();
      const { io, stdout, stderr } = captureIo({
        env: { TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: 'default', ...workerEnv(env.address, taskQueue, api.baseUrl) },
      });
      const code = await main(['resubmit', p.shop, order.orderId, '--from-shop'], io);
      expect(code, stdout() + stderr()).toBe(0);
      expect(stdout()).toMatch(/Label created: .* \(revision 2, key .*:r2\)/);
      releaseTracking();

      // The new number reaches the store; its answer is held, and the worker dies before hearing it.
      const r2 = await until('the new number in the shop', () =>
        p.trackingWrites() > writesBefore ? p.shownTracking(order.id).find((n) => n !== r1.trackingNumber) : undefined,
      );
      worker.child.kill('SIGKILL');
      expect(await worker.exited).toBeNull();
      worker = await startWorker();

      const outcome = (await env.client.workflow.getHandle(workflowId).result()) as ShipmentOutcome;
      expect(outcome.outcome).toBe('delivered');
      expect(outcome.trackingNumber).toBe(r2);
      const labels = api.labels().filter((l) => l.customerOrderNumber === order.number);
      expect(labels.map((l) => [l.idempotencyKey.replace(/^.*:/, ''), l.shipToPostalCode])).toEqual([
        ['r1', p.shop === 'rc-shopify' ? '51147' : '1100-001'],
        ['r2', '20095'],
      ]);
      await until('the order delivered in the shop', () => (p.delivered(order.id) ? true : undefined));
      // Once: the write the kill interrupted was not applied again, and the replaced number is gone.
      expect(p.shownTracking(order.id)).toEqual([r2]);
      expect(p.trackingWrites() - writesBefore).toBe(1);
    } finally {
      releaseTracking();
    }
  }, 120_000);
});
