/**
 * Many shipping accounts in one fleet: two worker processes with SHIPPING_ACCOUNTS_FILE against
 * the fake serving three accounts limited to 5, 20 and 50 calls a second, each account's shops
 * saturating it at once (a wave of shipments polling every second, then new orders). Run twice in
 * the same run: as it is, and with the slowest account held by a long Retry-After; the others'
 * label latency is compared between the two. Then rotation: one account's credential files
 * replaced, and its old credentials refused by the fake, while 500 shipments are in flight.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeShippingApi, type FakeAccount, type FakeShippingApi } from '../fake-shipping-api/server';
import { startShipment } from '../order-import/start-shipment';
import type { ShipmentInput } from '../domain/shipment';
import { benchOrder } from './orders';
import { percentile, ROOT, sleep, startWorkerProcess, type DevServer, type Proc } from './stack';

const HOUR_MS = 3_600_000;

export interface AccountsOptions {
  /** Each account's limit, calls a second. */
  limits: number[];
  /** How long each account is measured while saturated. */
  windowSeconds: number;
  /** How long the held account's Retry-After is. */
  holdSeconds: number;
  /** Shipments in flight when the credentials rotate. */
  rotationShipments: number;
}

export interface AccountRow {
  run: string;
  account: string;
  limit: number;
  /** Calls the API accepted per second over the window, over the limit. */
  acceptedPerLimit: number;
  share429: number;
  labels: number;
  labelP50Seconds: number;
  labelP95Seconds: number;
  /** Calls about a label made with another account's credentials (403) or refused credentials (401). */
  foreignCalls: number;
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
  accounts: AccountRow[];
  /** Per account held in the second run: its p95 with the hold over its p95 without. */
  p95Ratios: Record<string, number>;
  rotation: RotationRow;
}

export async function accountsScenario(server: DevServer, opts: AccountsOptions, log: (m: string) => void): Promise<AccountsResults> {
  const names = opts.limits.map((limit) => `a${limit}`);
  const held = names[0]!;
  const accounts: AccountRow[] = [];
  for (const hold of [false, true]) {
    const run = hold ? `${held} held by Retry-After ${opts.holdSeconds} s` : 'no hold';
    log(`accounts, ${run}: ${names.join(', ')} at ${opts.limits.join(', ')} calls/s`);
    accounts.push(...(await saturatedRun(server, opts, run, hold ? held : null, log)));
  }
  const p95Ratios: Record<string, number> = {};
  for (const name of names.slice(1)) {
    const [without, withHold] = accounts.filter((r) => r.account === name);
    p95Ratios[name] = round(withHold!.labelP95Seconds / Math.max(0.001, without!.labelP95Seconds));
  }
  log(`accounts, rotation with ${opts.rotationShipments} shipments in flight`);
  const rotation = await rotationRun(server, opts.rotationShipments, log);
  return { accounts, p95Ratios, rotation };
}

/** A fleet against one fake with an account per limit, each saturated; `held` gets a long 429 first. */
async function saturatedRun(
  server: DevServer,
  opts: AccountsOptions,
  run: string,
  held: string | null,
  log: (m: string) => void,
): Promise<AccountRow[]> {
  const fleet = await startFleet(
    server,
    opts.limits.map((limit) => ({ name: `a${limit}`, limit })),
  );
  try {
    // A wave of 2 × limit shipments per account polling every second: each account saturated.
    const wave = fleet.accounts.flatMap(({ name, limit }) =>
      Array.from({ length: 2 * limit }, (_, i) => fleet.order(name, `W-${i}`, 1000)),
    );
    await startAll(server, fleet.taskQueue, wave);
    await waitForLabels(fleet.fake, wave, log);
    await sleep(5000); // every account at its limit
    if (held) fleet.fake.setFaults({ failNext: [{ account: held, status: 429, retryAfter: String(opts.holdSeconds) }] });
    await sleep(1000);
    const from = Date.now();
    // New orders into the saturated accounts: 4 seconds' worth of each account's limit.
    const orders = fleet.accounts.flatMap(({ name, limit }) =>
      Array.from({ length: 4 * limit }, (_, i) => fleet.order(name, `O-${i}`, HOUR_MS)),
    );
    const startedAt = await startAll(server, fleet.taskQueue, orders);
    const heldOrders = orders.filter((o) => o.account !== held);
    await waitForLabels(fleet.fake, heldOrders, log);
    const to = Math.max(Date.now(), from + opts.windowSeconds * 1000);
    await sleep(to - Date.now());

    const requests = fleet.fake.requestLog();
    const labels = fleet.fake.labels();
    const accountOfLabel = new Map(labels.map((l) => [l.id, l.account]));
    return fleet.accounts.map(({ name, limit }) => {
      const own = requests.filter((r) => r.account === name || (r.account === null && r.id !== null && accountOfLabel.get(r.id) === name));
      const inWindow = own.filter((r) => r.at >= from && r.at <= to);
      const latencies = labels
        .filter((l) => l.account === name && startedAt.has(l.customerOrderNumber))
        .map((l) => (Date.parse(l.createdAt) - startedAt.get(l.customerOrderNumber)!) / 1000);
      return {
        run,
        account: name,
        limit,
        acceptedPerLimit: round(inWindow.filter((r) => r.status !== 429).length / ((to - from) / 1000) / limit),
        share429: round(inWindow.filter((r) => r.status === 429).length / Math.max(1, inWindow.length)),
        labels: latencies.length,
        labelP50Seconds: round(percentile(latencies, 0.5)),
        labelP95Seconds: round(percentile(latencies, 0.95)),
        foreignCalls: own.filter(
          (r) =>
            r.status === 401 || r.status === 403 || (r.id !== null && accountOfLabel.has(r.id) && accountOfLabel.get(r.id) !== r.account),
        ).length,
      };
    });
  } finally {
    await fleet.stop();
  }
}

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
    // Every shipment on to tracking: its order read.
    await waitFor(() => {
      const read = new Set(
        fleet.fake.requestLog().flatMap((r) => (r.endpoint === 'GET /orders' && r.status === 200 && r.id ? [r.id] : [])),
      );
      return fleet.fake.labels().every((l) => read.has(l.id));
    });
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

/** A fake with these accounts, their settings file with credential files, and two worker processes. */
async function startFleet(server: DevServer, accounts: Array<{ name: string; limit: number }>): Promise<Fleet> {
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
    accounts: accounts.map(({ name, limit }) => ({ ...credentials(name, 1), rateLimit: { perSecond: limit, burst: limit } })),
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
  };
  const workers = [startWorkerProcess(ROOT, env), startWorkerProcess(ROOT, env)];
  await sleep(8000); // both workers bundled and polling
  return {
    fake,
    taskQueue,
    accounts,
    workers,
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
      await Promise.all(workers.map((w) => w.stop()));
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts every order at once; resolves with each one's start time by its customer order number. */
async function startAll(server: DevServer, taskQueue: string, orders: ShipmentInput[]): Promise<Map<string, number>> {
  const startedAt = new Map<string, number>();
  await Promise.all(
    orders.map(async (input) => {
      startedAt.set(input.labelRequest.order!.customerOrderNumber!, Date.now());
      await startShipment(server.client, taskQueue, input);
    }),
  );
  return startedAt;
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

async function waitFor(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('accounts: not every shipment reached tracking within 10 minutes');
    await sleep(500);
  }
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
    'Accounts: three accounts saturated at once (two worker processes; accepted/s and 429s over the window)',
    [
      'run',
      'account',
      'limit/s',
      'accepted ÷ limit',
      '429s',
      'labels',
      'label p50 s',
      'label p95 s',
      'calls with another account’s or refused credentials',
    ],
    r.accounts.map((x) => [
      x.run,
      x.account,
      x.limit,
      x.acceptedPerLimit,
      `${round(x.share429 * 100)} %`,
      x.labels,
      orDash(x.labelP50Seconds),
      orDash(x.labelP95Seconds),
      x.foreignCalls,
    ]),
  );
  table(
    'Accounts: label p95 of the others with the first account held ÷ without',
    ['account', 'p95 ratio'],
    Object.entries(r.p95Ratios).map(([account, ratio]) => [account, ratio]),
  );
  const x = r.rotation;
  table(
    'Accounts: credential files replaced (old ones refused) mid-run',
    ['shipments', 'workers', 'labels', 'lost', 'duplicated', 'refused calls', 'worker restarts', 'seconds'],
    [[x.shipments, x.workers, x.labels, x.lost, x.duplicated, x.refusedCalls, x.restarts, x.seconds]],
  );
}
