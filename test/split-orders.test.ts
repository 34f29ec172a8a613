/**
 * One order, several parcels: a Shopify order whose open fulfillment orders are at two locations
 * ships as one label per location (each its own key) and one fulfillment per location, under the
 * order's one workflow; an order larger than the page query reads is read in pages. On the real
 * dev server with a real worker, the local Shopify fake and the fake shipping API over loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { applySchedule, importShops } from '../shop-import/schedule';
import { loadShopConnectors } from '../platforms/connectors';
import { defaultPayloadConverter } from '@temporalio/common';
import { parcelWorkflowId, shipmentWorkflowId, type ShipmentInput } from '../domain/shipment';
import { stateQuery, type ShipmentOutcome, type ShipmentState } from '../workflow-definitions/shipment';
import { startHarness, type Harness } from './helpers/harness';
import { pullNow } from './helpers/shop-pulls';
import { runCli } from './helpers/cli';
import { saveFixture } from './helpers/fixtures';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { holdLabelsBack, labelsHeldBack } from './helpers/held-back';

const SHOP = 'split-shopify';

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let h: Harness;

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  const connectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: '1s',
      [SHOP]: {
        type: 'shopify',
        storeDomain: 'fake-store.myshopify.com',
        adminUrl: shopify.baseUrl,
        accessToken: 'shpat_fake_dev_token',
        timeout: '2s',
        import: {
          every: '1h',
          paused: true, // only the test's triggers pull: no tick of the schedule mid-test
          overlap: '2m',
          firstPull: '1d',
          // The cancel test follows what the pull tells; the labels' own check (shop-check-before-label.test.ts) would race it.
          checkBeforeLabel: false,
          mapping: { orderIdPrefix: 'P-', shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } } },
        },
      },
    }),
  });
  h = await startHarness({ env, shopConnectors: connectors, fake: { trackingStepPolls: 1 } });
  for (const connector of importShops(connectors)) await applySchedule(h.env.client, connector, h.taskQueue);
});
afterAll(async () => {
  await h?.stop();
  await shopify?.close();
  await env?.teardown();
});

const lines = (n: number, grams = 300) => Array.from({ length: n }, (_, i) => ({ sku: `PART-${i}`, quantity: 1, grams }));

function place(seed: Parameters<FakeShopify['createOrder']>[0]) {
  const o = shopify.createOrder(seed);
  const orderId = `P-${o.name.replace('#', '')}`;
  return { id: o.legacyResourceId, orderId, number: o.name, workflowId: shipmentWorkflowId({ shop: SHOP, orderId }) };
}

const handle = (workflowId: string) => h.env.client.workflow.getHandle(workflowId);
const labelsOf = (order: { number: string }) => h.fake.labels().filter((l) => l.customerOrderNumber === order.number);
/** The number of item lines in a parcel workflow's label request (its input, first event of its history). */
async function labelItems(workflowId: string): Promise<number> {
  const first = (await handle(workflowId).fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  const input = defaultPayloadConverter.fromPayload<ShipmentInput>(first);
  return input.labelRequest.shipment.parcels!.reduce((n, p) => n + (p.items?.length ?? 0), 0);
}

/** The shop's view of the order once it holds two fulfillments, both delivered. */
async function twoDeliveredFulfillments(order: { id: string }) {
  return await waitFor(
    () => {
      const view = shopify.order(order.id)!;
      return view.fulfillments.length === 2 && view.fulfillments.every((f) => f.events.at(-1)?.status === 'DELIVERED') ? view : undefined;
    },
    { what: 'two delivered fulfillments', timeoutMs: 15_000 },
  );
}

const cliEnv = () => ({ TEMPORAL_ADDRESS: h.env.address, TEMPORAL_NAMESPACE: 'default', ...h.shippingEnv });

describe('an order at two locations', () => {
  it('ships as two labels with their own keys, two fulfillments of one location each, both tracked to delivered', async () => {
    const order = place({ lineItems: lines(3), splitLocations: true });
    const pulled = await pullNow(h.env.client, SHOP);
    expect(pulled.counts.started).toBe(1);
    expect(pulled.counts.rejected ?? 0).toBe(0);

    const outcome = (await handle(order.workflowId).result()) as ShipmentOutcome;
    expect(outcome.outcome).toBe('delivered');
    expect(outcome.parcels!.map((p) => [p.location, p.outcome])).toEqual([
      ['1', 'delivered'],
      ['2', 'delivered'],
    ]);

    const labels = labelsOf(order);
    expect(labels.map((l) => l.idempotencyKey).sort()).toEqual([`${SHOP}:${order.orderId}@1:r1`, `${SHOP}:${order.orderId}@2:r1`]);
    // Each fulfillment is one location's: the fake refuses fulfillment orders of two locations in one call.
    const view = await twoDeliveredFulfillments(order);
    expect(view.fulfillments.map((f) => f.trackingInfo[0]?.number).sort()).toEqual(outcome.parcels!.map((p) => p.trackingNumber).sort());
    expect(view.fulfillmentOrders.map((fo) => fo.status)).toEqual(['CLOSED', 'CLOSED']);
    expect(view.displayFulfillmentStatus).toBe('FULFILLED');

    // status shows each parcel; the parent's Web UI details list them.
    const status = await runCli(['status', SHOP, order.orderId], { env: cliEnv() });
    expect(status.stdout).toMatch(/Parcels +2/);
    expect(status.stdout).toMatch(/Main warehouse .*delivered/);
    expect(status.stdout).toMatch(/Second warehouse .*delivered/);
    // The order's own workflow makes no label: the account shown is its parcels'.
    expect(status.stdout).toMatch(/Shipping account +default \(its parcels' labels\)/);
    expect(status.stdout).toMatch(/Main warehouse .*account default/);
    // list: one row for the order, one per parcel, each marked.
    const list = await runCli(['list', '--shop', SHOP, '--json'], { env: cliEnv() });
    const rows = (JSON.parse(list.stdout).shipments as Array<{ orderId: string; parcel: string | null; status: string }>).filter(
      (r) => r.orderId === order.orderId,
    );
    expect(rows.map((r) => r.parcel).sort()).toEqual(['1', '2', null]);
    const table = await runCli(['list', '--shop', SHOP], { env: cliEnv() });
    expect(table.stdout).toMatch(/^SHOP\s+ORDER\s+PARCEL\s+COURIER/);
    expect(table.stdout).toMatch(new RegExp(`${order.orderId}\\s+2\\s`));

    await saveFixture(handle(order.workflowId), 'split-shopify-two-locations-order');
    await saveFixture(handle(parcelWorkflowId(order.workflowId, '2')), 'split-shopify-two-locations-parcel');
  });

  it('a cancel in the shop while the labels are held back reaches both parcels: no label at all', async () => {
    const release = holdLabelsBack(h.fake);
    const order = place({ lineItems: lines(2), splitLocations: true });
    try {
      await pullNow(h.env.client, SHOP);
      for (const location of ['1', '2'])
        await waitFor(
          async () => {
            const s: ShipmentState | null = await handle(parcelWorkflowId(order.workflowId, location))
              .query(stateQuery)
              .catch(() => null); // not started yet
            return s?.phase === 'creating_label' ? s : undefined;
          },
          { what: `parcel ${location} waiting for its label`, timeoutMs: 20_000, intervalMs: 100 },
        );
      await waitFor(async () => (labelsHeldBack(h.fake, order.number) >= 2 ? true : undefined), { what: 'both parcels’ labels held back' });
      // A resubmit goes to a parcel (--parcel): the order's workflow refuses it, naming its parcels.
      const toOrder = await runCli(['resubmit', SHOP, order.orderId, 'examples/corrected-label.json'], { env: cliEnv() });
      expect(toOrder.stdout + toOrder.stderr).toMatch(/ships as 2 parcels: resubmit one with --parcel <location> \(1: Main warehouse/);
      const toParcel = await runCli(['resubmit', '--parcel', '2', SHOP, order.orderId, 'examples/corrected-label.json'], { env: cliEnv() });
      expect(toParcel.stdout + toParcel.stderr).toMatch(/the shipment is creating_label, not awaiting corrected label data/);
      shopify.cancelOrder(order.id);
      expect((await pullNow(h.env.client, SHOP)).counts.changed).toBe(1);
      const outcome = (await handle(order.workflowId).result()) as ShipmentOutcome;
      expect(outcome.outcome).toBe('cancelled_in_shop');
      expect(outcome.parcels!.map((p) => p.outcome)).toEqual(['cancelled_in_shop', 'cancelled_in_shop']);
      expect(labelsOf(order).filter((l) => l.status === 'created')).toEqual([]);
      expect(shopify.order(order.id)!.fulfillments).toEqual([]);
      await saveFixture(handle(order.workflowId), 'split-shopify-cancelled-before-labels');
    } finally {
      release();
    }
  });
});

describe('lines the merchant moves between locations (fulfillmentOrderMove)', () => {
  const LOCATION_3 = 'gid://shopify/Location/3';
  /** Labels the API made for the order, by idempotencyKey: how many each. */
  const labelsByKey = (order: { number: string }) =>
    labelsOf(order)
      .filter((l) => l.status === 'created')
      .reduce<Record<string, number>>((n, l) => ({ ...n, [l.idempotencyKey]: (n[l.idempotencyKey] ?? 0) + 1 }), {});

  it('each location ends with exactly the labels its lines need: none where the lines left, one where they went, one after the change where they changed', async () => {
    // Lines PART-0 and PART-1 at location 1, PART-2 and PART-3 at location 2; labels held back so the moves meet both parcels before their labels.
    const release = holdLabelsBack(h.fake);
    const order = place({ lineItems: lines(4), splitLocations: true });
    const key = (location: string, revision: number) => `${SHOP}:${order.orderId}@${location}:r${revision}`;
    try {
      expect((await pullNow(h.env.client, SHOP)).counts.started).toBe(1);
      await waitFor(async () => (labelsHeldBack(h.fake, order.number) >= 2 ? true : undefined), {
        what: 'both parcels’ labels held back',
        timeoutMs: 20_000,
      });
      const [atOne, atTwo] = shopify.order(order.id)!.fulfillmentOrders;
      // Location 2's whole fulfillment order moves to location 3 (the same fulfillment order, reassigned) ...
      const movedWhole = shopify.moveFulfillmentOrder(atTwo!.id, LOCATION_3);
      expect(movedWhole.fulfillmentOrders.find((fo) => fo.id === atTwo!.id)!.locationId).toBe(LOCATION_3);
      // ... and one of location 1's two lines too (a new fulfillment order at location 3; the original keeps the other).
      const moved = shopify.moveFulfillmentOrder(atOne!.id, LOCATION_3, [{ id: atOne!.lineItems[1]!.id, quantity: 1 }]);
      expect(moved.fulfillmentOrders.map((fo) => [fo.locationId, fo.lineItems.map((l) => l.sku)])).toEqual([
        ['gid://shopify/Location/1', ['PART-0']],
        [LOCATION_3, ['PART-2', 'PART-3']],
        [LOCATION_3, ['PART-1']],
      ]);
      expect((await pullNow(h.env.client, SHOP)).counts.changed).toBe(1);
      // Read again: the same reading starts nothing and tells nothing.
      expect((await pullNow(h.env.client, SHOP)).counts.changed ?? 0).toBe(0);
      // Released once both label requests as changed are asked for (a label made before a change reached its parcel is the after-the-label case).
      const heldKeys = () =>
        new Set(
          h.fake
            .requestLog()
            .filter((r) => r.endpoint === 'POST /labels' && r.status === 429)
            .map((r) => r.idempotencyKey),
        );
      await waitFor(() => (heldKeys().has(key('1', 2)) && heldKeys().has(key('3', 1)) ? true : undefined), {
        what: 'the labels of location 1 (next revision) and location 3 asked for',
        timeoutMs: 15_000,
      });
    } finally {
      release();
    }

    const outcome = (await handle(order.workflowId).result()) as ShipmentOutcome;
    expect(outcome.parcels!.map((p) => [p.location, p.outcome, p.labelId === null ? 'no label' : 'label'])).toEqual([
      ['1', 'delivered', 'label'],
      ['2', 'cancelled_in_shop', 'no label'],
      ['3', 'delivered', 'label'],
    ]);
    // The parcel whose lines all left has no say in the order's outcome.
    expect(outcome.outcome).toBe('delivered');
    // One label per location with lines: location 1 under its next revision (its lines changed), location 3 new; none for location 2.
    expect(labelsByKey(order)).toEqual({ [key('1', 2)]: 1, [key('3', 1)]: 1 });
    expect(
      h.fake
        .requestLog()
        .filter((r) => r.endpoint === 'POST /labels' && r.status < 300 && r.idempotencyKey?.startsWith(key('2', 1).slice(0, -2))),
    ).toEqual([]);
    // Location 3's parcel started with its three lines; location 1's took its one remaining line into its next revision.
    expect(await labelItems(parcelWorkflowId(order.workflowId, '3'))).toBe(3);
    const one = await handle(parcelWorkflowId(order.workflowId, '1')).query(stateQuery);
    expect(one.shopOrder!.changes.at(-1)!.action).toMatch(/the changed order is taken into the label request/);
    const two = await handle(parcelWorkflowId(order.workflowId, '2')).query(stateQuery);
    expect(two.shopOrder!.changes.at(-1)!.action).toMatch(/its lines moved to another location in the shop: stops without a label/);
    // The shop: one fulfillment per location with lines, each with its parcel's tracking number; every fulfillment order closed.
    const view = await twoDeliveredFulfillments(order);
    expect(view.fulfillments.map((f) => [f.locationId, f.trackingInfo[0]?.number]).sort()).toEqual(
      [
        ['gid://shopify/Location/1', outcome.parcels![0]!.trackingNumber],
        [LOCATION_3, outcome.parcels![2]!.trackingNumber],
      ].sort(),
    );
    expect(view.fulfillmentOrders.map((fo) => fo.status)).toEqual(['CLOSED', 'CLOSED', 'CLOSED']);
    // A closed fulfillment order cannot move (Shopify refuses it too).
    expect(() => shopify.moveFulfillmentOrder(atOneId(view), 'gid://shopify/Location/2')).toThrow(/closed and cannot be moved/);
    expect(labelsByKey(order)).toEqual({ [key('1', 2)]: 1, [key('3', 1)]: 1 });

    await saveFixture(handle(order.workflowId), 'split-shopify-lines-moved-order');
    await saveFixture(handle(parcelWorkflowId(order.workflowId, '2')), 'split-shopify-lines-moved-parcel-left');
    await saveFixture(handle(parcelWorkflowId(order.workflowId, '3')), 'split-shopify-lines-moved-parcel-added');
  });
});

const atOneId = (view: { fulfillmentOrders: Array<{ id: string; locationId: string }> }) =>
  view.fulfillmentOrders.find((fo) => fo.locationId === 'gid://shopify/Location/1')!.id;

describe('an order larger than a page', () => {
  it('5 fulfillment orders of 26 lines (130) are read in pages and ship as one label per location with every line', async () => {
    const order = place({ lineItems: lines(130, 10), fulfillmentOrderCount: 5 });
    shopify.resetStats();
    const pulled = await pullNow(h.env.client, SHOP);
    expect(pulled.counts.started).toBe(1);
    // The page query reads 2 fulfillment orders of 10 lines; the rest came in pages: the order's, then each one's lines.
    expect(shopify.stats().byOperation.fulfillmentOrder).toBeGreaterThanOrEqual(5);
    const outcome = (await handle(order.workflowId).result()) as ShipmentOutcome;
    expect(outcome.outcome).toBe('delivered');
    expect(labelsOf(order)).toHaveLength(2);
    // Fulfillment orders 0, 2, 4 are at location 1 (78 lines), 1 and 3 at location 2 (52): each parcel's label has every one of its lines.
    const items = await Promise.all(['1', '2'].map((location) => labelItems(parcelWorkflowId(order.workflowId, location))));
    expect(items).toEqual([78, 52]);
    await waitFor(() => (shopify.order(order.id)!.fulfillmentOrders.every((fo) => fo.status === 'CLOSED') ? true : undefined), {
      what: 'every fulfillment order closed',
      timeoutMs: 15_000,
    });
    expect(shopify.order(order.id)!.fulfillments).toHaveLength(2);
  });
});
