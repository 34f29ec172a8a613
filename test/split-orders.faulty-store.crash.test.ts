/**
 * The shop boundary under faults, through real worker processes, the real dev server, the fake
 * shipping API and a fake Shopify store over loopback. The store answers every call 150 ms late,
 * throttles (Shopify's cost-based THROTTLED, sent as HTTP 429; a small bucket), fails some writes
 * (500, 503) and cuts the connection after one it applied; the worker is SIGKILLed while a
 * parcel's fulfillment write is on the wire (applied, answered 20 s later), and a new worker
 * process finishes.
 *
 * - Deliverable 6 (issue 45): a shipment started by `import --from` and fulfilled before the
 *   shop's first pull; that pull reads nothing yet sets the cursor, and the address the merchant
 *   moves afterwards reaches the shipment through the next pull.
 * - Deliverable 5: a split order whose lines move while both labels are held back: location 2's
 *   lines all go to location 3 (added after import), one of location 1's too. Location 1's label
 *   of its next revision and location 3's first go out through the kill. Each location ends with
 *   exactly the labels its lines need (counted by idempotencyKey at the API: none for location 2),
 *   one fulfillment per parcel at the store with its parcel's tracking, its events once and in
 *   order. Tracking is held until both fulfillments exist, so neither carries a number when the
 *   killed write is retried (the case that lost a parcel's tracking: write-back.ts findOurs).
 * - Every shipment's record of the merchant's readings is in reading order (`modifiedAt`, then
 *   `readAt`): no older reading was applied after a newer one.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import type { FakeOrderView } from '../fake-shopify/types';
import { parcelWorkflowId, shipmentWorkflowId } from '../domain/shipment';
import { cursorOf } from '../shop-import/schedule';
import { shopPullScheduleId } from '../workflow-definitions/shop-pull';
import { stateQuery, WORKFLOW_TYPE, type ShipmentOutcome, type ShipmentState } from '../workflow-definitions/shipment';
import { runCli } from './helpers/cli';
import { TEST_CREDENTIALS } from './helpers/harness';
import { fakeShopifyEntry } from './helpers/platforms';
import { pullNow } from './helpers/shop-pulls';
import { holdLabelsBack } from './helpers/held-back';
import { holdTrackingBack } from './helpers/api';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { killWorkerProcesses, startWorkerProcess, workerEnv, type WorkerProcess } from './helpers/worker-process';

const SHOP = 'faulty-shopify';
const LOCATION = (n: number) => `gid://shopify/Location/${n}`;

let env: TestWorkflowEnvironment;
let api: FakeShippingApi;
let shopify: FakeShopify;
let config: Record<string, unknown>;

beforeAll(async () => {
  env = await createTestEnv();
  api = await startFakeShippingApi({ port: 0, trackingStepPolls: 1, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
  // A small bucket (a dev store is ~40/2; this one holds one order read and refills slowly) and Shopify's 429 form of THROTTLED.
  shopify = await startFakeShopify({ bucket: { maximumAvailable: 1000, restoreRate: 250 }, throttleAs: 'http-429' });
  config = {
    maxBackoff: '1s',
    [SHOP]: fakeShopifyEntry(shopify.baseUrl, {
      timeout: '3s',
      import: {
        every: '1h',
        paused: true, // only the test's triggers pull: no tick of the schedule mid-test
        overlap: '2m',
        firstPull: '1d',
        mapping: { orderIdPrefix: 'F-', shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } } },
      },
    }),
  };
});
afterAll(async () => {
  killWorkerProcesses();
  await Promise.all([api?.close(), shopify?.close()]);
  await env?.teardown();
});

function startWorker(taskQueue: string): Promise<WorkerProcess> {
  return startWorkerProcess({
    ...workerEnv(env.address, taskQueue, api.baseUrl),
    TRACKING_POLL_INTERVAL: '200ms',
    SHOP_CONNECTORS: JSON.stringify(config),
  });
}

/**
 * Tracking held back with 429 + Retry-After 1 s: polled again a second after the release (a 5xx
 * hold backs the poller off for longer), but it feeds the account's pace, so only once the labels
 * it would slow are made.
 */
function holdTrackingBack429(): () => void {
  api.setFaults({ rateLimitedRate: 1, rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 1 }, endpoints: ['GET /tracking'] });
  return () => void api.setFaults({ rateLimitedRate: 0, endpoints: null });
}

const lines = (n: number) => Array.from({ length: n }, (_, i) => ({ sku: `PART-${i}`, quantity: 1, grams: 300 }));
const orderIdOf = (o: { name: string }) => `F-${o.name.replace('#', '')}`;
const handle = (workflowId: string) => env.client.workflow.getHandle(workflowId);
const query = (workflowId: string): Promise<ShipmentState | null> =>
  handle(workflowId)
    .query(stateQuery)
    .catch(() => null); // not started yet, or no worker to answer

/** Labels the API made (or was asked for) for an order, counted by idempotencyKey. */
function labelsByKey(number: string, status: 'created' | 'any' = 'created'): Record<string, number> {
  return api
    .labels()
    .filter((l) => l.customerOrderNumber === number && (status === 'any' || l.status === 'created'))
    .reduce<Record<string, number>>((n, l) => ({ ...n, [l.idempotencyKey]: (n[l.idempotencyKey] ?? 0) + 1 }), {});
}
/** Keys of the order's label requests the API answered 429 (held back). */
const heldKeys = (number: string) =>
  new Set(
    api
      .requestLog()
      .filter((r) => r.endpoint === 'POST /labels' && r.status === 429 && r.customerOrderNumber === number)
      .map((r) => r.idempotencyKey),
  );

/** A fulfillment's events as the shop shows them: each status once, in the order they happened, ending delivered. */
function expectEventsOnceInOrder(f: FakeOrderView['fulfillments'][number]) {
  const statuses = f.events.map((e) => e.status);
  expect(new Set(statuses).size, `events of ${f.id}: ${statuses.join(', ')}`).toBe(statuses.length);
  const at = f.events.map((e) => Date.parse(e.happenedAt));
  expect(at, `events of ${f.id}: ${statuses.join(', ')}`).toEqual([...at].sort((a, b) => a - b));
  expect(statuses.at(-1)).toBe('DELIVERED');
}

/** A shipment's record of the merchant's readings never goes back: each later than (or as late as) the one before. */
function expectReadingsInOrder(workflowId: string, state: ShipmentState): void {
  const changes = state.shopOrder?.changes ?? [];
  for (let i = 1; i < changes.length; i++) {
    const [a, b] = [changes[i - 1]!, changes[i]!];
    expect(b.modifiedAt >= a.modifiedAt, `${workflowId}: ${JSON.stringify(changes)}`).toBe(true);
    if (a.readAt !== undefined && b.readAt !== undefined && a.modifiedAt === b.modifiedAt)
      expect(Date.parse(b.readAt) >= Date.parse(a.readAt), `${workflowId}: ${JSON.stringify(changes)}`).toBe(true);
  }
}

it('a slow, throttling, failing store and a worker killed mid-write: every location ends with exactly the labels its lines need, one fulfillment each, events once and in order; the address moved after an import --from reaches its shipment', async () => {
  const taskQueue = `faulty-store-${randomUUID()}`;
  // Every answer of the store late; the imported order's write and the pulls' first reads fail once.
  shopify.setFaults({
    latencyMs: 150,
    failNext: [
      { operation: 'fulfillmentCreate', kind: '503' },
      { operation: 'orders', kind: 'throttled' },
    ],
  });
  let worker = await startWorker(taskQueue);

  // ---- deliverable 6: started by `import --from` and fulfilled before the shop's first pull
  const releaseTracking = holdTrackingBack(api); // the imported shipment stays running until its address moved
  const imported = shopify.createOrder({ lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }] });
  const run = await runCli(['import', '--from', SHOP, '--since', '2h', '--skip-preflight', '--max-backlog', '0', '--json'], {
    env: {
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: taskQueue,
      SHOP_CONNECTORS: JSON.stringify(config),
      SHIPPING_API_BASE_URL: api.baseUrl,
      SHIPPING_API_KEY: TEST_CREDENTIALS.apiKey,
      SHIPPING_API_TOKEN: TEST_CREDENTIALS.apiToken,
    },
    timeoutMs: 120_000,
  });
  expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
  const importedId = shipmentWorkflowId({ shop: SHOP, orderId: orderIdOf(imported) });
  await waitFor(async () => ((await query(importedId))?.shopSync?.delivered ?? 0) >= 1 || undefined, {
    what: 'the imported order labelled and fulfilled in the shop',
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  expect(shopify.order(imported.legacyResourceId)!.fulfillments).toHaveLength(1);
  const first = await pullNow(env.client, SHOP);
  expect(first.counts.read).toBe(0); // fulfilled: a pull without a cursor leaves it out ...
  expect(cursorOf(await env.client.schedule.getHandle(shopPullScheduleId(SHOP)).describe()).since).not.toBeNull(); // ... yet sets one
  // The merchant moves the address after the label: the next pull reads the fulfilled order and tells its shipment.
  shopify.editOrder(imported.legacyResourceId, { shippingAddress: { address2: 'Floor 3', zip: '20095' } });
  expect((await pullNow(env.client, SHOP)).counts.changed).toBe(1);
  expect((await handle(importedId).query(stateQuery)).shopOrder!.attention).toBe('address_changed');
  releaseTracking();

  // ---- deliverable 5: a split order whose lines move while both labels are held back
  const releaseLabels = holdLabelsBack(api);
  const split = shopify.createOrder({ lineItems: lines(4), splitLocations: true }); // PART-0, 1 at location 1; PART-2, 3 at 2
  const splitId = shipmentWorkflowId({ shop: SHOP, orderId: orderIdOf(split) });
  const key = (location: number, revision: number) => `${SHOP}:${orderIdOf(split)}@${location}:r${revision}`;
  expect((await pullNow(env.client, SHOP)).counts.started).toBe(1);
  await waitFor(() => (heldKeys(split.name).has(key(1, 1)) && heldKeys(split.name).has(key(2, 1)) ? true : undefined), {
    what: 'both parcels’ labels held back',
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  const [atOne, atTwo] = shopify.order(split.legacyResourceId)!.fulfillmentOrders;
  shopify.moveFulfillmentOrder(atTwo!.id, LOCATION(3)); // location 2 loses every line: removed
  shopify.moveFulfillmentOrder(atOne!.id, LOCATION(3), [{ id: atOne!.lineItems[1]!.id, quantity: 1 }]); // location 3 added
  expect((await pullNow(env.client, SHOP)).counts.changed).toBe(1);
  // The relabel of location 1 (its lines changed) and location 3's first label are on the wire, held.
  await waitFor(() => (heldKeys(split.name).has(key(1, 2)) && heldKeys(split.name).has(key(3, 1)) ? true : undefined), {
    what: 'the labels of location 1 (next revision) and location 3 asked for',
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  releaseLabels();

  // ---- the store fails writes; the worker dies while a fulfillment write is on the wire
  shopify.resetStats();
  shopify.setFaults({
    failNext: [
      // Applied at once, answered 20 s later: the kill loses the answer.
      { operation: 'fulfillmentCreate', kind: 'slow', delayMs: 20_000 },
      { operation: 'fulfillmentCreate', kind: 'throttled' },
      { operation: 'fulfillmentCreate', kind: '503' },
      // Applied, then the connection cut: a resend must find the event, not write it twice.
      { operation: 'fulfillmentEventCreate', kind: 'commit-then-drop' },
      { operation: 'fulfillmentEventCreate', kind: '500' },
      { operation: 'fulfillmentEventCreate', kind: 'throttled' },
      { operation: 'fulfillmentTrackingInfoUpdate', kind: '503' },
      { operation: 'order', kind: 'throttled' },
      { operation: 'order', kind: '503' },
    ],
  });
  // No tracking number on either parcel's fulfillment until both are written (the carrier gives it later).
  await waitFor(() => (Object.keys(labelsByKey(split.name)).length === 2 ? true : undefined), {
    what: 'both labels made',
    timeoutMs: 60_000,
    intervalMs: 20,
  });
  const releaseSplitTracking = holdTrackingBack429();
  await waitFor(() => (shopify.order(split.legacyResourceId)!.fulfillments.length > 0 ? true : undefined), {
    what: 'a parcel’s fulfillment applied by the store',
    timeoutMs: 60_000,
    intervalMs: 20,
  });
  worker.child.kill('SIGKILL');
  expect(await worker.exited).toBeNull();
  worker = await startWorker(taskQueue);
  await waitFor(() => (shopify.order(split.legacyResourceId)!.fulfillments.length >= 2 ? true : undefined), {
    what: 'both parcels’ fulfillments',
    timeoutMs: 90_000,
    intervalMs: 100,
  });
  releaseSplitTracking();

  const outcome = (await handle(splitId).result()) as ShipmentOutcome;
  expect(outcome.parcels!.map((p) => [p.location, p.outcome, p.labelId === null ? 'no label' : 'label'])).toEqual([
    ['1', 'delivered', 'label'],
    ['2', 'cancelled_in_shop', 'no label'],
    ['3', 'delivered', 'label'],
  ]);
  expect(outcome.outcome).toBe('delivered');
  // Exactly the labels the lines need: location 1's next revision, location 3's first; none for location 2, whose lines left.
  expect(labelsByKey(split.name)).toEqual({ [key(1, 2)]: 1, [key(3, 1)]: 1 });
  expect(Object.keys(labelsByKey(split.name, 'any')).filter((k) => k.includes('@2:'))).toEqual([]);

  // The store: one fulfillment per parcel with lines, each its parcel's tracking number, events once and in order.
  const view = await waitFor(
    () => {
      const v = shopify.order(split.legacyResourceId)!;
      return v.fulfillments.every((f) => f.events.at(-1)?.status === 'DELIVERED') ? v : undefined;
    },
    { what: 'both fulfillments delivered in the shop', timeoutMs: 30_000, intervalMs: 100 },
  ).catch(async (err: Error) => {
    // Say what each parcel's fulfillment holds and what its shipment thinks it wrote.
    const syncs = await Promise.all(['1', '3'].map(async (l) => (await query(parcelWorkflowId(splitId, l)))?.shopSync));
    const shop = shopify
      .order(split.legacyResourceId)!
      .fulfillments.map((f) => ({ location: f.locationId, tracking: f.trackingInfo, events: f.events.map((e) => e.status) }));
    throw new Error(`${err.message}: shop ${JSON.stringify(shop)}; parcels' shop sync ${JSON.stringify(syncs)}`);
  });
  expect(view.fulfillments.map((f) => [f.locationId, f.trackingInfo.map((t) => t.number)]).sort()).toEqual(
    [
      [LOCATION(1), [outcome.parcels![0]!.trackingNumber]],
      [LOCATION(3), [outcome.parcels![2]!.trackingNumber]],
    ].sort(),
  );
  expect(shopify.stats().mutationsApplied.fulfillmentCreate).toBe(2);
  for (const f of view.fulfillments) expectEventsOnceInOrder(f);
  expect(view.fulfillmentOrders.map((fo) => fo.status)).toEqual(['CLOSED', 'CLOSED', 'CLOSED']);
  // The faults were met: every queued failure consumed, the kill's write answered late or never.
  expect(shopify.setFaults({}).failNext).toEqual([]);
  expect(shopify.stats().throttled + shopify.stats().http429).toBeGreaterThan(0);

  // The imported shipment: delivered, its one fulfillment's events once and in order, its address change recorded.
  const importedOutcome = (await handle(importedId).result()) as ShipmentOutcome;
  expect(importedOutcome.outcome).toBe('delivered');
  const importedView = await waitFor(
    () => {
      const v = shopify.order(imported.legacyResourceId)!;
      return v.fulfillments[0]?.events.at(-1)?.status === 'DELIVERED' ? v : undefined;
    },
    { what: 'the imported order delivered in the shop', timeoutMs: 30_000, intervalMs: 100 },
  );
  expect(importedView.fulfillments).toHaveLength(1);
  expectEventsOnceInOrder(importedView.fulfillments[0]!);
  const importedState = (await handle(importedId).query(stateQuery)) as ShipmentState;
  expect(importedState.shopOrder!.changes.at(-1)!.kinds).toContain('address');
  expect(labelsByKey(imported.name)).toEqual({ [`${SHOP}:${orderIdOf(imported)}:r1`]: 1 });

  // Readings in order on every shipment of the test (the order, its parcels, the imported one).
  for (const id of [splitId, importedId, ...['1', '2', '3'].map((l) => parcelWorkflowId(splitId, l))])
    expectReadingsInOrder(id, (await handle(id).query(stateQuery)) as ShipmentState);
  // Every shipment of the shop is accounted for: no second workflow for either order.
  const ids: string[] = [];
  for await (const w of env.client.workflow.list({ query: `WorkflowType = '${WORKFLOW_TYPE}' AND ShipmentShop = '${SHOP}'` }))
    ids.push(w.workflowId);
  expect(ids.sort()).toEqual([splitId, importedId, ...['1', '2', '3'].map((l) => parcelWorkflowId(splitId, l))].sort());

  worker.child.kill('SIGTERM');
  await worker.exited;
}, 420_000);
