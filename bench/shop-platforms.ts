/**
 * Platform connectors against the local Shopify and WooCommerce fakes, in one run:
 *
 * 1. cost: history events and workflow tasks per delivered shipment, webhook vs shopify vs woocommerce;
 * 2. exactly once: --platform-shipments shipments (half per platform) with 10 % of writes
 *    committed and then cut off, while the worker process is SIGKILLed twice: duplicate
 *    fulfillments, tracking items, fulfillment events and notes, and events after DELIVERED;
 *    then again on a slow host: WooCommerce also applies or answers 10 % of writes 3–6 s late
 *    and answers 4 % of requests 429/503 with Retry-After (calls that came before it ended);
 * 3. the plain script beside it: the same events, each written the way the field wires it
 *    (one call per event, retried when the answer is lost), under the same faults;
 * 4. budget: a development store's bucket (40 points, 2/s) while the shipments catch up after
 *    the store was down: share of the restore rate spent and of calls throttled, over a window.
 */
import { inProcessWorker } from './in-process-worker';
import { NativeConnection } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { startShopReceiver } from '../shop-receiver/server';
import { loadShopConnectors } from '../platforms/connectors';
import { getWorkflowBundle, installQuietRuntime } from '../test/helpers/temporal-env';
import { platformConnectors } from '../test/helpers/platforms';
import { stateQuery } from '../workflow-definitions/shipment';
import { type ShipmentInput } from '../domain/shipment';
import { oneShipment } from './history';
import { benchOrder } from './orders';
import { plainScript, type PlainScriptCounts } from './plain-platform-script';
import { countDuplicates, type DuplicateCounts } from './platform-duplicates';
import { BENCH_ACCOUNTS, benchProcessEnv, median, ROOT, sleep, startWorkerProcess, type DevServer } from './stack';

export interface PlatformCostRow {
  connector: 'webhook' | 'shopify' | 'woocommerce';
  shipments: number;
  eventsPerShipment: number;
  workflowTasksPerShipment: number;
}

export interface PlatformFaultRow extends DuplicateCounts {
  who: 'this worker' | 'this worker, slow host' | 'plain script';
  orders: number;
  answersCutOff: number;
  /** Shopify calls answered THROTTLED. */
  throttledCalls: number;
  workerKills: number;
  /** Plain script only: orders whose later events found no fulfillment (its create answer was lost). */
  ordersLeftWithoutTracking?: number;
  /** WooCommerce writes applied or answered 3–6 s late (slow host only). */
  lateWrites?: number;
  /** WooCommerce 429/503 answers with Retry-After (slow host only). */
  busyAnswers?: number;
  /** Calls of an order that came before the Retry-After it was given ended, and of the store (slow host only). */
  callsBeforeRetryAfter?: number;
  storeCallsBeforeRetryAfter?: number;
}

/** A site that answers in up to 6 s needs a timeout above that (the tests' 2 s would give up on every late write). */
function slowSite(stack: Stack) {
  return { 'woo-shop': { ...platformConnectors(stack.shopify.baseUrl, stack.woo.baseUrl)['woo-shop'], timeout: '10s' } };
}

/** The slow shared host of the second run: WooCommerce only (Shopify applies writes as it answers). */
const SLOW_HOST = {
  lateWriteRate: 0.1,
  lateWriteMs: { min: 3_000, max: 6_000 },
  rateLimitedRate: 0.02,
  unavailableRate: 0.02,
  retryAfterSeconds: 2,
};

export interface PlatformBudgetRow {
  bucket: string;
  shipments: number;
  windowSeconds: number;
  pointsSpent: number;
  /** pointsSpent ÷ (bucket + restoreRate × window): the share of what the store allowed. */
  restoreRateUsed: number;
  calls: number;
  throttled: number;
  throttledShare: number;
}

export interface PlatformResults {
  cost: PlatformCostRow[];
  faults: PlatformFaultRow[];
  budget: PlatformBudgetRow;
}

interface Stack {
  api: FakeShippingApi;
  shopify: FakeShopify;
  woo: FakeWooCommerce;
}

export async function platformScenario(
  server: DevServer,
  opts: { shipments: number; costShipments: number; windowSeconds: number },
  log: (m: string) => void,
): Promise<PlatformResults> {
  installQuietRuntime();
  const stack: Stack = {
    api: await startFakeShippingApi({ port: 0, trackingStepPolls: 1, accounts: BENCH_ACCOUNTS }),
    shopify: await startFakeShopify({ seed: 7 }),
    woo: await startFakeWooCommerce({ seed: 7 }),
  };
  try {
    const cost = await costPerShipment(server, stack, opts.costShipments, log);
    const ours = await underFaults(server, stack, opts.shipments, log, false);
    const slow = await underFaults(server, stack, opts.shipments, log, true);
    const plain = await plainScript(stack.shopify, stack.woo, opts.shipments, 0.1);
    log(`platforms: plain script ${JSON.stringify(plain)}`);
    const budget = await catchUpBudget(server, stack, opts.shipments, opts.windowSeconds, log);
    return { cost, faults: [ours, slow, plainRow(plain)], budget };
  } finally {
    await Promise.all([stack.api.close(), stack.shopify.close(), stack.woo.close()]);
  }
}

function plainRow(plain: PlainScriptCounts): PlatformFaultRow {
  return { who: 'plain script', workerKills: 0, ...plain };
}

function platformOrder(stack: Stack, shop: 'shopify-shop' | 'woo-shop', orderId: string): ShipmentInput {
  const platformOrderId =
    shop === 'shopify-shop'
      ? stack.shopify.createOrder({ lineItems: [{ sku: 'BENCH-1', quantity: 1 }] }).legacyResourceId
      : String(stack.woo.createOrder({ status: 'processing', lineItems: [{ sku: 'BENCH-1', quantity: 1 }] }).id);
  return { ...benchOrder(orderId), shop, platformOrderId };
}

/** 1. History events and workflow tasks per delivered shipment, per connector type, with an in-process worker. */
async function costPerShipment(server: DevServer, stack: Stack, shipments: number, log: (m: string) => void): Promise<PlatformCostRow[]> {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const receiver = await startShopReceiver({ secrets: [secret] });
  const connection = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-platforms-cost-${Date.now()}`;
  const worker = await platformsWorker(connection, stack, taskQueue, {
    bench: { type: 'webhook', url: receiver.webhookUrl('bench'), secrets: [secret] },
  });
  const stamp = Date.now();
  try {
    return await worker.runUntil(async () => {
      const rows: PlatformCostRow[] = [];
      for (const [connector, shop] of [
        ['webhook', 'bench'],
        ['shopify', 'shopify-shop'],
        ['woocommerce', 'woo-shop'],
      ] as const) {
        const measured = [];
        for (let i = 0; i < shipments; i++) {
          const input = shop === 'bench' ? benchOrder(`PC-${shop}-${i}-${stamp}`) : platformOrder(stack, shop, `PC-${shop}-${i}-${stamp}`);
          measured.push(await oneShipment(server, taskQueue, input));
        }
        rows.push({
          connector,
          shipments,
          eventsPerShipment: median(measured.map((m) => m.events)),
          workflowTasksPerShipment: median(measured.map((m) => m.workflowTasks)),
        });
        log(
          `platforms cost, ${connector}: ${rows.at(-1)!.eventsPerShipment} events, ${rows.at(-1)!.workflowTasksPerShipment} workflow tasks`,
        );
      }
      return rows;
    });
  } finally {
    await connection.close();
    await receiver.close();
  }
}

/**
 * 2. Half the shipments per platform, 10 % of writes cut off after they commit, the worker process
 * SIGKILLed twice; on a slow host also WooCommerce's late writes and 429/503 with Retry-After.
 */
async function underFaults(
  server: DevServer,
  stack: Stack,
  shipments: number,
  log: (m: string) => void,
  slowHost: boolean,
): Promise<PlatformFaultRow> {
  const taskQueue = `bench-platforms-faults-${Date.now()}`;
  const env = {
    ...benchProcessEnv(server, taskQueue, stack.api.baseUrl),
    TRACKING_POLL_INTERVAL: '200ms',
    SHOP_CONNECTORS: JSON.stringify(platformConnectors(stack.shopify.baseUrl, stack.woo.baseUrl, slowHost ? slowSite(stack) : {})),
  };
  stack.shopify.resetStats();
  stack.woo.resetStats();
  stack.shopify.setFaults({ commitThenDropRate: 0.1 });
  stack.woo.setFaults({ commitThenDropRate: 0.1, ...(slowHost ? SLOW_HOST : {}) });
  let worker = startWorkerProcess(ROOT, env);
  const stamp = Date.now();
  const inputs = Array.from({ length: shipments }, (_, i) =>
    platformOrder(stack, i % 2 === 0 ? 'shopify-shop' : 'woo-shop', `PF${slowHost ? 'S' : ''}-${i}-${stamp}`),
  );
  const handles = await Promise.all(
    inputs.map(async (input) => server.client.workflow.getHandle((await startShipment(server.client, taskQueue, input)).workflowId)),
  );
  let kills = 0;
  for (const afterSeconds of [8, 8]) {
    await sleep(afterSeconds * 1000);
    worker.child.kill('SIGKILL');
    kills++;
    log(`platforms faults: worker SIGKILLed (${kills})`);
    worker = startWorkerProcess(ROOT, env);
  }
  await Promise.all(handles.map((h) => h.result()));
  const states = await Promise.all(handles.map((h) => h.query(stateQuery)));
  const undelivered = states.filter((s) => s.shopSync?.status !== 'up_to_date').length;
  if (undelivered > 0) log(`platforms faults: ${undelivered} shipments did not end up_to_date`);
  await worker.stop();
  stack.shopify.setFaults({ commitThenDropRate: 0 });
  stack.woo.setFaults({ commitThenDropRate: 0, lateWriteRate: 0, rateLimitedRate: 0, unavailableRate: 0, retryAfterSeconds: null });
  // A write queued by the slow host may land after the shipment ended: counted once it has.
  if (slowHost) await sleep(SLOW_HOST.lateWriteMs.max + 1_000);
  const woo = stack.woo.stats();
  const counts = countDuplicates(
    stack.shopify,
    stack.woo,
    inputs.map((i) => ({ shop: i.shop, platformOrderId: i.platformOrderId! })),
  );
  const row: PlatformFaultRow = {
    who: slowHost ? 'this worker, slow host' : 'this worker',
    orders: shipments,
    answersCutOff: stack.shopify.stats().dropped + woo.droppedAfterCommit,
    throttledCalls: stack.shopify.stats().throttled + stack.shopify.stats().http429,
    workerKills: kills,
    ...counts,
    ...(slowHost
      ? {
          lateWrites: woo.lateWrites,
          busyAnswers: woo.rateLimited + woo.unavailable,
          callsBeforeRetryAfter: woo.callsBeforeRetryAfter,
          storeCallsBeforeRetryAfter: woo.storeCallsBeforeRetryAfter,
        }
      : {}),
  };
  log(`platforms faults: ${JSON.stringify(row)}`);
  return row;
}

/** 4. The store down while the shipments run their course, then back with a development store's bucket. */
async function catchUpBudget(
  server: DevServer,
  stack: Stack,
  shipments: number,
  windowSeconds: number,
  log: (m: string) => void,
): Promise<PlatformBudgetRow> {
  const bucket = { maximumAvailable: 40, restoreRate: 2 };
  stack.shopify.setBucket(bucket);
  stack.shopify.setFaults({ down: true });
  const connection = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-platforms-budget-${Date.now()}`;
  // maxBackoff 5 s stands for the default 5 min after a one-hour outage, as in the shop-sync scenario.
  const worker = await platformsWorker(connection, stack, taskQueue, { maxBackoff: '5s' });
  const stamp = Date.now();
  try {
    return await worker.runUntil(async () => {
      const handles = await Promise.all(
        Array.from({ length: shipments }, async (_, i) => {
          const started = await startShipment(server.client, taskQueue, platformOrder(stack, 'shopify-shop', `PB-${i}-${stamp}`));
          return server.client.workflow.getHandle(started.workflowId);
        }),
      );
      // A query that times out on a loaded machine is asked again: it measures nothing.
      const ended = (h: (typeof handles)[number]) =>
        h.query(stateQuery).then(
          (s) => s.outcome !== null,
          () => false,
        );
      for (const handle of handles) while (!(await ended(handle))) await sleep(200);
      log(
        `platforms budget: all ${shipments} shipments ended with the store down; it comes back with a ${bucket.maximumAvailable}/${bucket.restoreRate} bucket`,
      );
      stack.shopify.resetStats();
      stack.shopify.setFaults({ down: false });
      await sleep(windowSeconds * 1000);
      const stats = stack.shopify.stats();
      const allowed = bucket.maximumAvailable + bucket.restoreRate * windowSeconds;
      const row: PlatformBudgetRow = {
        bucket: `${bucket.maximumAvailable} points, ${bucket.restoreRate}/s`,
        shipments,
        windowSeconds,
        pointsSpent: stats.pointsSpent,
        restoreRateUsed: round(stats.pointsSpent / allowed),
        calls: stats.requests,
        throttled: stats.throttled + stats.http429,
        throttledShare: round((stats.throttled + stats.http429) / Math.max(1, stats.requests)),
      };
      log(`platforms budget: ${JSON.stringify(row)}`);
      return row;
    });
  } finally {
    stack.shopify.setBucket({ maximumAvailable: 2000, restoreRate: 100 });
    await connection.close();
  }
}

/** A worker in this process with the platform shops (and `extra` connector entries), tracking every 10 ms. */
async function platformsWorker(connection: NativeConnection, stack: Stack, taskQueue: string, extra: Record<string, unknown>) {
  return inProcessWorker({
    connection,
    taskQueue,
    apiBaseUrl: stack.api.baseUrl,
    pollIntervalMs: 10,
    shopConnectors: loadShopConnectors({
      SHOP_CONNECTORS: JSON.stringify(platformConnectors(stack.shopify.baseUrl, stack.woo.baseUrl, extra)),
    }),
    workflowBundle: await getWorkflowBundle(),
  });
}

const round = (n: number) => Math.round(n * 1000) / 1000;
