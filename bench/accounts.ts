/**
 * Many shipping accounts in one fleet: --account-workers worker processes (two unless told) with
 * SHIPPING_ACCOUNTS_FILE against the fake serving accounts limited to --account-limits (5, 20 and
 * 50 calls a second unless told: the first is the one held), each account's shops
 * saturating it at once (a wave of shipments polling every second unless told, then new orders per window,
 * started at a rate the fleet keeps up with). One fleet alternates windows with the first account
 * held by a long Retry-After and windows without, in pairs ordered A B, B A, A B… (so load that
 * drifts over the run cancels within pairs): the others' label p95 over the held windows over
 * that over the windows without, and per pair with the median of those ratios. Then rotation: one account's credential files replaced, and its old
 * credentials refused by the fake, while 500 shipments are in flight.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { startFakeShippingApi, type FakeAccount, type FakeShippingApi } from '../fake-shipping-api/server';
import { startShipment } from '../order-import/start-shipment';
import { shipmentWorkflowId, type ShipmentInput } from '../domain/shipment';
import { ACCOUNT_WORKFLOW_TYPE } from '../workflow-definitions/account';
import { benchOrder } from './orders';
import { median, percentile, ROOT, sleep, startWorkerProcess, type DevServer, type Proc } from './stack';

const HOUR_MS = 3_600_000;
/** After a window, once every shipment of it is on to tracking: every account back at its limit. */
const SETTLE_MS = 5000;

export interface AccountsOptions {
  /** Each account's limit, calls a second. */
  limits: number[];
  /** The shortest window: new orders of each account are measured from their start to this or their last label. */
  windowSeconds: number;
  /** How long the held account's Retry-After is. */
  holdSeconds: number;
  /** Pairs of windows, one held and one not. */
  pairs: number;
  /**
   * A window's new orders start at this many a second, the accounts' interleaved: a rate the
   * fleet's workflow tasks keep up with, so a label's wait is the fleet's pacing and not a queue
   * of hundreds of first workflow tasks (see docs/benchmarks.md).
   */
  startsPerSecond: number;
  /** A window's new orders per account: this many seconds' worth of its limit. */
  orderSeconds: number;
  /** Shipments in flight when the credentials rotate (0: no rotation run). */
  rotationShipments: number;
  /** Worker processes of the fleet whose windows are measured (the rotation run has two). */
  workers: number;
  /** The fake's limiter also takes a token for a call it refuses (a limiter that counts refused calls). */
  charged: boolean;
  /** The fleet's one rate per account (the default), or each worker its own pace (SHIPPING_API_PACE_SHARES=worker). */
  shares: 'fleet' | 'worker';
  /** The wave's shipments poll every this many seconds, 2 × limit × this many of them: twice the limit whatever it is. */
  pollSeconds: number;
}

export interface AccountRow {
  pair: number;
  /** The account held during this window, or null. */
  held: string | null;
  account: string;
  limit: number;
  /** Calls the API accepted per second over the window, over the limit. */
  acceptedPerLimit: number;
  share429: number;
  /** Calls accepted and refused with a 429 in the window. */
  accepted: number;
  refused: number;
  labels: number;
  labelP50Seconds: number;
  labelP95Seconds: number;
  /** Each label's start → created, seconds (the pooled p95). */
  labelSeconds: number[];
  /** Calls about a label made with another account's credentials (403) or refused credentials (401). */
  foreignCalls: number;
  /** Calls that reached the API within a tenth of the limit's interval after the one before (callsAtOnce). */
  atOnce: number;
  seconds: number;
}

/** One account over every window without a hold, and the others' p95 ratios over the pairs. */
export interface AccountSummary {
  account: string;
  limit: number;
  /** Accepted calls per second over all windows without a hold, over the limit. */
  acceptedPerLimit: number;
  /** The same over the windows where another account was held (the held account: null): throughput isolation. */
  acceptedPerLimitOthersHeld: number | null;
  share429: number;
  /** The share of its calls (windows without a hold) that reached the API at once with the one before (callsAtOnce). */
  shareAtOnce: number;
  foreignCalls: number;
  /** Per pair: label p95 in the held window over the window without (the held account: none). */
  p95Ratios: number[];
  /** The p95 of every label of the held windows over that of every label of the windows without (the held account: null). */
  pooledP95Ratio: number | null;
  /**
   * The geometric mean of the per-pair ratios: the average the A B, B A order is made for. Over
   * as many pairs held first as held second it weighs both orders alike, so drift within a pair
   * cancels; on the ratios' logarithms, so 0.8 and 1.25 cancel too. A p95 of 80 labels moves by
   * tens of per cent between windows on this machine, and the median of 8 such ratios lands on
   * whichever side most of them fell.
   */
  p95RatioGeoMean: number | null;
  /** The same over the pairs whose held window came first, and second: how large the place's effect is. */
  p95RatioGeoMeanHeldFirst: number | null;
  p95RatioGeoMeanHeldSecond: number | null;
}

export interface RotationRow {
  shipments: number;
  workers: number;
  labels: number;
  lost: number;
  duplicated: number;
  refusedCalls: number;
  restarts: number;
  seconds: number;
}

export interface AccountsResults {
  /** Worker processes of the windows' fleet. */
  workers: number;
  charged: boolean;
  shares: 'fleet' | 'worker';
  pollSeconds: number;
  windows: AccountRow[];
  summary: AccountSummary[];
  rotation: RotationRow | null;
}

export async function accountsScenario(server: DevServer, opts: AccountsOptions, log: (m: string) => void): Promise<AccountsResults> {
  // Made (or refused) before the run, not at its end: a missing directory lost six minutes' results.
  if (DUMP) mkdirSync(DUMP, { recursive: true });
  const windows = await alternatingRun(server, opts, log);
  let rotation: RotationRow | null = null;
  if (opts.rotationShipments > 0) {
    log(`accounts, rotation with ${opts.rotationShipments} shipments in flight`);
    rotation = await rotationRun(server, opts.rotationShipments, log);
  }
  const { workers, charged, shares, pollSeconds } = opts;
  return { workers, charged, shares, pollSeconds, windows, summary: summarize(windows), rotation };
}

/** One fleet, every account saturated, windows held and not held in pairs A B, B A, A B… */
async function alternatingRun(server: DevServer, opts: AccountsOptions, log: (m: string) => void): Promise<AccountRow[]> {
  const fleet = await startFleet(
    server,
    opts.limits.map((limit) => ({ name: `a${limit}`, limit })),
    opts.workers,
    { charged: opts.charged, shares: opts.shares },
  );
  const held = fleet.accounts[0]!.name;
  try {
    // A wave of 2 × limit × pollSeconds shipments per account polling every pollSeconds: each account saturated.
    const wave = fleet.accounts.flatMap(({ name, limit }) =>
      Array.from({ length: 2 * limit * opts.pollSeconds }, (_, i) => fleet.order(name, `W-${i}`, opts.pollSeconds * 1000)),
    );
    await startAll(server, fleet.taskQueue, wave);
    await waitForLabels(fleet.fake, wave, log);
    await waitForTracking(fleet.fake);
    await sleep(SETTLE_MS);
    const rows: AccountRow[] = [];
    for (let pair = 1; pair <= opts.pairs; pair++) {
      const order = pair % 2 === 1 ? [null, held] : [held, null];
      for (const hold of order) {
        log(`accounts, pair ${pair} of ${opts.pairs}: ${hold ? `${hold} held by Retry-After ${opts.holdSeconds} s` : 'no hold'}`);
        rows.push(...(await measureWindow(fleet, server, opts, pair, hold, log)));
      }
    }
    await writeDumps(server, fleet);
    return rows;
  } finally {
    await fleet.stop();
  }
}

/**
 * One window: `held` (if any) answered 429 with a long Retry-After, then `orderSeconds`' worth of
 * each account's limit in new orders; measured until the others' last label (at least
 * `windowSeconds`), `held` answered 429 again whenever its hold ends before that. Returns once
 * every order of the window has its label and the fleet settled.
 */
async function measureWindow(
  fleet: Fleet,
  server: DevServer,
  opts: AccountsOptions,
  pair: number,
  held: string | null,
  log: (m: string) => void,
): Promise<AccountRow[]> {
  const tag = `P${pair}${held ? 'H' : 'N'}`;
  const orders = interleave(
    fleet.accounts.map(({ name, limit }) =>
      Array.from({ length: opts.orderSeconds * limit }, (_, i) => fleet.order(name, `${tag}-${i}`, HOUR_MS)),
    ),
  );
  let from: number;
  let startedAt: Map<string, number>;
  // Held: every call of the account is answered 429 with the long Retry-After until the others' last label.
  const holdAgain = () => {
    if (held && fleet.fake.setFaults({}).failNext.length === 0) {
      fleet.fake.setFaults({ failNext: [{ account: held, status: 429, retryAfter: String(opts.holdSeconds) }] });
    }
  };
  const heldSince = Date.now();
  holdAgain();
  const keeper = setInterval(holdAgain, 100);
  try {
    if (held) {
      await waitFor('the held account’s 429', () =>
        fleet.fake.requestLog().some((r) => r.at >= heldSince && r.account === held && r.fault === 'fail-next'),
      );
    }
    await sleep(1000);
    from = Date.now();
    startedAt = await startAll(server, fleet.taskQueue, orders, opts.startsPerSecond);
    await waitForLabels(
      fleet.fake,
      orders.filter((o) => o.account !== held),
      log,
    );
  } finally {
    clearInterval(keeper);
    if (held) fleet.fake.setFaults({ failNext: [] });
  }
  const to = Math.max(Date.now(), from + opts.windowSeconds * 1000);
  await sleep(to - Date.now());
  const rows = rowsOf(fleet, { pair, held, from, to, startedAt });
  if (DUMP) dumped.push({ tag, held, from, to, startedAt, orders });
  // The held account's orders go on once the hold ends: the next window starts after them, and
  // after every shipment's work past its label (so none of it spills into the next window).
  await waitForLabels(fleet.fake, orders, log);
  await waitForTracking(fleet.fake);
  await sleep(SETTLE_MS);
  return rows;
}

/** Each account's calls and labels over one window [from, to]. */
function rowsOf(
  fleet: Fleet,
  { pair, held, from, to, startedAt }: { pair: number; held: string | null; from: number; to: number; startedAt: Map<string, number> },
): AccountRow[] {
  const requests = fleet.fake.requestLog();
  const labels = fleet.fake.labels().filter((l) => Date.parse(l.createdAt) <= to);
  const accountOfLabel = new Map(fleet.fake.labels().map((l) => [l.id, l.account]));
  return fleet.accounts.map(({ name, limit }): AccountRow => {
    const own = requests.filter(
      (r) =>
        r.at >= from && r.at <= to && (r.account === name || (r.account === null && r.id !== null && accountOfLabel.get(r.id) === name)),
    );
    const latencies = labels
      .filter((l) => l.account === name && startedAt.has(l.customerOrderNumber))
      .map((l) => (Date.parse(l.createdAt) - startedAt.get(l.customerOrderNumber)!) / 1000);
    const refused = own.filter((r) => r.status === 429).length;
    return {
      pair,
      held,
      account: name,
      limit,
      acceptedPerLimit: round((own.length - refused) / ((to - from) / 1000) / limit),
      share429: round(refused / Math.max(1, own.length)),
      accepted: own.length - refused,
      refused,
      labels: latencies.length,
      labelP50Seconds: round(percentile(latencies, 0.5)),
      labelP95Seconds: round(percentile(latencies, 0.95)),
      labelSeconds: latencies.map(round),
      foreignCalls: own.filter(
        (r) =>
          r.status === 401 || r.status === 403 || (r.id !== null && accountOfLabel.has(r.id) && accountOfLabel.get(r.id) !== r.account),
      ).length,
      atOnce: callsAtOnce(
        own.map((r) => r.receivedAt),
        limit,
      ),
      seconds: round((to - from) / 1000),
    };
  });
}

/**
 * The calls among `arrivals` (epoch ms) that reached the API within a tenth of the limit's
 * interval after the call before: the fleet's grid gives each slot to one worker, so its calls
 * should come one at a time; two at once empty a small account's burst (2 a second: a 429 at
 * 1.84 a second).
 */
export function callsAtOnce(arrivals: number[], limit: number): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  const within = 100 / limit;
  let count = 0;
  for (let i = 1; i < sorted.length; i++) if (sorted[i]! - sorted[i - 1]! < within) count++;
  return count;
}

/** Per account: its windows without a hold pooled, and the p95 ratio of each pair. */
function summarize(windows: AccountRow[]): AccountSummary[] {
  const names = [...new Set(windows.map((w) => w.account))];
  return names.map((account) => {
    const own = windows.filter((w) => w.account === account);
    const free = own.filter((w) => w.held === null);
    const seconds = free.reduce((sum, w) => sum + w.seconds, 0);
    const accepted = free.reduce((sum, w) => sum + w.accepted, 0);
    const refused = free.reduce((sum, w) => sum + w.refused, 0);
    const othersHeld = own.filter((w) => w.held !== null && w.held !== account);
    const ratioOf = (h: AccountRow) => round(h.labelP95Seconds / Math.max(0.001, free.find((w) => w.pair === h.pair)!.labelP95Seconds));
    const p95Ratios = othersHeld.map(ratioOf);
    // alternatingRun: odd pairs run the window without a hold first, even pairs the held one.
    const heldFirst = othersHeld.filter((w) => w.pair % 2 === 0).map(ratioOf);
    const heldSecond = othersHeld.filter((w) => w.pair % 2 === 1).map(ratioOf);
    const heldSeconds = othersHeld.reduce((sum, w) => sum + w.seconds, 0);
    return {
      account,
      limit: own[0]!.limit,
      acceptedPerLimit: round(accepted / Math.max(0.001, seconds) / own[0]!.limit),
      acceptedPerLimitOthersHeld: othersHeld.length
        ? round(othersHeld.reduce((sum, w) => sum + w.accepted, 0) / Math.max(0.001, heldSeconds) / own[0]!.limit)
        : null,
      share429: round(refused / Math.max(1, accepted + refused)),
      shareAtOnce: round(free.reduce((sum, w) => sum + w.atOnce, 0) / Math.max(1, accepted + refused)),
      foreignCalls: own.reduce((sum, w) => sum + w.foreignCalls, 0),
      p95Ratios,
      pooledP95Ratio: p95Ratios.length ? round(pooledP95(own.filter((w) => w.held !== null)) / Math.max(0.001, pooledP95(free))) : null,
      p95RatioGeoMean: geoMean(p95Ratios),
      p95RatioGeoMeanHeldFirst: geoMean(heldFirst),
      p95RatioGeoMeanHeldSecond: geoMean(heldSecond),
    };
  });
}

/** exp of the mean logarithm; null for none. */
function geoMean(xs: number[]): number | null {
  const positive = xs.filter((x) => x > 0);
  return positive.length ? round(Math.exp(positive.reduce((sum, x) => sum + Math.log(x), 0) / positive.length)) : null;
}

const pooledP95 = (windows: AccountRow[]) =>
  percentile(
    windows.flatMap((w) => w.labelSeconds),
    0.95,
  );

/** Credential files replaced, and the old ones refused, while `count` shipments are in flight. */
async function rotationRun(server: DevServer, count: number, log: (m: string) => void): Promise<RotationRow> {
  const fleet = await startFleet(server, [{ name: 'rot', limit: 50 }]);
  const began = Date.now();
  try {
    const orders = Array.from({ length: count }, (_, i) => fleet.order('rot', `R-${i}`, 5000));
    await startAll(server, fleet.taskQueue, orders);
    // Mid-flight: a fifth of the labels made.
    while (fleet.fake.labels().length < count / 5) await sleep(100);
    fleet.rotate('rot');
    log(`accounts, rotation: credentials replaced after ${fleet.fake.labels().length} of ${count} labels`);
    await waitForLabels(fleet.fake, orders, log);
    await waitForTracking(fleet.fake);
    const labels = fleet.fake.labels();
    const perOrder = new Map<string, number>();
    for (const l of labels) perOrder.set(l.customerOrderNumber, (perOrder.get(l.customerOrderNumber) ?? 0) + 1);
    return {
      shipments: count,
      workers: fleet.workers.length,
      labels: perOrder.size,
      lost: orders.filter((o) => !perOrder.has(o.labelRequest.order!.customerOrderNumber!)).length,
      duplicated: [...perOrder.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0),
      refusedCalls: fleet.fake.requestLog().filter((r) => r.status === 401).length,
      restarts: fleet.workers.filter((w) => w.child.exitCode !== null || w.child.signalCode !== null).length,
      seconds: Math.round((Date.now() - began) / 1000),
    };
  } finally {
    await fleet.stop();
  }
}

interface Fleet {
  fake: FakeShippingApi;
  taskQueue: string;
  accounts: Array<{ name: string; limit: number }>;
  workers: Proc[];
  /** An order of the account's shop, polling tracking every `pollIntervalMs`. */
  order(account: string, id: string, pollIntervalMs: number): ShipmentInput;
  /** Replaces the account's credential files and makes the fake refuse the old ones. */
  rotate(account: string): void;
  stop(): Promise<void>;
}

/** A fake with these accounts, their settings file with credential files, and `workers` worker processes. */
async function startFleet(
  server: DevServer,
  accounts: Array<{ name: string; limit: number }>,
  workers = 2,
  o: { charged?: boolean; shares?: 'fleet' | 'worker' } = {},
): Promise<Fleet> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-accounts-'));
  const stamp = randomUUID().slice(0, 8);
  const credentials = (name: string, version: number): FakeAccount => ({
    name,
    apiKey: `${name}-key-${version}`,
    apiToken: `${name}-token-${version}`,
  });
  const writeCredentials = (name: string, version: number) => {
    const { apiKey, apiToken } = credentials(name, version);
    for (const [file, value] of [
      [`${name}.key`, apiKey],
      [`${name}.token`, apiToken],
    ] as const) {
      writeFileSync(path.join(dir, `${file}.new`), `${value}\n`);
      renameSync(path.join(dir, `${file}.new`), path.join(dir, file));
    }
  };
  const fake = await startFakeShippingApi({
    trackingStepMs: HOUR_MS, // tracking never moves: every poll is an unchanged poll
    requestLogSize: 1_000_000, // the alternating run's windows span minutes of every account's calls
    accounts: accounts.map(({ name, limit }) => ({
      ...credentials(name, 1),
      rateLimit: { perSecond: limit, burst: limit, ...(o.charged ? { refusedTakesToken: true } : {}) },
    })),
  });
  for (const { name } of accounts) writeCredentials(name, 1);
  const accountsFile = path.join(dir, 'accounts.json');
  writeFileSync(
    accountsFile,
    JSON.stringify({
      accounts: Object.fromEntries(
        accounts.map(({ name }) => [name, { baseUrl: fake.baseUrl, apiKeyFile: `${name}.key`, apiTokenFile: `${name}.token` }]),
      ),
      shops: Object.fromEntries(accounts.map(({ name }) => [`shop-${name}`, name])),
    }),
  );
  const taskQueue = `bench-accounts-${randomUUID()}`;
  const env = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    SHIPPING_ACCOUNTS_FILE: accountsFile,
    ...(o.shares === 'worker' ? { SHIPPING_API_PACE_SHARES: 'worker' } : {}),
  };
  const procs = Array.from({ length: workers }, () => startWorkerProcess(ROOT, env));
  await waitForPollers(server, taskQueue, workers);
  return {
    fake,
    taskQueue,
    accounts,
    workers: procs,
    order: (account, id, pollIntervalMs) => {
      const orderId = `${account}-${id}-${stamp}`;
      // The account as the import sets it from the shop (config/shipping-accounts.ts: shops).
      return { ...benchOrder(orderId), shop: `shop-${account}`, account, tracking: { pollIntervalMs, pollIntervalsMs: {} } };
    },
    rotate: (account) => {
      writeCredentials(account, 2);
      fake.rotateCredentials(account, { apiKey: credentials(account, 2).apiKey, apiToken: credentials(account, 2).apiToken });
    },
    async stop() {
      await Promise.all(procs.map((w) => w.stop()));
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts the orders, all at once or `perSecond` (evenly spaced, in the given order); resolves
 * once all are started, with each one's start time by its customer order number.
 */
async function startAll(server: DevServer, taskQueue: string, orders: ShipmentInput[], perSecond?: number): Promise<Map<string, number>> {
  const startedAt = new Map<string, number>();
  const began = Date.now();
  const started: Array<Promise<unknown>> = [];
  for (const [i, input] of orders.entries()) {
    if (perSecond) await sleep(began + (i * 1000) / perSecond - Date.now());
    startedAt.set(input.labelRequest.order!.customerOrderNumber!, Date.now());
    started.push(startShipment(server.client, taskQueue, input));
  }
  await Promise.all(started);
  return startedAt;
}

/** The lists merged evenly: each list's items spread over the whole (a list of 20 beside one of 200: one in 11). */
function interleave<T>(lists: T[][]): T[] {
  return lists
    .flatMap((list) => list.map((item, i) => ({ item, at: (i + 0.5) / list.length })))
    .sort((a, b) => a.at - b.at)
    .map(({ item }) => item);
}

async function waitForLabels(fake: FakeShippingApi, orders: ShipmentInput[], log: (m: string) => void): Promise<void> {
  const wanted = new Set(orders.map((o) => o.labelRequest.order!.customerOrderNumber!));
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    const made = fake.labels().filter((l) => wanted.has(l.customerOrderNumber)).length;
    if (made >= wanted.size) return;
    if (Date.now() > deadline) throw new Error(`only ${made} of ${wanted.size} labels after 15 minutes`);
    if (Date.now() % 30_000 < 250) log(`accounts: ${made} of ${wanted.size} labels`);
    await sleep(250);
  }
}

/** Every shipment with a label on to tracking: its order read. */
async function waitForTracking(fake: FakeShippingApi): Promise<void> {
  await waitFor('every shipment in tracking', () => {
    const read = new Set(fake.requestLog().flatMap((r) => (r.endpoint === 'GET /orders' && r.status === 200 && r.id ? [r.id] : [])));
    return fake.labels().every((l) => read.has(l.id));
  });
}

/**
 * Every worker bundled and polling: `count` pollers of the task queue's workflow tasks and of its
 * activity tasks (four workers bundling at once on two cores take longer than a fixed wait).
 */
async function waitForPollers(server: DevServer, taskQueue: string, count: number): Promise<void> {
  const pollers = async (taskQueueType: 1 | 2) =>
    new Set(
      (
        await server.client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType })
      ).pollers?.map((p) => p.identity),
    ).size;
  const deadline = Date.now() + 3 * 60_000;
  while ((await pollers(1)) < count || (await pollers(2)) < count) {
    if (Date.now() > deadline) throw new Error(`accounts: fewer than ${count} workers polling ${taskQueue} after 3 minutes`);
    await sleep(500);
  }
}

async function waitFor(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`accounts: not ${what} within 10 minutes`);
    await sleep(500);
  }
}

/**
 * BENCH_ACCOUNTS_DUMP=<dir>: per window, its orders with their start times and histories
 * (<pair><H|N>.json), the fake's request log (requests.json), to see where a label's time went,
 * and every report, grant and relayed hold of the account workflows (grants.json), to see how
 * the fleet shared each account's rate.
 */
const DUMP = process.env.BENCH_ACCOUNTS_DUMP;
const dumped: Array<{
  tag: string;
  held: string | null;
  from: number;
  to: number;
  startedAt: Map<string, number>;
  orders: ShipmentInput[];
}> = [];
async function writeDumps(server: DevServer, fleet: Fleet): Promise<void> {
  if (!DUMP) return;
  writeFileSync(path.join(DUMP, `requests.json`), JSON.stringify(fleet.fake.requestLog()));
  writeFileSync(path.join(DUMP, `grants.json`), JSON.stringify(await accountExchanges(server)));
  for (const { tag, held, from, to, startedAt, orders } of dumped) {
    const shipments = [];
    for (const o of orders) {
      const workflowId = shipmentWorkflowId(o);
      const history = await server.client.workflow.getHandle(workflowId).fetchHistory();
      const order = o.labelRequest.order!.customerOrderNumber!;
      shipments.push({ account: o.account, order, startedAt: startedAt.get(order), workflowId, history });
    }
    writeFileSync(path.join(DUMP, `${tag}.json`), JSON.stringify({ tag, held, from, to, shipments }));
  }
  dumped.length = 0;
}

/** Each account workflow run's `pace` updates (a worker's report and its grant, with when each was written) and signals, in order. */
async function accountExchanges(server: DevServer): Promise<unknown[]> {
  const decode = (payload: unknown) => {
    try {
      return defaultPayloadConverter.fromPayload(payload as Payload);
    } catch {
      return 'undecodable';
    }
  };
  const out: unknown[] = [];
  for await (const run of server.client.workflow.list({ query: `WorkflowType = '${ACCOUNT_WORKFLOW_TYPE}'` })) {
    const events = (await server.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events ?? [];
    const accepted = new Map<string, { t: number; name?: string | null; args: unknown[] }>();
    for (const e of events) {
      const update = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
      if (update?.meta?.updateId)
        accepted.set(update.meta.updateId, {
          t: optionalTsToMs(e.eventTime) ?? 0,
          name: update.input?.name,
          args: (update.input?.args?.payloads ?? []).map(decode),
        });
      const done = e.workflowExecutionUpdateCompletedEventAttributes;
      if (done?.meta?.updateId)
        out.push({
          wf: run.workflowId,
          run: run.runId,
          ...accepted.get(done.meta.updateId),
          done: optionalTsToMs(e.eventTime) ?? 0,
          result: (done.outcome?.success?.payloads ?? []).map(decode),
        });
      const signal = e.workflowExecutionSignaledEventAttributes;
      if (signal)
        out.push({
          wf: run.workflowId,
          run: run.runId,
          t: optionalTsToMs(e.eventTime) ?? 0,
          signal: signal.signalName,
          args: (signal.input?.payloads ?? []).map(decode),
        });
    }
  }
  return out;
}

const round = (n: number) => Math.round(n * 1000) / 1000;
/** No label in the window (the held account): no latency to print. */
const orDash = (n: number) => (Number.isFinite(n) ? n : '-');

/** The tables `npm run bench` prints for this scenario. */
export function printAccountsTables(
  r: AccountsResults,
  table: (title: string, head: string[], rows: Array<Array<string | number>>) => void,
): void {
  table(
    `Accounts: one fleet (${r.workers === 1 ? 'one worker process' : `${r.workers} worker processes`}; ${r.shares === 'worker' ? 'each worker its own pace' : "the fleet's one rate"}; ${r.charged ? 'a limiter that counts refused calls' : 'a limiter that does not count refused calls'}; the wave polling every ${r.pollSeconds} s), ${r.summary.length} accounts saturated at once; windows held and not held in pairs A B, B A…`,
    [
      'pair',
      'window',
      'account',
      'limit/s',
      'seconds',
      'accepted ÷ limit',
      '429s',
      'calls at once',
      'labels',
      'label p50 s',
      'label p95 s',
      'calls with another account’s or refused credentials',
    ],
    r.windows.map((x) => [
      x.pair,
      x.held ? `${x.held} held` : 'no hold',
      x.account,
      x.limit,
      x.seconds,
      x.acceptedPerLimit,
      `${round(x.share429 * 100)} %`,
      x.atOnce,
      x.labels,
      orDash(x.labelP50Seconds),
      orDash(x.labelP95Seconds),
      x.foreignCalls,
    ]),
  );
  table(
    'Accounts: per account, the windows without a hold pooled; while another is held: accepted ÷ limit, and label p95 held ÷ not held (all windows pooled, per pair, geometric mean of the pairs)',
    [
      'account',
      'limit/s',
      'accepted ÷ limit',
      '429s',
      'calls at once',
      'calls with another account’s or refused credentials',
      'accepted ÷ limit, another held',
      'p95 ratio, windows pooled',
      'p95 ratio, geometric mean of pairs',
      'of pairs held first / second',
      'p95 ratio median',
      'min – max',
      'per pair',
    ],
    r.summary.map((x) => [
      x.account,
      x.limit,
      x.acceptedPerLimit,
      `${round(x.share429 * 100)} %`,
      `${round(x.shareAtOnce * 100)} %`,
      x.foreignCalls,
      x.acceptedPerLimitOthersHeld ?? '-',
      x.pooledP95Ratio ?? '-',
      x.p95RatioGeoMean ?? '-',
      x.p95Ratios.length ? `${x.p95RatioGeoMeanHeldFirst ?? '-'} / ${x.p95RatioGeoMeanHeldSecond ?? '-'}` : '-',
      x.p95Ratios.length ? round(median(x.p95Ratios)) : '-',
      x.p95Ratios.length ? `${Math.min(...x.p95Ratios)} – ${Math.max(...x.p95Ratios)}` : '-',
      x.p95Ratios.join(', ') || '(held)',
    ]),
  );
  const x = r.rotation;
  if (!x) return;
  table(
    'Accounts: credential files replaced (old ones refused) mid-run',
    ['shipments', 'workers', 'labels', 'lost', 'duplicated', 'refused calls', 'worker restarts', 'seconds'],
    [[x.shipments, x.workers, x.labels, x.lost, x.duplicated, x.refusedCalls, x.restarts, x.seconds]],
  );
}
