/**
 * `npm run chaos -- --platform`: hostile stores beside healthy ones (issue 28). One worker
 * process and a dev server; four shops pulled every 5 s: a healthy Shopify and WooCommerce store
 * (the fakes) and a hostile one of each (the fakes behind chaos/hostile-store.ts). Orders are
 * placed in every store, one a second, through two phases of `--duration` each: a clean phase
 * (the hostile stores answer as the fakes do) and a hostile one (half their answers rewritten:
 * absurd throttleStatus, orders dated 2999 or "garbage", malformed and huge orders, paging that
 * never ends, echoing 403 pages, a day's Retry-After, HTML). It reports the healthy shops'
 * placed-to-label latency per phase, what the hostile shops' pulls came to, whether the worker
 * lived, and any credential in its output.
 */
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument -- the hostile stores rewrite answers of any shape */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { inClear } from '../config/settings';
import { localServerEnv } from '../config/temporal-connection';
import { mulberry32 } from '../fake-shipping-api/faults';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { triggerPull } from '../shop-import/schedule';
import { SHOP_PULL_WORKFLOW_TYPE } from '../workflow-definitions/shop-pull';
import { BENCH_ACCOUNTS, benchProcessEnv, ROOT, sleep, startDevServer, type DevServer } from '../bench/stack';
import { shopifyEntry, wooEntry } from '../bench/import-stores';
import { labelTimes, percentile } from '../bench/import-latency';
import { editJson, startHostileStore, type StoreAnswer, type StoreRequest, type Tamper } from './hostile-store';

export interface PlatformChaosOptions {
  /** Length of each phase. */
  durationMs: number;
  seed: number;
  log: (line: string) => void;
}

export interface LatencyRow {
  phase: 'clean' | 'hostile';
  shop: string;
  orders: number;
  labelled: number;
  p50Seconds: number;
  p95Seconds: number;
}

export interface PlatformChaosReport {
  rows: LatencyRow[];
  /** Pull runs of the hostile shops by status, over both phases. */
  hostilePulls: Record<string, Record<string, number>>;
  /** Answers of the hostile stores rewritten, by kind. */
  tampered: Record<string, number>;
  workerExits: number;
  secretsInOutput: string[];
  failures: string[];
}

const SHOPS = {
  healthyShopify: 'healthy-shopify',
  healthyWoo: 'healthy-woo',
  hostileShopify: 'hostile-shopify',
  hostileWoo: 'hostile-woo',
};
const SECRETS = ['shpat_fake_dev_token', 'ck_fake_dev_key', 'cs_fake_dev_secret'];
const WEEK_MS = 7 * 86_400_000;
const PULL_EVERY_MS = 5_000;
/** After a phase's last order, how long its labels may take. */
const DRAIN_MS = 60_000;
/** Share of a hostile store's answers rewritten in the hostile phase. */
const HOSTILE_RATE = 0.5;

export async function runPlatformChaos(o: PlatformChaosOptions): Promise<PlatformChaosReport> {
  const server = await startDevServer();
  const api = await startFakeShippingApi({ port: 0, trackingStepMs: WEEK_MS, accounts: BENCH_ACCOUNTS });
  const healthy = { shopify: await startFakeShopify(), woo: await startFakeWooCommerce() };
  const fakes = { shopify: await startFakeShopify(), woo: await startFakeWooCommerce() };
  const hostile = { shopify: await startHostileStore(fakes.shopify.baseUrl), woo: await startHostileStore(fakes.woo.baseUrl) };
  const settings = { every: '1h', overlap: '1m', maxPages: 50 };
  const connectors = {
    maxBackoff: '5s',
    [SHOPS.healthyShopify]: shopifyEntry(healthy.shopify.baseUrl, settings),
    [SHOPS.healthyWoo]: wooEntry(healthy.woo.baseUrl, settings),
    [SHOPS.hostileShopify]: shopifyEntry(hostile.shopify.url, settings),
    // Query-string auth: an echoing page quotes the key pair.
    [SHOPS.hostileWoo]: { ...wooEntry(hostile.woo.url, settings), auth: 'query-string' },
  };
  const worker = startWorker(server, api, connectors);
  const tampered: Record<string, number> = {};
  try {
    const rows: LatencyRow[] = [];
    for (const phase of ['clean', 'hostile'] as const) {
      const random = mulberry32(o.seed);
      const count = (kind: string) => (tampered[kind] = (tampered[kind] ?? 0) + 1);
      hostile.shopify.tamper(phase === 'hostile' ? mix(SHOPIFY_TAMPERS, random, count) : null);
      hostile.woo.tamper(phase === 'hostile' ? mix(WOO_TAMPERS, random, count) : null);
      o.log(`platform chaos: ${phase} phase, ${o.durationMs / 1000} s`);
      const placed = await placeAndPull(server, healthy, fakes, o.durationMs);
      rows.push(...latencyRows(phase, placed, await labelTimes(api, placed, DRAIN_MS)));
    }
    hostile.shopify.tamper(null);
    hostile.woo.tamper(null);
    return {
      rows,
      hostilePulls: await pullsByStatus(server),
      tampered,
      workerExits: worker.exits(),
      secretsInOutput: SECRETS.filter((s) => worker.output().includes(s)),
      failures: [],
    };
  } finally {
    await worker.stop();
    await Promise.all([hostile.shopify.close(), hostile.woo.close()]);
    await Promise.all([healthy.shopify.close(), healthy.woo.close(), fakes.shopify.close(), fakes.woo.close()]);
    await api.close();
    await server.stop();
  }
}

/** Checks of a report: what makes the run exit 1. */
export function platformChaosFailures(report: PlatformChaosReport): string[] {
  const failures: string[] = [];
  if (report.workerExits > 0) failures.push(`the worker process exited ${report.workerExits} time(s)`);
  if (report.secretsInOutput.length > 0) failures.push(`credentials in the worker's output: ${report.secretsInOutput.length}`);
  for (const row of report.rows)
    if (row.labelled < row.orders) failures.push(`${row.phase} ${row.shop}: ${row.orders - row.labelled} orders without a label`);
  return failures;
}

export function platformChaosTable(report: PlatformChaosReport): string {
  const lines = ['| phase | healthy shop | orders | labelled | p50 s | p95 s |', '|---|---|---|---|---|---|'];
  for (const r of report.rows) lines.push(`| ${r.phase} | ${r.shop} | ${r.orders} | ${r.labelled} | ${r.p50Seconds} | ${r.p95Seconds} |`);
  const pulls = Object.entries(report.hostilePulls).map(
    ([shop, byStatus]) =>
      `${shop}: ${Object.entries(byStatus)
        .map(([status, n]) => `${n} ${status.toLowerCase()}`)
        .join(', ')}`,
  );
  return [
    lines.join('\n'),
    '',
    `Hostile answers sent: ${Object.entries(report.tampered)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
    `Hostile shops' pulls: ${pulls.join('; ')}`,
    `Worker process exits: ${report.workerExits}; credentials in its output: ${report.secretsInOutput.length}`,
  ].join('\n');
}

// ---------------------------------------------------------------- the run

interface Placed {
  shop: string;
  orderId: string;
  at: number;
}

/** One order a second in each store (healthy and hostile), every shop's pull triggered every 5 s. */
async function placeAndPull(
  server: DevServer,
  healthy: { shopify: FakeShopify; woo: FakeWooCommerce },
  hostile: { shopify: FakeShopify; woo: FakeWooCommerce },
  durationMs: number,
): Promise<Placed[]> {
  const placed: Placed[] = [];
  const start = Date.now();
  for (let i = 0; Date.now() - start < durationMs; i++) {
    await sleep(Math.max(0, start + i * 1000 - Date.now()));
    const line = { sku: 'CHAOS-1', quantity: 1 };
    const shopifyOrder = healthy.shopify.createOrder({ lineItems: [{ ...line, grams: 500 }] });
    placed.push({ shop: SHOPS.healthyShopify, orderId: `S-${shopifyOrder.name.replace('#', '')}`, at: Date.now() });
    const wooOrder = healthy.woo.createOrder({ status: 'processing', lineItems: [{ ...line, weight: '0.5' }] });
    placed.push({ shop: SHOPS.healthyWoo, orderId: `W-${wooOrder.number}`, at: Date.now() });
    hostile.shopify.createOrder({ lineItems: [{ ...line, grams: 500 }] });
    hostile.woo.createOrder({ status: 'processing', lineItems: [{ ...line, weight: '0.5' }] });
    if (i % (PULL_EVERY_MS / 1000) === 0)
      await Promise.all(Object.values(SHOPS).map((shop) => triggerPull(server.client, shop).catch(() => undefined)));
  }
  return placed;
}

function latencyRows(phase: LatencyRow['phase'], placed: Placed[], labelled: Map<Placed, number>): LatencyRow[] {
  return [SHOPS.healthyShopify, SHOPS.healthyWoo].map((shop) => {
    const mine = placed.filter((p) => p.shop === shop);
    const waits = mine.flatMap((p) => (labelled.has(p) ? [(labelled.get(p)! - p.at) / 1000] : [])).sort((a, b) => a - b);
    return {
      phase,
      shop,
      orders: mine.length,
      labelled: waits.length,
      p50Seconds: percentile(waits, 0.5),
      p95Seconds: percentile(waits, 0.95),
    };
  });
}

async function pullsByStatus(server: DevServer): Promise<Record<string, Record<string, number>>> {
  const out: Record<string, Record<string, number>> = {};
  for await (const wf of server.client.workflow.list({ query: `WorkflowType = '${SHOP_PULL_WORKFLOW_TYPE}'` })) {
    const shop = [SHOPS.hostileShopify, SHOPS.hostileWoo].find((s) => wf.workflowId.startsWith(`shop-pull-${s}-`));
    if (!shop) continue;
    const byStatus = (out[shop] ??= {});
    byStatus[wf.status.name] = (byStatus[wf.status.name] ?? 0) + 1;
  }
  return out;
}

/** The worker as a process whose whole output is kept (for the credentials check) and whose exits are counted. */
function startWorker(server: DevServer, api: FakeShippingApi, connectors: Record<string, unknown>) {
  // In clear: its client reads the results without the codec.
  const env = {
    ...inClear(localServerEnv(process.env)),
    ...benchProcessEnv(server, `chaos-platform-${Date.now()}`, api.baseUrl),
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    SHOP_CONNECTORS: JSON.stringify(connectors),
  };
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'worker', 'main.ts')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let exits = 0;
  let stopping = false;
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  child.on('exit', () => void (stopping || exits++));
  return {
    output: () => output,
    exits: () => exits,
    async stop() {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------- what the hostile stores send

type Rewrite = (request: StoreRequest, answer: StoreAnswer) => StoreAnswer | undefined;

/** Each answer, with HOSTILE_RATE, gets one rewrite drawn from `table`; `count` hears which. */
function mix(table: Record<string, Rewrite>, random: () => number, count: (kind: string) => void): Tamper {
  const kinds = Object.keys(table);
  return (request, answer) => {
    if (random() >= HOSTILE_RATE) return undefined;
    const kind = kinds[Math.floor(random() * kinds.length)]!;
    const sent = table[kind]!(request, answer);
    if (sent !== undefined) count(kind);
    return sent;
  };
}

const firstShopifyOrder =
  (edit: (order: Record<string, any>) => void): Rewrite =>
  (_req, answer) =>
    editJson(answer, (json) => {
      const node = json?.data?.orders?.nodes?.[0];
      if (node) edit(node);
    });

const firstWooOrder =
  (edit: (order: Record<string, any>) => void): Rewrite =>
  (req, answer) =>
    req.url.includes('/wc/v3/orders?')
      ? editJson(answer, (json) => {
          if (Array.isArray(json) && json[0]) edit(json[0]);
        })
      : undefined;

const echo: Rewrite = (req) => ({
  status: 403,
  headers: { 'content-type': 'text/html' },
  text: `<html><body>Blocked: ${req.method} ${req.url} ${JSON.stringify(req.headers)}</body></html>`,
});
const dayLong: Rewrite = () => ({ status: 429, headers: { 'retry-after': '86400' }, text: 'slow down' });
const html: Rewrite = () => ({ status: 200, headers: { 'content-type': 'text/html' }, text: '<html><body>Maintenance</body></html>' });

const SHOPIFY_TAMPERS: Record<string, Rewrite> = {
  throttleStatus: (_req, answer) =>
    editJson(answer, (json) => {
      if (json?.extensions?.cost)
        json.extensions.cost.throttleStatus = { maximumAvailable: 1000, currentlyAvailable: -1e308, restoreRate: 1e-300 };
    }),
  futureDate: firstShopifyOrder((o) => (o.updatedAt = '2999-01-01T00:00:00Z')),
  garbageDate: firstShopifyOrder((o) => (o.updatedAt = 'garbage')),
  nullTitle: firstShopifyOrder((o) => {
    const line = o.fulfillmentOrders?.nodes?.[0]?.lineItems?.nodes?.[0];
    if (line) line.productTitle = null;
  }),
  hugeName: firstShopifyOrder((o) => (o.name = 'N'.repeat(300_000))),
  endlessPages: (_req, answer) =>
    editJson(answer, (json) => {
      const info = json?.data?.orders?.pageInfo;
      if (info?.endCursor) info.hasNextPage = true;
    }),
  echo,
  dayLong,
  html,
};

const WOO_TAMPERS: Record<string, Rewrite> = {
  futureDate: firstWooOrder((o) => (o.date_modified_gmt = '2999-01-01T00:00:00')),
  garbageDate: firstWooOrder((o) => (o.date_modified_gmt = 'garbage')),
  decimalQuantity: firstWooOrder((o) => {
    if (o.line_items?.[0]) o.line_items[0].quantity = 1.5;
  }),
  hugeId: firstWooOrder((o) => (o.id = 2 ** 53 + 2)),
  hugeName: firstWooOrder((o) => (o.number = 'N'.repeat(300_000))),
  endlessPages: (req, answer) =>
    req.url.includes('/wc/v3/orders?') && !req.url.includes('include=')
      ? editJson(answer, (json) => {
          const first = Array.isArray(json) ? json[0] : undefined;
          if (!first) return;
          json.length = 0;
          for (let i = 0; i < 100; i++) json.push({ ...first, id: 9_000_000 + Math.floor(Math.random() * 1e6) });
        })
      : undefined,
  echo,
  dayLong,
  unavailable: () => ({ status: 503, headers: { 'content-type': 'text/html' }, text: '<html>503 Service Unavailable</html>' }),
};
