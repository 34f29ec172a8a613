/**
 * Importing straight from the shop (docs/shop-import.md), against the local Shopify and
 * WooCommerce fakes, in one run:
 *
 * 1. exactly once: --import-orders orders per platform pulled by the shops' schedules into a
 *    worker process while 10 % of them are created or changed mid-pull (WooCommerce at UTC+10/11
 *    with HPOS bumps), the worker SIGKILLed and each store down for a few seconds: orders missed
 *    and doubled, counted from Temporal visibility and the shipments' inputs;
 * 2. the plain polling script beside it, on fresh stores under the same churn: missed, doubled;
 * 3. latency from "placed" to "label created", schedule alone vs webhooks to the trigger (import-latency.ts);
 * 4. Shopify: points per imported order and the share of the restore rate the pull used.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { startFakeShippingApi } from '../fake-shipping-api/server';
import { triggerPull } from '../shop-import/schedule';
import { DEFAULT_PAGE_SIZE } from '../config/shop-import';
import { Churn, listPagesRead, type ChurnCounts, type Platform } from './import-churn';
import { countImport, shipmentsPerPlatformOrder, type ImportCounts } from './import-count';
import { latencyScenario, type ImportLatencyRow } from './import-latency';
import { pullResult, schedulesReady } from './import-pulls';
import {
  FIRST_PULL_MS,
  PLUS_BUCKET,
  SHOPIFY_SHOP,
  shopifyEntry,
  shopifyNeedsLabel,
  startImportStores,
  utcOffset,
  WOO_SHOP,
  WOO_TIMEZONE,
  wooEntry,
  wooNeedsLabel,
  type ImportStores,
} from './import-stores';
import { PLAIN_PAGE_SIZE, PlainImportScript } from './plain-import-script';
import { startShopifyCostProxy, type CostSample } from './shopify-cost-proxy';
import { BENCH_ACCOUNTS, benchProcessEnv, ROOT, sleep, startDevServer, startWorkerProcess, type Proc } from './stack';

export interface ImportExactlyOnceRow extends ImportCounts {
  who: 'this worker' | 'plain script';
  platform: 'Shopify' | 'WooCommerce';
  /** Pulls (runs of the script) until one read nothing new, and how many of them failed. */
  runs: number;
  failedRuns: number;
  firstRunSeconds: number;
  seconds: number;
}

export interface ImportCostRow {
  restoreRate: number;
  /** Actual cost of the pull's reads (every pull of the run), and per order it imported. */
  pullPoints: number;
  ordersImported: number;
  pointsPerOrder: number;
  /** Over the first pull, from its start to its end (the kill and the outage included). */
  firstPullSeconds: number;
  firstPullPointsPerSecond: number;
  firstPullShareOfRestoreRate: number;
  /** The busiest 10 s of any pull. */
  peak10sShareOfRestoreRate: number;
  /** The shipments' write-back over the same run (fulfillments), for scale. */
  writeBackPoints: number;
}

export interface ImportResults {
  ordersPerPlatform: number;
  wooOffset: string;
  outageSeconds: number;
  churn: { worker: ChurnCounts; plain: ChurnCounts };
  exactlyOnce: ImportExactlyOnceRow[];
  cost: ImportCostRow;
  latency: ImportLatencyRow[];
}

export interface ImportOptions {
  orders: number;
  outageSeconds: number;
  latencyOrders: number;
}

const SEED = 7;
/** Tracking never starts at the fake (a week per stage): shipments stop after their label and write-back. */
const WEEK_MS = 7 * 24 * 3600 * 1000;
/** A pull (or script run) that read nothing new ends the loop; more than this many means something is wrong. */
const MAX_RUNS = 30;

export async function importScenario(o: ImportOptions, log: (m: string) => void): Promise<ImportResults> {
  // Bundled once: a worker that bundles at start spends 10+ s of CPU each time, the restart after the kill included.
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-import-'));
  const bundlePath = path.join(tmp, 'workflow-bundle.js');
  writeFileSync(
    bundlePath,
    (await bundleWorkflowCode({ workflowsPath: path.join(ROOT, 'workflows'), logger: new DefaultLogger('WARN') })).code,
  );
  try {
    const worker = await workerUnderChurn(o, bundlePath, log);
    const plain = await plainUnderChurn(o, log);
    const latency = await latencyScenario({ orders: o.latencyOrders, bundlePath }, log);
    return results(o, worker, plain, latency);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function results(
  o: ImportOptions,
  worker: Awaited<ReturnType<typeof workerUnderChurn>>,
  plain: Awaited<ReturnType<typeof plainUnderChurn>>,
  latency: ImportLatencyRow[],
): ImportResults {
  return {
    ordersPerPlatform: o.orders,
    wooOffset: utcOffset(WOO_TIMEZONE),
    outageSeconds: o.outageSeconds,
    churn: { worker: worker.churn, plain: plain.churn },
    exactlyOnce: [...worker.rows, ...plain.rows],
    cost: worker.cost,
    latency,
  };
}

/** A reader's runs until quiet; "first" spans from its start to the end of its first run that read everything (0 until then). */
interface PullLoop {
  runs: number;
  failed: number;
  firstStart: number;
  firstEnd: number;
  end: number;
}

const newLoop = (): PullLoop => ({ runs: 0, failed: 0, firstStart: Date.now(), firstEnd: 0, end: 0 });

/** 1 and 4: the worker's schedules pull both stores while the churn, the kill and the outages happen. */
async function workerUnderChurn(o: ImportOptions, bundlePath: string, log: (m: string) => void) {
  const server = await startDevServer();
  const api = await startFakeShippingApi({ port: 0, trackingStepMs: WEEK_MS, accounts: BENCH_ACCOUNTS });
  const stores = await startImportStores(o.orders, SEED);
  const proxy = await startShopifyCostProxy(stores.shopify.baseUrl);
  const taskQueue = `bench-import-${Date.now()}`;
  const env = {
    ...benchProcessEnv(server, taskQueue, api.baseUrl),
    WORKFLOW_BUNDLE_PATH: bundlePath,
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: '5s',
      [SHOPIFY_SHOP]: shopifyEntry(proxy.url, {}),
      [WOO_SHOP]: wooEntry(stores.woo.baseUrl, {}),
    }),
  };
  let worker = startWorkerProcess(ROOT, env);
  try {
    await schedulesReady(server.client, [SHOPIFY_SHOP, WOO_SHOP]);
    log(`import: ${o.orders} orders per store; the worker's schedules pull them`);
    const churn = new Churn(stores, {
      orders: o.orders,
      // The pull goes on where it was after a kill or an outage: every list request moves it on.
      progress: (p) => listPagesRead(stores, p, o.orders, p === 'shopify' ? DEFAULT_PAGE_SIZE.shopify : DEFAULT_PAGE_SIZE.woocommerce),
      outageSeconds: o.outageSeconds,
      seed: SEED,
      kill: async () => {
        worker = await restart(worker, () => startWorkerProcess(ROOT, env));
      },
      log,
    });
    const began = Date.now();
    const quiet = (shop: string, platform: Platform) => pullUntilQuiet(server.client, shop, () => churn.endOf(platform), log);
    const pulls = Promise.all([quiet(SHOPIFY_SHOP, 'shopify'), quiet(WOO_SHOP, 'woo')]);
    const churnCounts = await churn.run();
    const [shopifyPulls, wooPulls] = await pulls;
    const shopify = countImport(needing(stores, 'shopify'), await shipmentsPerPlatformOrder(server.client, SHOPIFY_SHOP));
    const woo = countImport(needing(stores, 'woo'), await shipmentsPerPlatformOrder(server.client, WOO_SHOP));
    const rows: ImportExactlyOnceRow[] = [
      { who: 'this worker', platform: 'Shopify', ...shopify, ...loopFigures(shopifyPulls, began) },
      { who: 'this worker', platform: 'WooCommerce', ...woo, ...loopFigures(wooPulls, began) },
    ];
    for (const row of rows) log(`import, this worker: ${JSON.stringify(row)}`);
    const cost = costRow(proxy.tally(), shopifyPulls, shopify.shipments);
    log(`import, Shopify cost: ${JSON.stringify(cost)}`);
    return { rows, cost, churn: churnCounts };
  } finally {
    await worker.stop();
    await proxy.close();
    await stores.close();
    await api.close();
    await server.stop();
  }
}

/** SIGKILL, then a new process at once (as a supervisor would start it). */
async function restart(proc: Proc, start: () => Proc): Promise<Proc> {
  const exited = new Promise<void>((resolve) => proc.child.once('exit', () => resolve()));
  proc.child.kill('SIGKILL');
  await exited;
  return start();
}

/** Triggers the shop's schedule again and again, as its interval would, until a pull begun after the churn starts nothing. */
async function pullUntilQuiet(client: Client, shop: string, churnEnd: () => number, log: (m: string) => void): Promise<PullLoop> {
  const loop = newLoop();
  while (loop.runs < MAX_RUNS) {
    loop.runs++;
    const since = Date.now();
    await triggerPull(client, shop);
    const result = await pullResult(client, shop, since);
    if (result === null) {
      loop.failed++;
      log(`import: a pull of ${shop} failed`);
      continue;
    }
    log(`import: pull of ${shop}: ${JSON.stringify(result.counts)}, ${result.pages} pages`);
    loop.firstEnd ||= Date.now();
    if (result.counts.started === 0 && since > churnEnd()) break;
  }
  loop.end = Date.now();
  return loop;
}

function loopFigures(loop: PullLoop, began: number) {
  return {
    runs: loop.runs,
    failedRuns: loop.failed,
    firstRunSeconds: seconds((loop.firstEnd || loop.end) - loop.firstStart),
    seconds: seconds(loop.end - began),
  };
}

function needing(stores: ImportStores, platform: Platform): Set<string> {
  return platform === 'shopify'
    ? new Set(
        stores.shopify
          .orders()
          .filter(shopifyNeedsLabel)
          .map((v) => v.legacyResourceId),
      )
    : new Set(
        stores.woo
          .orders()
          .filter(wooNeedsLabel)
          .map((v) => String(v.id)),
      );
}

/** 4. What the pull's reads cost, and their share of the store's restore rate. */
function costRow(tally: { pull: CostSample[]; otherPoints: number }, loop: PullLoop, imported: number): ImportCostRow {
  const sum = (samples: CostSample[]) => samples.reduce((s, x) => s + x.points, 0);
  const pullPoints = sum(tally.pull);
  const first = tally.pull.filter((x) => x.at >= loop.firstStart && x.at <= loop.firstEnd);
  const firstSeconds = (loop.firstEnd - loop.firstStart) / 1000;
  let peak = 0;
  for (let i = 0, j = 0, inWindow = 0; i < tally.pull.length; i++) {
    inWindow += tally.pull[i]!.points;
    while (tally.pull[j]!.at <= tally.pull[i]!.at - 10_000) inWindow -= tally.pull[j++]!.points;
    peak = Math.max(peak, inWindow);
  }
  return {
    restoreRate: PLUS_BUCKET.restoreRate,
    pullPoints,
    ordersImported: imported,
    pointsPerOrder: round(pullPoints / Math.max(1, imported), 1),
    firstPullSeconds: seconds(loop.firstEnd - loop.firstStart),
    firstPullPointsPerSecond: round(sum(first) / firstSeconds, 1),
    firstPullShareOfRestoreRate: round(sum(first) / firstSeconds / PLUS_BUCKET.restoreRate, 3),
    peak10sShareOfRestoreRate: round(peak / 10 / PLUS_BUCKET.restoreRate, 3),
    writeBackPoints: tally.otherPoints,
  };
}

/** 2. The plain script on fresh stores (the same orders), under the same churn at the same points of its first run. */
async function plainUnderChurn(o: ImportOptions, log: (m: string) => void) {
  const stores = await startImportStores(o.orders, SEED);
  try {
    let abort = new AbortController();
    // A killed or failed run starts again from its first page: the churn goes on once a run is past where the last one stopped.
    const reached: Record<Platform, number> = { shopify: 0, woo: 0 };
    const churn = new Churn(stores, {
      orders: o.orders,
      progress: (p) => reached[p] / Math.ceil(o.orders / PLAIN_PAGE_SIZE[p]),
      outageSeconds: o.outageSeconds,
      seed: SEED,
      // The cron job's process killed: the runs under way stop where they are, the next ones start afresh.
      kill: async () => {
        abort.abort();
        abort = new AbortController();
      },
      log,
    });
    // The script reads far faster than the paced pull: the churn also catches up after each of its pages.
    const urls = { shopifyUrl: stores.shopify.baseUrl, wooUrl: stores.woo.baseUrl };
    const script = new PlainImportScript(urls, FIRST_PULL_MS, (platform, page) => {
      reached[platform] = Math.max(reached[platform], page);
      return churn.step();
    });
    const began = Date.now();
    const quiet = (platform: Platform) =>
      plainUntilQuiet(
        script,
        platform,
        () => abort.signal,
        () => churn.endOf(platform),
        log,
      );
    const runs = Promise.all([quiet('shopify'), quiet('woo')]);
    const counts = await churn.run();
    const [shopifyRuns, wooRuns] = await runs;
    const perOrder = (platform: Platform) =>
      new Map([...script.starts].filter(([key]) => key.startsWith(`${platform}/`)).map(([key, n]) => [key.slice(platform.length + 1), n]));
    const rows: ImportExactlyOnceRow[] = [
      {
        who: 'plain script',
        platform: 'Shopify',
        ...countImport(needing(stores, 'shopify'), perOrder('shopify')),
        ...loopFigures(shopifyRuns, began),
      },
      {
        who: 'plain script',
        platform: 'WooCommerce',
        ...countImport(needing(stores, 'woo'), perOrder('woo')),
        ...loopFigures(wooRuns, began),
      },
    ];
    for (const row of rows) log(`import, plain script: ${JSON.stringify(row)}`);
    return { rows, churn: counts };
  } finally {
    await stores.close();
  }
}

/**
 * The script as a cron job, a second between runs (standing for its minutes: what a run reads
 * depends on its window, not on the spacing), until a run begun after the churn starts no order
 * it had not started before.
 */
async function plainUntilQuiet(
  script: PlainImportScript,
  platform: Platform,
  signal: () => AbortSignal,
  churnEnd: () => number,
  log: (m: string) => void,
): Promise<PullLoop> {
  const loop = newLoop();
  while (loop.runs < MAX_RUNS) {
    loop.runs++;
    const since = Date.now();
    let quiet = false;
    try {
      const { read, firstTime } = await script.run(platform, signal());
      log(`import, plain script ${platform}: read ${read}, ${firstTime} for the first time`);
      loop.firstEnd ||= Date.now();
      quiet = firstTime === 0 && since > churnEnd();
    } catch (err) {
      loop.failed++;
      log(`import, plain script ${platform}: run failed (${err instanceof Error ? err.message : String(err)})`);
    }
    if (quiet) break;
    await sleep(1000);
  }
  loop.end = Date.now();
  return loop;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;
const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

type Table = (title: string, head: string[], rows: Array<Array<string | number>>) => void;

/** The scenario's tables, drawn with the bench's table printer. */
export function printImportTables(r: ImportResults, table: Table): void {
  table(
    `Import exactly once: ${r.ordersPerPlatform} orders per store, 10 % created or changed mid-pull; WooCommerce at UTC${r.wooOffset} with HPOS; the reader killed once and each store down ${r.outageSeconds} s mid-pull`,
    [
      'who',
      'platform',
      'needing a label',
      'shipments',
      'missed',
      'doubled',
      'extra shipments',
      'for orders needing none',
      'runs (failed)',
      'first complete run s',
      'until quiet s',
    ],
    r.exactlyOnce.map((x) => [
      x.who,
      x.platform,
      x.needingLabel,
      x.shipments,
      x.missed,
      x.doubled,
      x.extraShipments,
      x.unneeded,
      `${x.runs} (${x.failedRuns})`,
      x.firstRunSeconds,
      x.seconds,
    ]),
  );
  for (const [who, c] of [
    ['worker', r.churn.worker],
    ['plain script', r.churn.plain],
  ] as const) {
    process.stdout.write(
      `  churn during the ${who}'s run: Shopify ${c.shopify.created} new, ${c.shopify.edited} edited; WooCommerce ${c.woo.created} new, ${c.woo.edited} edited, ${c.woo.hposReads} HPOS reads; ${c.kills} kill, ${c.outages} outages\n`,
    );
  }
  const c = r.cost;
  table(
    `Shopify pull cost: bucket ${PLUS_BUCKET.maximumAvailable} points, ${c.restoreRate}/s restore, budgetShare 0.5`,
    [
      'pull points',
      'orders imported',
      'points/order',
      'first pull s',
      'first pull points/s',
      'share of restore rate, first pull',
      'busiest 10 s',
      'write-back points',
    ],
    [
      [
        c.pullPoints,
        c.ordersImported,
        c.pointsPerOrder,
        c.firstPullSeconds,
        c.firstPullPointsPerSecond,
        `${round(c.firstPullShareOfRestoreRate * 100, 1)} %`,
        `${round(c.peak10sShareOfRestoreRate * 100, 1)} %`,
        c.writeBackPoints,
      ],
    ],
  );
  table(
    `Import latency, placed → label created: ${r.latency[0]?.orders ?? 0} orders per row, one every 2 s per platform`,
    ['trigger', 'platform', 'orders', 'labelled', 'p50 s', 'p95 s', 'max s'],
    r.latency.map((x) => [x.trigger, x.platform, x.orders, x.labelled, x.p50Seconds, x.p95Seconds, x.maxSeconds]),
  );
}
