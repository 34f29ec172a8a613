/**
 * Placed → label created for live orders while a backlog drains (issue 30's target: p95 ≤ 5 s with
 * webhooks). Each path gets a fresh dev server, a worker process, the fake API limited to
 * `ratePerSecond` (so the backlog lasts minutes) and webhook-triggered fake stores (Shopify and
 * WooCommerce, as bench/import-latency.ts sets them up). `backlog` shipments are started as a file
 * import starts them, before the worker comes; once it runs (and drains them), an order a second is
 * placed in the stores, taking turns, and its label's creation time is read at the fake API. The baseline is the path before live orders went first:
 * the server without priority (FIFO) and LIVE_ORDER_MAX_AGE=off.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { freePort } from '../dev-server/free-port';
import { shipmentPriorityKey, type ShipmentPriorities } from '../domain/priority';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startFakeShopify } from '../fake-shopify';
import { startFakeWooCommerce } from '../fake-woocommerce';
import { startShipment } from '../order-import/start-shipment';
import { WORKFLOW_CODE } from '../worker-deployment/workflow-bundle';
import { labelTimes, listening, subscribe, warmUp, type ModeStores } from './import-latency';
import { shopifyEntry, WOO_TIMEZONE, wooEntry } from './import-stores';
import { stageBreakdown, type StageBreakdown } from './backlog-stages';
import { benchOrder } from './orders';
import { BENCH_ACCOUNTS, benchProcessEnv, percentile, ROOT, sleep, startDevServer, startWorkerProcess } from './stack';

export interface BacklogLatencyOptions {
  backlog: number;
  liveOrders: number;
  ratePerSecond: number;
  /** How long after the last live order its label may take before it counts as not labelled. */
  drainMs: number;
  /** Also the baseline path (FIFO, before); off halves a long run (10,000 take about 14 min a path to start). */
  baseline: boolean;
}

export interface BacklogLatencyRow {
  path: 'live orders first' | 'baseline: FIFO (before)';
  liveOrders: number;
  labelled: number;
  /** Seconds; Infinity where more than that share of orders got no label within the drain. */
  p50Seconds: number;
  p95Seconds: number;
  maxSeconds: number;
  backlogStarted: number;
  ratePerSecond: number;
  /** Backlog labels made by the end of the run, and how long its start took. */
  backlogLabels: number;
  backlogStartSeconds: number;
  /** Where the live orders' time went (bench/backlog-stages.ts). */
  stages: StageBreakdown;
}

export const BACKLOG_LATENCY_TARGET_P95_S = 5;
const SHOPS = { shopify: 'backlog-live-shopify', woo: 'backlog-live-woo' };
const WEEK_MS = 7 * 24 * 3600 * 1000;
/** Backlog shipments started at once (an import's concurrency). */
const START_CONCURRENCY = 32;

interface Placed {
  shop: string;
  orderId: string;
  at: number;
}

export async function backlogLatencyScenario(o: BacklogLatencyOptions, log: (m: string) => void): Promise<BacklogLatencyRow[]> {
  // Bundled once: a worker that bundles at start spends 10+ s of CPU.
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-backlog-latency-'));
  const bundlePath = path.join(tmp, 'workflow-bundle.js');
  writeFileSync(bundlePath, (await bundleWorkflowCode({ ...WORKFLOW_CODE, logger: new DefaultLogger('WARN') })).code);
  try {
    const rows: BacklogLatencyRow[] = [];
    for (const liveFirst of o.baseline ? [false, true] : [true]) rows.push(await onePath(o, bundlePath, liveFirst, log));
    return rows;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function onePath(
  o: BacklogLatencyOptions,
  bundlePath: string,
  liveFirst: boolean,
  log: (m: string) => void,
): Promise<BacklogLatencyRow> {
  const name = liveFirst ? 'live orders first' : 'baseline: FIFO (before)';
  const priorities: ShipmentPriorities = liveFirst ? { liveOrderMaxAgeMs: 15 * 60_000 } : 'off';
  const server = await startDevServer({ priority: liveFirst });
  const api = await startFakeShippingApi({
    port: 0,
    trackingStepMs: WEEK_MS,
    accounts: BENCH_ACCOUNTS,
    faults: { rateLimit: { perSecond: o.ratePerSecond, burst: o.ratePerSecond } },
  });
  const stores: ModeStores = { shopify: await startFakeShopify(), woo: await startFakeWooCommerce({ timezone: WOO_TIMEZONE, hpos: true }) };
  const triggerPort = await freePort();
  const taskQueue = `bench-backlog-latency-${Date.now()}`;
  // Queued before the worker comes (as a worker that was down, or an import faster than the
  // workers); its start is not what is measured, and is faster without a worker beside it.
  const began = Date.now();
  const logFile = path.join(path.dirname(bundlePath), `worker-${liveFirst ? 'live' : 'fifo'}.log`);
  await startBacklog(server.client, taskQueue, o.backlog, priorities, log);
  const backlogStartSeconds = (Date.now() - began) / 1000;
  const worker = startWorkerProcess(
    ROOT,
    {
      ...benchProcessEnv(server, taskQueue, api.baseUrl),
      WORKFLOW_BUNDLE_PATH: bundlePath,
      SHOP_CONNECTORS: JSON.stringify({
        maxBackoff: '5s',
        [SHOPS.shopify]: shopifyEntry(stores.shopify.baseUrl, { every: '30s' }),
        [SHOPS.woo]: wooEntry(stores.woo.baseUrl, { every: '30s' }),
      }),
      SHOP_TRIGGER_HOST: '127.0.0.1',
      SHOP_TRIGGER_PORT: String(triggerPort),
      LIVE_ORDER_MAX_AGE: liveFirst ? '15m' : 'off',
      // The stage breakdown reads the trigger's, the SDK's and the pacer's debug lines.
      LOG_LEVEL: 'debug',
    },
    logFile,
  );
  try {
    const hooks = `http://127.0.0.1:${triggerPort}/hooks`;
    await listening(hooks);
    await subscribe(stores, hooks, SHOPS);
    await warmUp(server, Object.values(SHOPS));
    log(
      `backlog latency (${name}): ${o.backlog} backlog shipments started in ${backlogStartSeconds.toFixed(0)} s, the worker draining them; placing ${o.liveOrders} live orders, one a second`,
    );
    const placed = await placeOrders(stores, o.liveOrders);
    const labelled = await labelTimes(api, placed, o.drainMs);
    await worker.stop(); // its log complete
    const stages = await stageBreakdown(server.client, logFile, placed, labelled, Object.values(SHOPS));
    return {
      ...row(name, placed, labelled),
      backlogStarted: o.backlog,
      ratePerSecond: o.ratePerSecond,
      backlogLabels: backlogLabels(api),
      backlogStartSeconds: Math.round(backlogStartSeconds),
      stages,
    };
  } finally {
    await worker.stop();
    await Promise.all([stores.shopify.close(), stores.woo.close()]);
    await api.close();
    await server.stop();
  }
}

/** As a file import starts them: no shop order, so a backlog when priorities are on. */
async function startBacklog(client: Client, taskQueue: string, n: number, priorities: ShipmentPriorities, log: (m: string) => void) {
  const stamp = Date.now();
  let lastLog = Date.now();
  for (let i = 0; i < n; i += START_CONCURRENCY) {
    const batch = Array.from({ length: Math.min(START_CONCURRENCY, n - i) }, (_, k) => benchOrder(`BL-${stamp}-${i + k}`));
    await Promise.all(batch.map((input) => startShipment(client, taskQueue, input, shipmentPriorityKey(input, priorities, Date.now()))));
    if (Date.now() - lastLog > 15_000) {
      lastLog = Date.now();
      log(`  backlog: ${i + batch.length} of ${n} started`);
    }
  }
}

/** An order a second, Shopify and WooCommerce taking turns. */
async function placeOrders(stores: ModeStores, orders: number): Promise<Placed[]> {
  const placed: Placed[] = [];
  const start = Date.now();
  for (let i = 0; i < orders; i++) {
    await sleep(Math.max(0, start + i * 1000 - Date.now()));
    const at = Date.now();
    if (i % 2 === 0) {
      const order = stores.shopify.createOrder({ lineItems: [{ sku: 'LAT-1', quantity: 1, grams: 500, price: '20.00' }] });
      placed.push({ shop: SHOPS.shopify, orderId: `S-${order.name.replace('#', '')}`, at });
    } else {
      const order = stores.woo.createOrder({ status: 'processing', lineItems: [{ sku: 'LAT-1', quantity: 1, weight: '0.5' }] });
      placed.push({ shop: SHOPS.woo, orderId: `W-${order.number}`, at });
    }
  }
  return placed;
}

function backlogLabels(api: FakeShippingApi): number {
  return api.labels().filter((l) => l.customerOrderNumber.startsWith('BL-')).length;
}

/** An order without a label by the end of the drain counts as infinitely late (its percentile then shows it). */
function row(path: BacklogLatencyRow['path'], placed: Placed[], labelled: Map<Placed, number>) {
  const waits = placed.map((p) => (labelled.has(p) ? (labelled.get(p)! - p.at) / 1000 : Infinity)).sort((a, b) => a - b);
  const round1 = (n: number) => (Number.isFinite(n) ? Math.round(n * 10) / 10 : n);
  return {
    path,
    liveOrders: placed.length,
    labelled: labelled.size,
    p50Seconds: round1(percentile(waits, 0.5)),
    p95Seconds: round1(percentile(waits, 0.95)),
    maxSeconds: round1(waits.at(-1) ?? NaN),
  };
}
