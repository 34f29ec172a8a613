/**
 * The shop talks back, measured: orders on both platforms, of which some the merchant cancels,
 * edits (a new postal code) or holds (and releases) at random moments while the shipping API's
 * rate limit (429 + Retry-After, about a minute of labels for all orders) holds labels back, and
 * some ship from two locations; the worker is killed once
 * (SIGKILL) and started again. Half the shops' webhooks reach the worker's trigger, half are pulled
 * by their schedule alone (every 30 s). Read at the end, from the fakes and the shipments:
 * labels made after the shipment knew of a cancel, labels with an address older than an edit the
 * shipment knew before its label, writes to cancelled orders after the shipment knew, duplicate
 * labels, split orders with a fulfillment per location, and the time from the merchant's change
 * to the shipment knowing it. Cost: platform requests, updates told and refused, and update
 * events in the histories of orders nobody changed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { labelIdempotencyKey } from '../activities/shipping-api';
import { freePort } from '../dev-server/free-port';
import { mulberry32 } from '../fake-shipping-api/faults';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { PULL_TOPICS } from '../shop-trigger/topics';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { shipmentWorkflowId } from '../domain/shipment';
import { triggerPull } from '../shop-import/schedule';
import { stateQuery, type ShipmentState } from '../workflow-definitions/shipment';
import { pullResult, schedulesReady } from './import-pulls';
import { HOOK_SECRET, shopifyEntry, wooEntry } from './import-stores';
import { BENCH_ACCOUNTS, benchProcessEnv, ROOT, sleep, startDevServer, startWorkerProcess, type DevServer, type Proc } from './stack';

type Mode = 'webhooks' | 'schedule';
type PlatformName = 'Shopify' | 'WooCommerce';
type Kind = 'plain' | 'cancel' | 'edit' | 'hold' | 'split';

interface Order {
  platform: PlatformName;
  mode: Mode;
  shop: string;
  id: string;
  orderId: string;
  /** The label's customerOrderNumber (the mapping's default: the order's name). */
  number: string;
  kind: Kind;
  /** When the merchant acted (cancel, edit, hold), ms. */
  actedAt: number | null;
  newPostalCode: string | null;
}

export interface ShopChangesRow {
  orders: number;
  cancelled: number;
  edited: number;
  held: number;
  split: number;
  labelsAfterKnownCancel: number;
  labelsInDetectionWindow: number;
  staleAddressLabels: number;
  writesAfterKnownCancel: number;
  duplicateLabels: number;
  splitWithFulfillmentPerLocation: number;
  /** Per trigger and platform; `changes`: those made while the order's shipment ran (its import read an earlier one; an ended one hears nothing). */
  latency: Array<{ mode: Mode; platform: PlatformName; changes: number; known: number; p50Seconds: number; p95Seconds: number }>;
  cost: {
    platformRequests: number;
    changesTold: number;
    updateEventsInUnchangedOrders: number;
    unchangedOrders: number;
    extraEventsPerUnchanged: number;
    /** Per trigger and platform: requests by what asked (Shopify: the GraphQL operation's name; WooCommerce: the route, its order lists by kind). */
    requestsByKind: Array<{ mode: Mode; platform: PlatformName; orders: number; kinds: Record<string, number> }>;
  };
}

const RATES = { cancel: 0.1, edit: 0.05, hold: 0.05, split: 0.1 };
/** The merchant acts within this long after the orders are placed. */
const ACTION_WINDOW_MS = 40_000;
const HOLD_FOR_MS = [5_000, 15_000];
const DRAIN_MS = 420_000;
/** The API's limit: every order's label and order read take about a minute of it, the merchant's window 40 s of it. */
const callsPerSecondFor = (orders: number) => Math.max(4, Math.round(orders / 30));

const shopOf = (mode: Mode, platform: PlatformName) => `changes-${mode}-${platform === 'Shopify' ? 'shopify' : 'woo'}`;

export async function shopChangesScenario(
  o: { orders: number; seed: number; checkBeforeLabel: boolean; topics?: 'all' | 'new' },
  log: (m: string) => void,
): Promise<ShopChangesRow> {
  const random = mulberry32(o.seed);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-shop-changes-'));
  const bundlePath = path.join(tmp, 'workflow-bundle.js');
  writeFileSync(
    bundlePath,
    (await bundleWorkflowCode({ workflowsPath: path.join(ROOT, 'workflows'), logger: new DefaultLogger('WARN') })).code,
  );
  const server = await startDevServer();
  // Labels wait their turn in the account's limit (the pacer learns it from 429 + Retry-After, as
  // from the real service); a label is delivered about 8 s after it is made, seen within a poll or two.
  const perSecond = callsPerSecondFor(o.orders);
  const api = await startFakeShippingApi({ port: 0, trackingStepMs: 2_000, accounts: BENCH_ACCOUNTS });
  api.setFaults({ rateLimit: { perSecond, burst: perSecond } });
  log(
    `shop changes: the shipping API limited to ${perSecond} calls a second; the label's check with the shop ${o.checkBeforeLabel ? 'on' : 'off'}; webhooks: ${o.topics ?? 'all'} topics`,
  );
  const stores: Record<Mode, { shopify: FakeShopify; woo: FakeWooCommerce }> = {
    webhooks: { shopify: await startFakeShopify(), woo: await startFakeWooCommerce() },
    schedule: { shopify: await startFakeShopify(), woo: await startFakeWooCommerce() },
  };
  const triggerPort = await freePort();
  const connectors: Record<string, unknown> = { maxBackoff: '5s' };
  for (const mode of ['webhooks', 'schedule'] as const) {
    const settings = { every: '30s', overlap: '1m', checkBeforeLabel: o.checkBeforeLabel };
    connectors[shopOf(mode, 'Shopify')] = shopifyEntry(stores[mode].shopify.baseUrl, settings);
    connectors[shopOf(mode, 'WooCommerce')] = wooEntry(stores[mode].woo.baseUrl, settings);
  }
  const env = {
    ...benchProcessEnv(server, `bench-shop-changes-${Date.now()}`, api.baseUrl),
    WORKFLOW_BUNDLE_PATH: bundlePath,
    SHOP_CONNECTORS: JSON.stringify(connectors),
    SHOP_TRIGGER_HOST: '127.0.0.1',
    SHOP_TRIGGER_PORT: String(triggerPort),
    TRACKING_POLL_INTERVAL: '5s',
  };
  let worker: Proc = startWorkerProcess(ROOT, env);
  try {
    await subscribe(stores.webhooks, `http://127.0.0.1:${triggerPort}/hooks`, o.topics ?? 'all');
    const shops = Object.keys(connectors).filter((k) => k !== 'maxBackoff');
    // The worker applies the schedules at start: a trigger before then finds no schedule.
    await schedulesReady(server.client, shops);
    await firstPulls(server, shops);
    for (const mode of ['webhooks', 'schedule'] as const) for (const s of Object.values(stores[mode])) s.resetStats();
    const orders = place(stores, o.orders, random);
    log(`shop changes: ${orders.length} orders placed; the merchant acts over ${ACTION_WINDOW_MS / 1000} s; the worker is killed once`);
    await Promise.all(shops.map((shop) => triggerPull(server.client, shop)));
    const acting = act(stores, orders, random);
    await sleep(ACTION_WINDOW_MS * 0.4);
    worker.child.kill('SIGKILL');
    log('shop changes: worker killed (SIGKILL); starting another');
    worker = startWorkerProcess(ROOT, env);
    await acting;
    await drain(server, log);
    if (process.env.BENCH_SHOP_CHANGES_DUMP) await dumpDetails(server, api, orders, process.env.BENCH_SHOP_CHANGES_DUMP);
    return await measure(server, api, stores, orders);
  } finally {
    await worker.stop();
    for (const mode of ['webhooks', 'schedule'] as const) await Promise.all([stores[mode].shopify.close(), stores[mode].woo.close()]);
    await api.close();
    await server.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Both platforms' order topics and the merchant's changes (as npm run dev subscribes them); `new`: new orders' only. */
async function subscribe(s: { shopify: FakeShopify; woo: FakeWooCommerce }, hooks: string, topics: 'all' | 'new'): Promise<void> {
  const wanted = (topic: string) => topics === 'all' || topic === 'orders/create' || topic === 'order.created';
  for (const topic of PULL_TOPICS.shopify.filter(wanted))
    s.shopify.subscribeWebhook({ topic, address: `${hooks}/shopify/${shopOf('webhooks', 'Shopify')}`, secret: HOOK_SECRET });
  for (const topic of PULL_TOPICS.woocommerce.filter(wanted))
    await s.woo.createWebhook({ topic, deliveryUrl: `${hooks}/woocommerce/${shopOf('webhooks', 'WooCommerce')}`, secret: HOOK_SECRET });
}

async function firstPulls(server: DevServer, shops: string[]): Promise<void> {
  const since = Date.now();
  await Promise.all(shops.map((shop) => triggerPull(server.client, shop)));
  for (const shop of shops) await pullResult(server.client, shop, since);
}

function place(stores: Record<Mode, { shopify: FakeShopify; woo: FakeWooCommerce }>, count: number, random: () => number): Order[] {
  const orders: Order[] = [];
  for (let i = 0; i < count; i++) {
    const mode: Mode = i % 4 < 2 ? 'webhooks' : 'schedule';
    const platform: PlatformName = i % 2 === 0 ? 'Shopify' : 'WooCommerce';
    const r = random();
    const kind: Kind =
      r < RATES.cancel
        ? 'cancel'
        : r < RATES.cancel + RATES.edit
          ? 'edit'
          : r < RATES.cancel + RATES.edit + RATES.hold
            ? 'hold'
            : r < 0.3 && platform === 'Shopify'
              ? 'split' // WooCommerce orders ship as one label (no mapping rule splits them here)
              : 'plain';
    const shop = shopOf(mode, platform);
    if (platform === 'Shopify') {
      const created = stores[mode].shopify.createOrder({
        lineItems: [
          { sku: 'CHG-A', quantity: 1, grams: 500, price: '20.00' },
          { sku: 'CHG-B', quantity: 1, grams: 700, price: '30.00' },
        ],
        splitLocations: kind === 'split',
      });
      orders.push({
        platform,
        mode,
        shop,
        id: created.legacyResourceId,
        orderId: `S-${created.name.replace('#', '')}`,
        number: created.name,
        kind,
        actedAt: null,
        newPostalCode: null,
      });
    } else {
      const created = stores[mode].woo.createOrder({ status: 'processing', lineItems: [{ sku: 'CHG-W', quantity: 1, weight: '0.5' }] });
      orders.push({
        platform,
        mode,
        shop,
        id: String(created.id),
        orderId: `W-${created.number}`,
        number: created.number,
        kind,
        actedAt: null,
        newPostalCode: null,
      });
    }
  }
  return orders;
}

/** The merchant's actions at random moments of the window; holds are released 5–15 s later. */
async function act(
  stores: Record<Mode, { shopify: FakeShopify; woo: FakeWooCommerce }>,
  orders: Order[],
  random: () => number,
): Promise<void> {
  const start = Date.now();
  const plan = orders
    .filter((o) => o.kind === 'cancel' || o.kind === 'edit' || o.kind === 'hold')
    .map((o) => ({
      o,
      at: start + random() * ACTION_WINDOW_MS,
      releaseAfter: HOLD_FOR_MS[0]! + random() * (HOLD_FOR_MS[1]! - HOLD_FOR_MS[0]!),
    }))
    .sort((a, b) => a.at - b.at);
  const releases: Array<Promise<void>> = [];
  for (const { o, at, releaseAfter } of plan) {
    await sleep(Math.max(0, at - Date.now()));
    const s = stores[o.mode];
    o.actedAt = Date.now();
    try {
      if (o.kind === 'cancel') {
        if (o.platform === 'Shopify') s.shopify.cancelOrder(o.id);
        else s.woo.editOrder(Number(o.id), { status: 'cancelled' });
      } else if (o.kind === 'edit') {
        o.newPostalCode = o.platform === 'Shopify' ? '20095' : '4000-123';
        if (o.platform === 'Shopify') s.shopify.editOrder(o.id, { shippingAddress: { zip: o.newPostalCode } });
        else s.woo.editOrder(Number(o.id), { shipping: { postcode: o.newPostalCode } });
      } else {
        if (o.platform === 'Shopify') s.shopify.holdOrder(o.id);
        else s.woo.editOrder(Number(o.id), { status: 'on-hold' });
        releases.push(
          sleep(releaseAfter).then(() => {
            if (o.platform === 'Shopify') s.shopify.releaseHold(o.id);
            else s.woo.editOrder(Number(o.id), { status: 'processing' });
          }),
        );
      }
    } catch {
      // Shopify refuses to cancel or hold an order already fulfilled: the merchant's action did not happen.
      o.actedAt = null;
    }
  }
  await Promise.all(releases);
}

/** Until every shipment has ended (or DRAIN_MS after the last action). */
async function drain(server: DevServer, log: (m: string) => void): Promise<void> {
  const deadline = Date.now() + DRAIN_MS;
  let lastLog = Date.now();
  for (;;) {
    const running = (await server.client.workflow.count(`WorkflowType = 'shipmentWorkflow' AND ExecutionStatus = 'Running'`)).count;
    if (running === 0 || Date.now() > deadline) {
      if (running > 0) log(`shop changes: ${running} shipments still running after the drain (${await phases(server)})`);
      return;
    }
    if (Date.now() - lastLog >= 60_000) {
      lastLog = Date.now();
      log(`shop changes: ${running} shipments running (${await phases(server)})`);
    }
    await sleep(2_000);
  }
}

/** How many running shipments are in each phase (the ShipmentStatus search attribute). */
async function phases(server: DevServer): Promise<string> {
  const counts: string[] = [];
  for (const phase of ['parcels', 'creating_label', 'held_in_shop', 'awaiting_correction', 'reading_order', 'tracking']) {
    const query = `WorkflowType = 'shipmentWorkflow' AND ExecutionStatus = 'Running' AND ShipmentStatus = '${phase}'`;
    const { count } = await server.client.workflow.count(query);
    if (count > 0) counts.push(`${phase} ${count}`);
  }
  return counts.join(', ') || 'no phase recorded yet';
}

async function firstCursorSave(server: DevServer, workflowId: string, runId: string): Promise<string | null> {
  const history = await server.client.workflow.getHandle(workflowId, runId).fetchHistory();
  const event = history.events?.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'saveShopCursor');
  const seconds = event?.eventTime?.seconds;
  return seconds == null ? null : new Date(Number(seconds) * 1000).toISOString();
}

/** For a reader chasing a change that never reached its shipment: each acted order and each pull, as JSON. */
async function dumpDetails(server: DevServer, api: FakeShippingApi, orders: Order[], file: string): Promise<void> {
  const labels = api.labels();
  const acted = [];
  for (const o of orders.filter((x) => x.actedAt !== null)) {
    const handle = server.client.workflow.getHandle(shipmentWorkflowId({ shop: o.shop, orderId: o.orderId }));
    const described = await handle.describe().catch(() => null);
    const state = described ? await handle.query(stateQuery).catch(() => null) : null;
    acted.push({
      platform: o.platform,
      mode: o.mode,
      kind: o.kind,
      id: o.id,
      actedAt: new Date(o.actedAt!).toISOString(),
      started: described?.startTime.toISOString() ?? null,
      closed: described?.closeTime?.toISOString() ?? null,
      phase: state?.phase ?? null,
      outcome: state?.outcome ?? null,
      changes: state?.shopOrder?.changes ?? null,
      labels: labels.filter((l) => l.customerOrderNumber === o.number && keyNames(l.idempotencyKey, o)).map((l) => l.createdAt),
    });
  }
  const pulls = [];
  for await (const w of server.client.workflow.list({ query: `WorkflowType = 'shopPullWorkflow'` })) {
    const result: unknown =
      w.status.name === 'COMPLETED'
        ? await server.client.workflow
            .getHandle(w.workflowId, w.runId)
            .result()
            .then((r: unknown) => r)
            .catch(() => null)
        : null;
    pulls.push({
      id: w.workflowId,
      start: w.startTime.toISOString(),
      close: w.closeTime?.toISOString() ?? null,
      status: w.status.name,
      // A scheduled run's first cursor write: before it, a shop has no cursor for a webhook's pull from the cursor.
      firstCursorSave: w.workflowId.includes('-webhook-') ? null : await firstCursorSave(server, w.workflowId, w.runId),
      result,
    });
  }
  writeFileSync(file, JSON.stringify({ acted, pulls }, null, 1));
}

async function measure(
  server: DevServer,
  api: FakeShippingApi,
  stores: Record<Mode, { shopify: FakeShopify; woo: FakeWooCommerce }>,
  orders: Order[],
): Promise<ShopChangesRow> {
  const labels = api.labels().filter((l) => l.status === 'created');
  // Order numbers repeat across the four stores: a label is the order's when its key names the order.
  const labelsOf = (o: Order) => labels.filter((l) => l.customerOrderNumber === o.number && keyNames(l.idempotencyKey, o));
  const states = new Map<Order, ShipmentState | null>();
  await inBatches(orders, 16, async (o) => {
    try {
      states.set(o, await server.client.workflow.getHandle(shipmentWorkflowId({ shop: o.shop, orderId: o.orderId })).query(stateQuery));
    } catch {
      states.set(o, null);
    }
  });
  const learned = (o: Order, test: (c: NonNullable<ShipmentState['shopOrder']>['changes'][number]) => boolean): number | null => {
    const change = states.get(o)?.shopOrder?.changes.find((c) => test(c) && o.actedAt !== null && Date.parse(c.at) >= o.actedAt - 1000);
    return change ? Date.parse(change.at) : null;
  };
  let labelsAfterKnownCancel = 0;
  let labelsInDetectionWindow = 0;
  let staleAddressLabels = 0;
  let writesAfterKnownCancel = 0;
  let duplicateLabels = 0;
  const groups = (['webhooks', 'schedule'] as const).flatMap((mode) =>
    (['Shopify', 'WooCommerce'] as const).map((platform) => ({ mode, platform })),
  );
  const groupOf = (o: Order) => `${o.mode}/${o.platform}`;
  const latencies = new Map<string, number[]>(groups.map((g) => [`${g.mode}/${g.platform}`, []]));
  const changes = new Map<string, number>(groups.map((g) => [`${g.mode}/${g.platform}`, 0]));
  // When each changed order's shipment ran: a change before its start was read by its import, one after its end is heard by nothing.
  const ran = new Map<Order, { from: number; to: number }>();
  await inBatches(
    orders.filter((o) => o.actedAt !== null),
    16,
    async (o) => {
      // No shipment (an order cancelled before its import): it never ran, and nothing could know the change.
      const described = await server.client.workflow
        .getHandle(shipmentWorkflowId({ shop: o.shop, orderId: o.orderId }))
        .describe()
        .catch((err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return null;
          throw err;
        });
      ran.set(
        o,
        described === null ? { from: 0, to: 0 } : { from: described.startTime.getTime(), to: described.closeTime?.getTime() ?? Infinity },
      );
    },
  );
  for (const o of orders) {
    const own = labelsOf(o);
    // One label per parcel (its key names its location: `…@<location>:r<n>`) and address; more is a duplicate.
    const made = own.map((l) => `${/@([^:]+):r\d+$/.exec(l.idempotencyKey)?.[1] ?? ''}|${l.shipToPostalCode}`);
    duplicateLabels += made.length - new Set(made).size;
    if (o.actedAt === null) continue;
    const span = ran.get(o)!;
    const whileRunning = o.actedAt >= span.from && o.actedAt < span.to;
    if (whileRunning) changes.set(groupOf(o), changes.get(groupOf(o))! + 1);
    const knownAt =
      o.kind === 'cancel'
        ? learned(o, (c) => c.status === 'cancelled')
        : o.kind === 'hold'
          ? learned(o, (c) => c.status === 'on_hold')
          : learned(o, (c) => c.kinds.includes('address'));
    if (knownAt !== null && whileRunning) latencies.get(groupOf(o))!.push((knownAt - o.actedAt) / 1000);
    if (o.kind === 'cancel') {
      for (const l of own) {
        const made = Date.parse(l.createdAt);
        if (knownAt !== null && made > knownAt) labelsAfterKnownCancel++;
        else if (made > o.actedAt) labelsInDetectionWindow++;
      }
      if (knownAt !== null) writesAfterKnownCancel += writesSince(stores[o.mode], o, knownAt);
    }
    if (o.kind === 'edit' && knownAt !== null) {
      staleAddressLabels += own.filter((l) => Date.parse(l.createdAt) > knownAt && l.shipToPostalCode !== o.newPostalCode).length;
    }
  }
  const split = orders.filter((o) => o.kind === 'split');
  const splitOk = split.filter((o) => {
    const view = stores[o.mode].shopify.order(o.id);
    return view !== null && new Set(view.fulfillments.map((f) => f.name)).size >= 2;
  }).length;
  const unchanged = orders.filter((o) => o.kind === 'plain' && states.get(o));
  let updateEvents = 0;
  await inBatches(unchanged, 16, async (o) => {
    const history = await server.client.workflow.getHandle(shipmentWorkflowId({ shop: o.shop, orderId: o.orderId })).fetchHistory();
    updateEvents += (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
  });
  const platformRequests = (['webhooks', 'schedule'] as const).reduce(
    (n, mode) => n + stores[mode].shopify.stats().requests + stores[mode].woo.stats().requests,
    0,
  );
  const requestsByKind = (['webhooks', 'schedule'] as const).flatMap((mode) =>
    (['Shopify', 'WooCommerce'] as const).map((platform) => ({
      mode,
      platform,
      orders: orders.filter((o) => o.mode === mode && o.platform === platform).length,
      kinds: platform === 'Shopify' ? stores[mode].shopify.stats().byOperationName : wooKinds(stores[mode].woo.stats()),
    })),
  );
  const told = [...states.values()].reduce((n, s) => n + (s?.shopOrder?.changes.length ?? 0), 0);
  return {
    orders: orders.length,
    cancelled: orders.filter((o) => o.kind === 'cancel' && o.actedAt !== null).length,
    edited: orders.filter((o) => o.kind === 'edit').length,
    held: orders.filter((o) => o.kind === 'hold' && o.actedAt !== null).length,
    split: split.length,
    labelsAfterKnownCancel,
    labelsInDetectionWindow,
    staleAddressLabels,
    writesAfterKnownCancel,
    duplicateLabels,
    splitWithFulfillmentPerLocation: splitOk,
    latency: groups.map(({ mode, platform }) => {
      const seconds = latencies.get(`${mode}/${platform}`)!;
      return {
        mode,
        platform,
        changes: changes.get(`${mode}/${platform}`)!,
        known: seconds.length,
        p50Seconds: percentile(seconds, 0.5),
        p95Seconds: percentile(seconds, 0.95),
      };
    }),
    cost: {
      platformRequests,
      changesTold: told,
      updateEventsInUnchangedOrders: updateEvents,
      unchangedOrders: unchanged.length,
      extraEventsPerUnchanged: unchanged.length ? updateEvents / unchanged.length : 0,
      requestsByKind,
    },
  };
}

/** WooCommerce's routes, its order lists told apart by kind (orders by id, changes since). */
function wooKinds(stats: ReturnType<FakeWooCommerce['stats']>): Record<string, number> {
  const { 'GET orders': _lists, ...routes } = stats.byRoute;
  return { ...routes, ...Object.fromEntries(Object.entries(stats.orderLists).map(([k, n]) => [`GET orders ${k}`, n])) };
}

/** Our writes to the order after `since`: Shopify fulfillments created or updated; WooCommerce notes (not the merchant's status notes). */
function writesSince(s: { shopify: FakeShopify; woo: FakeWooCommerce }, o: Order, since: number): number {
  if (o.platform === 'Shopify') return (s.shopify.order(o.id)?.fulfillments ?? []).filter((f) => Date.parse(f.updatedAt) > since).length;
  const notes = s.woo.order(Number(o.id))?.notes ?? [];
  return notes.filter((n) => !n.note.startsWith('Order status changed') && Date.parse(`${n.date_created_gmt}Z`) > since).length;
}

/** A label's key is `sha256-…:r<revision>` of shop and order: compare through the order's workflow identity. */
function keyNames(key: string, o: Order): boolean {
  const named = key.slice(0, key.lastIndexOf(':r'));
  // A parcel's key adds its location: `<shop>:<orderId>@<location>`.
  return named === keyPrefix(o) || named.startsWith(`${keyPrefix(o)}@`);
}
const keyCache = new Map<Order, string>();
function keyPrefix(o: Order): string {
  let prefix = keyCache.get(o);
  if (prefix === undefined) {
    const k = labelIdempotencyKey({ shop: o.shop, orderId: o.orderId, revision: 1 });
    prefix = k.slice(0, k.lastIndexOf(':r'));
    keyCache.set(o, prefix);
  }
  return prefix;
}

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! * 10) / 10;
}

export function printShopChangesTable(
  r: ShopChangesRow,
  table: (title: string, head: string[], rows: Array<Array<string | number>>) => void,
): void {
  table(
    `Shop changes: ${r.orders} orders on Shopify and WooCommerce (${r.cancelled} cancelled, ${r.edited} edited, ${r.held} held, ${r.split} over two locations), labels held back by the API's rate limit, the worker killed once`,
    ['check', 'value'],
    [
      ['labels made after the shipment knew of the cancel', String(r.labelsAfterKnownCancel)],
      ['labels made between the cancel and the shipment knowing it', String(r.labelsInDetectionWindow)],
      ['labels with an address older than an edit the shipment knew', String(r.staleAddressLabels)],
      ['writes to cancelled orders after the shipment knew', String(r.writesAfterKnownCancel)],
      ['duplicate labels', String(r.duplicateLabels)],
      ['split orders with a fulfillment per location', `${r.splitWithFulfillmentPerLocation} of ${r.split}`],
    ],
  );
  table(
    "Shop changes: from the merchant's change to the shipment knowing it",
    ['trigger', 'platform', 'changes while its shipment ran', 'known', 'p50 s', 'p95 s'],
    [
      ...r.latency.map((l) => [
        l.mode === 'webhooks' ? 'webhooks + schedule' : 'schedule every 30 s',
        l.platform,
        String(l.changes),
        String(l.known),
        String(l.p50Seconds),
        String(l.p95Seconds),
      ]),
    ],
  );
  table(
    'Shop changes: cost',
    ['platform requests', 'changes told', 'update events in unchanged orders', 'unchanged orders', 'extra events per unchanged order'],
    [
      [
        String(r.cost.platformRequests),
        String(r.cost.changesTold),
        String(r.cost.updateEventsInUnchangedOrders),
        String(r.cost.unchangedOrders),
        String(r.cost.extraEventsPerUnchanged),
      ],
    ],
  );
  table(
    'Shop changes: platform requests by what asked (per order of that trigger and platform)',
    ['trigger', 'platform', 'request', 'count', 'per order'],
    r.cost.requestsByKind.flatMap((g) =>
      Object.entries(g.kinds)
        .sort(([, a], [, b]) => b - a)
        .map(([kind, n]) => [g.mode, g.platform, kind, String(n), g.orders ? (n / g.orders).toFixed(2) : '-']),
    ),
  );
}
