/**
 * `npm run bench`: change-driven tracking against the timer loop it replaced (the code at
 * TIMER_LOOP_COMMIT, taken from git), measured in the same run on this machine's real Temporal
 * dev server and the local fake API. Prints tables and writes JSON. Run nothing else heavy
 * meanwhile: these figures are CPU and memory of a shared 2-core machine.
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { hasBaselineCommit, TIMER_LOOP_COMMIT } from './baseline';
import { historyScenario, latencyScenario, type HistoryPath, type HistoryRow, type LatencyRow } from './history';
import { scaleScenario, type ScalePath, type ScaleRow } from './scale';
import { rateLimitScenario, rateLimitSettings, type RateLimitRow } from './rate-limit';
import { platformScenario, type PlatformResults } from './shop-platforms';
import { importScenario, printImportTables, type ImportResults } from './shop-import';
import { printShopChangesTable, shopChangesScenario, type ShopChangesRow } from './shop-changes';
import { BACKLOG_LATENCY_TARGET_P95_S, backlogLatencyScenario, type BacklogLatencyRow } from './backlog-latency';
import { capacityScenario, type CapacityResults } from './capacity';
import { shopSyncScenario, type ShopSyncCostRow, type ShopSyncOutageRow } from './shop-sync';
import { startDevServer } from './stack';
import { accountsScenario, printAccountsTables, type AccountsResults } from './accounts';

const HELP = `Usage: npm run bench -- [options]

Scenarios (default: all):
  history   events, workflow tasks and Cloud actions per delivered shipment after N unchanged
            polls, tracking polled per fleet vs the per-shipment tracking activity before it
            (medians over --history-shipments), each target beside it; the same with a
            shop to tell (a webhook connector), beside the code before its changes were told
            inside their task; then tracking latency (a change at the fake until the
            shipment knows it) on both paths
  scale     import --shipments orders into a worker process, time until all are in
            tracking, then worker/server RSS and CPU per tracking poll while they wait,
            and a fresh worker's CPU per poll after the first is SIGKILLed; worker RSS
            steady and peak beside the targets (500 / 700 MB at 10,000) and what holds it
            (each thread's heap, the cached workflows, the main thread's objects by
            constructor); the same for --scale-baseline (each path on its own dev server)
  shop-sync history cost of telling the shop (vs a shop without connector), then a shop
            down for --outage seconds while --shop-sync-shipments run their course
            (time-scaled: the outage stands for 1 h, maxBackoff scaled alike): delivery
            lag once it is back, and events/s against a plain script POSTing the same events
  platforms Shopify and WooCommerce connectors against the local fakes: history cost per
            delivered shipment (webhook vs shopify vs woocommerce); --platform-shipments
            shipments with 10 % of writes cut off after they commit and the worker SIGKILLed
            twice, then the same on a slow host (WooCommerce applies or answers 10 % of writes
            3-6 s late and answers 4 % of calls 429/503 with Retry-After: calls before it ended),
            and a plain one-call-per-event script under the same faults: duplicates;
            a development store's bucket (40 points, 2/s) while they catch up after the store
            was down: share of the restore rate spent, share throttled, over --platform-window
  rate-limit two worker processes against the API limited to --rate-limit calls/s per account:
            --rate-orders orders, then a wave of --rate-wave shipments polling every second,
            then --rate-orders more; accepted/s ÷ limit, share of 429s, label p50/p95 without
            and with the wave, duplicates, calls during a Retry-After; adaptive pacing (the
            fleet's one rate, and each worker's own) vs pacing off uncapped vs pacing off with
            TASK_QUEUE_MAX_ACTIVITIES_PER_SECOND=0.9×limit
  import    orders pulled from the Shopify and WooCommerce fakes by the shops' schedules:
            --import-orders per store with 10 % created or changed mid-pull (WooCommerce at
            UTC+10/11 with HPOS bumps), the worker SIGKILLed and each store down --import-outage s:
            orders missed and doubled, beside a plain polling script under the same churn;
            Shopify points per imported order and share of the restore rate; placed → label
            p50/p95 with the schedule alone (every 30 s) and with webhooks (--import-latency-orders)
  accounts  one fleet of --account-workers worker processes (2), shipping accounts limited to
            --account-limits calls/s, each saturated at once (shipments polling every second,
            then new orders per window); --account-pairs pairs of windows, the first account
            held by --account-hold s Retry-Afters in one window of each pair, in the order
            A B, B A, A B… so load drift cancels within pairs: per window accepted/s ÷ limit,
            429s, label p50/p95 per account, calls with another account's credentials; the
            windows without a hold pooled per account, and the others' accepted/s ÷ limit while
            one is held and label p95 held ÷ not held, all windows pooled, per pair, and the
            pairs' geometric mean (the target's estimate); then credential files replaced, the old ones
            refused, with --rotation-shipments in flight: labels lost, duplicated, refused
            calls, restarts
  shop-changes (only when named) --shop-changes-orders on both platforms, 10 % cancelled, 5 %
            edited, 5 % held at random moments while the API's rate limit holds labels back, 10 % over
            two locations, the worker SIGKILLed once: labels after a known cancel, stale-address
            labels, writes to cancelled orders, duplicates, split orders' fulfillments; change →
            shipment knows p50/p95 with webhooks and with the schedule alone; platform requests
            and update events in unchanged orders
  capacity (only when named) docs/capacity.md's model against a measured fleet: npm run cluster
            (PostgreSQL, two workers), --capacity-shipments started at once and tracked to
            delivery; history events, actions, API calls, history bytes and worker CPU, each
            predicted by the model and measured, and their ratio (target within 25 %)

  backlog-latency (only when named) placed → label created for live orders while a backlog
            drains: --backlog-shipments started as a file import starts them against the API
            limited to --backlog-rate calls/s, then --backlog-live-orders placed one a second in
            webhook-triggered Shopify and WooCommerce fakes; p50/p95/max per path, live orders
            first (task priority) beside the baseline FIFO path, target p95 ≤ 5 s; and per
            path where the live orders' time went, stage by stage (webhook → pull → shipment
            start → first workflow task → label activity → pacer turn → label)

Options:
  --scenario <list>            history,scale,shop-sync,platforms,rate-limit,import,accounts,
                               shop-changes, capacity (default all but shop-changes, capacity)
  --polls <list>               unchanged polls per shipment for history (default 5,5000)
  --history-shipments <n>      shipments per path and poll count (default 3)
  --history-baseline-polls <n> the per-shipment path only up to this many polls (default 401): its
                               polls are server-side retries, about one a second on the dev server,
                               so 5,000 would take 80 minutes; it costs one action per poll
  --shipments <n>              shipments for the change-driven scale run (default 10000)
  --scale-baseline <path>      the scale run's baseline: per-shipment (the tracking activity before
                               the pollers, default) or timer-loop
  --baseline-shipments <n>     shipments of the baseline's scale run (default --shipments for
                               per-shipment, 2500 for timer-loop; 0 skips it)
  --worker-env <list>          settings for the scale runs' workers, e.g.
                               "WORKER_MAX_CACHED_WORKFLOWS=500,WORKER_MAX_CONCURRENT_WORKFLOW_TASKS=20";
                               this tree's worker preloads jemalloc where installed, as
                               npm start does: "LD_PRELOAD=" measures glibc's allocator
  --worker-start <how>         how the scale run starts this tree's worker: npm-start (compiled,
                               its workflow bundle built beforehand: what the Dockerfile and
                               \`npm start\` run; default) or npm-run-worker (the sources through tsx,
                               the bundle made at start: the development command)
  --poll-interval <duration>   tracking poll interval in the scale runs (default 300s)
  --window <seconds>           measurement window once all are in tracking (default 60)
  --import-flags <flags>       extra flags for the import CLI, e.g. "--max-backlog 0" (default none)
  --shop-sync-shipments <n>    shipments in the shop outage (default 100)
  --outage <seconds>           shop downtime standing for one hour (default 60)
  --platform-shipments <n>     shipments of the platforms scenario (default 200)
  --platform-window <seconds>  budget window after the store is back (default 120)
  --rate-limit <n>             the API's limit, calls/s per account (default 20)
  --rate-orders <n>            new orders per phase (default 200)
  --rate-wave <n>              shipments in the tracking wave (default 150)
  --rate-settings <list>       which of adaptive,off,cap,charged,window,noise,worker,worker-charged,
                               worker-noise to run (default all); charged is adaptive pacing against
                               a limiter that counts refused calls too, window against one that
                               counts a sliding window of a second (an integer --rate-limit), noise
                               is adaptive pacing with 10 % unrelated 429s beside the limit; worker*
                               are the same with each worker finding its own pace
                               (SHIPPING_API_PACE_SHARES=worker)
  --import-orders <n>          generated orders per store for the import scenario (default 5000:
                               about 9 minutes here, the whole scenario)
  --import-outage <seconds>    how long each store is down mid-pull (default 10)
  --import-latency-orders <n>  orders placed one a second per trigger mode, Shopify and WooCommerce
                               in turn (default 40)
  --account-limits <list>      the accounts' limits, calls/s (default 5,20,50)
  --account-window <seconds>   a window's shortest length: its new orders are measured until
                               the others' last label, at least this long (default 30)
  --account-hold <seconds>     Retry-After that holds the first account, answered again to its
                               first call after each hold until the others' labels are made
                               (default 30)
  --account-pairs <n>          pairs of windows, one held and one not (default 4)
  --account-workers <n>        worker processes of the windows' fleet, 1 to 8 (default 2; the
                               rotation run has two)
  --account-limiter <plain|charged>  the fake's limiter: charged takes a token for a refused call
                               too (default plain)
  --account-shares <fleet|worker>  the fleet's one rate per account (default), or each worker its
                               own pace (SHIPPING_API_PACE_SHARES=worker), to put beside it
  --account-poll-every <seconds>  the wave's shipments poll every this many seconds, 1 to 10
                               (default 1), 2 × limit × this many of them per account
  --account-orders <seconds>   a window's new orders per account: this many seconds' worth of
                               its limit (default 2)
  --account-starts <n>         a window's new orders start at this many a second, the accounts'
                               interleaved (default 3: under what the two workers here keep up
                               with beside the saturating polls, about 4.5)
  --rotation-shipments <n>     shipments in flight when credentials rotate (default 500; 0 skips
                               the rotation run)
  --shop-changes-orders <n>    orders of the shop-changes scenario, over four shops (default 1000)
  --shop-changes-check <on|off>  the label's check with the shop (import.checkBeforeLabel) in the
                               shop-changes scenario (default on; off measures pulls and webhooks alone)
  --shop-changes-topics <all|new>  the webhooks the webhook shops send: all the pull's topics
                               (default), or only new orders' (orders/create, order.created): the
                               baseline that tells what the change topics' pulls cost
  --backlog-shipments <n>      the backlog of the backlog-latency scenario (default 2000; 10000
                               take about 14 min a path to start on a 2-core machine)
  --backlog-live-orders <n>    its live orders, one a second (default 60)
  --backlog-rate <n>           its fake API's limit, calls/s (default 10: 2,000 labels take 3+ min)
  --backlog-drain <s>          how long after the last live order its label may take (default 60)
  --backlog-baseline <on|off>  also run the baseline path, FIFO as before (default on; off halves a
                               10,000-shipment run)
  --capacity-shipments <n>     shipments of the capacity scenario (default 1000)
  --capacity-step-ms <n>       its fake API's time between tracking stages (default 15000: each label
                               tracked 60 s, long beside the seconds a label takes to join a shard)
  --capacity-poll-ms <n>       its workers' tracking poll interval (default 3000)
  --out <file>                 JSON results (default bench/results.json)
  -h, --help                   this help

The baseline is the worker and workflow code at ${TIMER_LOOP_COMMIT.slice(0, 12)} (needs that commit in git).
`;

const SCALE_BASELINES: Record<string, ScalePath> = { 'per-shipment': 'per-shipment activity', 'timer-loop': 'timer loop' };

/** `NAME=value,NAME=value` (settings for a worker process). */
function settingsList(name: string, text: string): Record<string, string> {
  const out: Record<string, string> = {};
  // A comma starts a new item only before NAME=: a value may hold commas (MALLOC_CONF=a:1,b:2).
  for (const item of text.split(/,(?=\s*[A-Z][A-Z0-9_]*=)/).filter(Boolean)) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(item.trim());
    if (!match) throw new Error(`--${name}: each item must be NAME=value (got "${item}")`);
    out[match[1]!] = match[2]!;
  }
  return out;
}

function positiveInt(name: string, text: string | undefined, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(
      `--${name} must be an integer ${max < Number.MAX_SAFE_INTEGER ? `from ${min} to ${max}` : `>= ${min}`} (got "${text}")`,
    );
  return n;
}

function oneOf<T extends string>(name: string, text: string | undefined, allowed: readonly T[]): T {
  if (!allowed.includes(text as T)) throw new Error(`--${name} must be one of ${allowed.join(', ')} (got "${text}")`);
  return text as T;
}

function onOff(name: string, text: string | undefined): boolean {
  if (text !== 'on' && text !== 'off') throw new Error(`--${name} must be on or off (got "${text}")`);
  return text === 'on';
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'history,scale,shop-sync,platforms,rate-limit,import,accounts' },
      'account-limits': { type: 'string' },
      'account-window': { type: 'string' },
      'account-hold': { type: 'string' },
      'account-pairs': { type: 'string' },
      'account-workers': { type: 'string' },
      'account-limiter': { type: 'string', default: 'plain' },
      'account-poll-every': { type: 'string' },
      'account-shares': { type: 'string', default: 'fleet' },
      'account-starts': { type: 'string' },
      'account-orders': { type: 'string' },
      'rotation-shipments': { type: 'string' },
      'import-orders': { type: 'string' },
      'import-outage': { type: 'string' },
      'import-latency-orders': { type: 'string' },
      'platform-shipments': { type: 'string' },
      'platform-window': { type: 'string' },
      'rate-limit': { type: 'string' },
      'rate-orders': { type: 'string' },
      'rate-wave': { type: 'string' },
      'rate-settings': { type: 'string' },
      'shop-sync-shipments': { type: 'string' },
      outage: { type: 'string' },
      polls: { type: 'string', default: '5,5000' },
      'history-shipments': { type: 'string' },
      'history-baseline-polls': { type: 'string' },
      shipments: { type: 'string' },
      'baseline-shipments': { type: 'string' },
      'scale-baseline': { type: 'string', default: 'per-shipment' },
      'worker-env': { type: 'string', default: '' },
      'worker-start': { type: 'string', default: 'npm-start' },
      'poll-interval': { type: 'string', default: '300s' },
      window: { type: 'string' },
      'import-flags': { type: 'string', default: '' },
      'shop-changes-orders': { type: 'string' },
      'shop-changes-check': { type: 'string', default: 'on' },
      'shop-changes-topics': { type: 'string', default: 'all' },
      'backlog-shipments': { type: 'string' },
      'backlog-live-orders': { type: 'string' },
      'backlog-rate': { type: 'string' },
      'backlog-drain': { type: 'string' },
      'backlog-baseline': { type: 'string', default: 'on' },
      'capacity-shipments': { type: 'string' },
      'capacity-step-ms': { type: 'string' },
      'capacity-poll-ms': { type: 'string' },
      out: { type: 'string', default: 'bench/results.json' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const scenarios = values.scenario.split(',').map((s) => s.trim());
  for (const s of scenarios) {
    if (
      ![
        'history',
        'scale',
        'shop-sync',
        'platforms',
        'rate-limit',
        'import',
        'accounts',
        'shop-changes',
        'capacity',
        'backlog-latency',
      ].includes(s)
    ) {
      throw new Error(
        `--scenario: unknown scenario "${s}" (history, scale, shop-sync, platforms, rate-limit, import, accounts, shop-changes, capacity, backlog-latency)`,
      );
    }
  }
  const polls = values.polls.split(',').map((p) => positiveInt('polls', p.trim(), 5, 2));
  const historyShipments = positiveInt('history-shipments', values['history-shipments'], 3);
  const historyBaselinePolls = positiveInt('history-baseline-polls', values['history-baseline-polls'], 401, 0);
  const shipments = positiveInt('shipments', values.shipments, 10_000);
  const scaleBaseline = SCALE_BASELINES[values['scale-baseline']];
  if (!scaleBaseline) throw new Error(`--scale-baseline: per-shipment or timer-loop (got "${values['scale-baseline']}")`);
  const baselineShipments = positiveInt(
    'baseline-shipments',
    values['baseline-shipments'],
    scaleBaseline === 'timer loop' ? 2_500 : shipments,
    0,
  );
  const workerEnv = settingsList('worker-env', values['worker-env']);
  const workerStart = oneOf('worker-start', values['worker-start'], ['npm-start', 'npm-run-worker'] as const);
  const windowSeconds = positiveInt('window', values.window, 60);
  const importFlags = values['import-flags'].split(' ').filter(Boolean);
  if (!hasBaselineCommit()) throw new Error(`the baseline commit ${TIMER_LOOP_COMMIT} is not in this clone (git fetch --unshallow)`);

  const log = (m: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
  const results: Results = {
    machine: `${process.platform} ${process.arch}, ${cpus().length} cores, node ${process.version}`,
    startedAt: new Date().toISOString(),
  };

  if (scenarios.includes('history')) {
    const server = await startDevServer();
    try {
      results.history = await historyScenario(server, polls, historyShipments, historyBaselinePolls, log);
      results.latency = await latencyScenario(server, 2 * historyShipments, log);
    } finally {
      await server.stop();
    }
  }
  if (scenarios.includes('scale')) {
    const common = { pollInterval: values['poll-interval'], windowSeconds, importFlags, workerEnv, workerStart, log };
    results.scale = [await scaleScenario({ ...common, path: 'fleet pollers', shipments })];
    if (baselineShipments > 0) results.scale.push(await scaleScenario({ ...common, path: scaleBaseline, shipments: baselineShipments }));
  }

  if (scenarios.includes('shop-sync')) {
    const server = await startDevServer();
    try {
      results.shopSync = await shopSyncScenario(
        server,
        {
          shipments: positiveInt('shop-sync-shipments', values['shop-sync-shipments'], 100),
          costShipments: historyShipments,
          outageSeconds: positiveInt('outage', values.outage, 60),
        },
        log,
      );
    } finally {
      await server.stop();
    }
  }

  if (scenarios.includes('platforms')) {
    const server = await startDevServer();
    try {
      results.platforms = await platformScenario(
        server,
        {
          shipments: positiveInt('platform-shipments', values['platform-shipments'], 200, 2),
          costShipments: historyShipments,
          windowSeconds: positiveInt('platform-window', values['platform-window'], 120),
        },
        log,
      );
    } finally {
      await server.stop();
    }
  }

  if (scenarios.includes('rate-limit')) {
    const limit = positiveInt('rate-limit', values['rate-limit'], 20);
    const server = await startDevServer();
    try {
      results.rateLimit = await rateLimitScenario(
        server,
        {
          limit,
          orders: positiveInt('rate-orders', values['rate-orders'], 200),
          wave: positiveInt('rate-wave', values['rate-wave'], 150),
          settings: rateLimitSettings(
            limit,
            values['rate-settings']?.split(',').map((k) => k.trim()),
          ),
        },
        log,
      );
    } finally {
      await server.stop();
    }
  }

  if (scenarios.includes('import')) {
    results.import = await importScenario(
      {
        orders: positiveInt('import-orders', values['import-orders'], 5_000, 20),
        outageSeconds: positiveInt('import-outage', values['import-outage'], 10),
        latencyOrders: positiveInt('import-latency-orders', values['import-latency-orders'], 40, 2),
      },
      log,
    );
  }

  if (scenarios.includes('accounts')) {
    const limits = (values['account-limits'] ?? '5,20,50').split(',').map((l) => positiveInt('account-limits', l.trim(), 1));
    // Checked before the server starts: a wrong option is told at once.
    const options = {
      limits,
      windowSeconds: positiveInt('account-window', values['account-window'], 30),
      holdSeconds: positiveInt('account-hold', values['account-hold'], 30),
      pairs: positiveInt('account-pairs', values['account-pairs'], 4),
      startsPerSecond: positiveInt('account-starts', values['account-starts'], 3),
      orderSeconds: positiveInt('account-orders', values['account-orders'], 2),
      rotationShipments: positiveInt('rotation-shipments', values['rotation-shipments'], 500, 0),
      workers: positiveInt('account-workers', values['account-workers'], 2, 1, 8),
      charged: oneOf('account-limiter', values['account-limiter'], ['plain', 'charged'] as const) === 'charged',
      shares: oneOf('account-shares', values['account-shares'], ['fleet', 'worker'] as const),
      pollSeconds: positiveInt('account-poll-every', values['account-poll-every'], 1, 1, 10),
    };
    const server = await startDevServer();
    try {
      results.accounts = await accountsScenario(server, options, log);
    } finally {
      await server.stop();
    }
  }

  if (scenarios.includes('shop-changes')) {
    results.shopChanges = await shopChangesScenario(
      {
        orders: positiveInt('shop-changes-orders', values['shop-changes-orders'], 1_000, 20),
        seed: 31,
        checkBeforeLabel: onOff('shop-changes-check', values['shop-changes-check']),
        topics: oneOf('shop-changes-topics', values['shop-changes-topics'], ['all', 'new'] as const),
      },
      log,
    );
  }

  if (scenarios.includes('backlog-latency')) {
    results.backlogLatency = await backlogLatencyScenario(
      {
        // 10,000 take about 14 min a path only to start on this 2-core machine: docs/benchmarks.md.
        backlog: positiveInt('backlog-shipments', values['backlog-shipments'], 2_000),
        liveOrders: positiveInt('backlog-live-orders', values['backlog-live-orders'], 60, 2),
        ratePerSecond: positiveInt('backlog-rate', values['backlog-rate'], 10),
        drainMs: positiveInt('backlog-drain', values['backlog-drain'], 60) * 1000,
        baseline: onOff('backlog-baseline', values['backlog-baseline']),
      },
      log,
    );
  }

  if (scenarios.includes('capacity')) {
    results.capacity = await capacityScenario({
      shipments: positiveInt('capacity-shipments', values['capacity-shipments'], 1_000),
      trackingStepMs: positiveInt('capacity-step-ms', values['capacity-step-ms'], 15_000, 100),
      pollIntervalMs: positiveInt('capacity-poll-ms', values['capacity-poll-ms'], 3_000, 100),
      log,
    });
  }

  writeFileSync(values.out, JSON.stringify(results, null, 2) + '\n');
  printTables(results);
  process.stdout.write(`\nJSON: ${values.out}\n`);
  return 0;
}

interface Results {
  machine: string;
  startedAt: string;
  history?: HistoryRow[];
  latency?: LatencyRow[];
  scale?: ScaleRow[];
  shopSync?: { cost: ShopSyncCostRow[]; outage: ShopSyncOutageRow };
  rateLimit?: RateLimitRow[];
  platforms?: PlatformResults;
  import?: ImportResults;
  accounts?: AccountsResults;
  shopChanges?: ShopChangesRow;
  capacity?: CapacityResults;
  backlogLatency?: BacklogLatencyRow[];
}

function printTables(r: Results): void {
  if (r.platforms) printPlatformTables(r.platforms);
  if (r.import) printImportTables(r.import, table);
  if (r.accounts) printAccountsTables(r.accounts, table);
  if (r.shopChanges) printShopChangesTable(r.shopChanges, table);
  if (r.backlogLatency) {
    const rows = r.backlogLatency;
    const s = (x: number) => (Number.isFinite(x) ? x : 'no label');
    table(
      `Placed → label created, webhooks, while a backlog of ${rows[0]!.backlogStarted} shipments drains (API limited to ${rows[0]!.ratePerSecond} calls/s): seconds; target p95 ≤ ${BACKLOG_LATENCY_TARGET_P95_S} s`,
      ['path', 'live orders', 'labelled', 'p50', 'p95', 'max', 'target p95 ≤ 5 s', 'backlog labels by the end', 'backlog start s'],
      rows.map((x) => [
        x.path,
        x.liveOrders,
        x.labelled,
        s(x.p50Seconds),
        s(x.p95Seconds),
        s(x.maxSeconds),
        x.p95Seconds <= BACKLOG_LATENCY_TARGET_P95_S ? 'met' : 'NOT met',
        x.backlogLabels,
        x.backlogStartSeconds,
      ]),
    );
    for (const x of rows) {
      const st = x.stages;
      table(
        `Where the live orders' time went (${x.path}): seconds from the stage before, and from placed; ${st.labelsOnFirstAttempt} of ${st.labelled} labels sent on the first (local) attempt`,
        ['stage', 'orders', 'p50', 'p95', 'p50 from placed', 'p95 from placed'],
        // A stage no live order reached within the run: '-'.
        st.rows.map((s) => [
          s.stage,
          s.orders,
          ...[s.p50, s.p95, s.p50FromPlaced, s.p95FromPlaced].map((v) => (Number.isNaN(v) ? '-' : v)),
        ]),
      );
    }
  }
  if (r.capacity) {
    const c = r.capacity;
    table(
      `Capacity model against npm run cluster (${c.shipments} shipments, ${c.workers} workers, ${c.shards} shards, tracked ${c.trackedSeconds} s polled every ${c.pollIntervalSeconds} s): ${c.wallSeconds} s, ${c.shipmentsPerSecond} shipments/s`,
      ['total', 'model', 'measured', 'measured ÷ model', 'within 25 %'],
      c.rows.map((x) => [x.what, x.predicted, x.measured, x.ratio, x.met ? 'met' : 'NOT met']),
    );
  }
  if (r.rateLimit) {
    const first = r.rateLimit[0]!;
    table(
      `Rate limit: 2 workers, API limited to ${first.limit} calls/s, ${first.orders} orders before and during a wave of ${first.wave} shipments polling every second`,
      [
        'setting',
        'accepted/s ÷ limit (wave)',
        '429 share',
        "the limit's own",
        'calls',
        'label p50/p95 s, no wave',
        'label p50/p95 s, wave',
        'p95 wave ÷ no wave',
        'duplicate labels',
        'workflow tasks to tracking, median / max',
        "calls during the limit's Retry-After",
        "during a noise 429's only",
        's',
      ],
      r.rateLimit.map((x) => [
        x.setting,
        x.acceptedPerLimit,
        `${Math.round(x.share429 * 1000) / 10} %`,
        `${Math.round(x.limitShare429 * 1000) / 10} %`,
        x.calls,
        `${x.labelP50NoWaveSeconds} / ${x.labelP95NoWaveSeconds}`,
        `${x.labelP50WaveSeconds} / ${x.labelP95WaveSeconds}`,
        x.waveP95Ratio,
        x.duplicateLabels,
        `${x.workflowTasksMedian} / ${x.workflowTasksMax}`,
        x.callsDuringRetryAfter,
        x.callsDuringNoiseRetryAfter ?? '-',
        x.seconds,
      ]),
    );
  }
  if (r.shopSync) {
    const { cost, outage: o } = r.shopSync;
    table(
      'Shop sync: history per delivered shipment (medians)',
      ['shop', 'shipments', 'shop events', 'history events', 'workflow tasks', 'actions (est.)'],
      cost.map((c) => [
        c.shop,
        c.shipments,
        c.shopEventsPerShipment,
        c.eventsPerShipment,
        c.workflowTasksPerShipment,
        c.actionsPerShipment,
      ]),
    );
    const [withSync, without] = cost;
    if (withSync && without) {
      process.stdout.write(
        `  telling the shop: +${withSync.eventsPerShipment - without.eventsPerShipment} history events, +${withSync.workflowTasksPerShipment - without.workflowTasksPerShipment} workflow tasks, +${withSync.actionsPerShipment - without.actionsPerShipment} actions per shipment (${ratio(withSync.eventsPerShipment, without.eventsPerShipment)} the events)\n`,
      );
    }
    table(
      `Shop sync: shop down ${o.outageSeconds} s (stands for 1 h; maxBackoff ${o.maxBackoffSeconds} s stands for 5 min)`,
      [
        'shipments',
        'events',
        'lag p50 s',
        'lag max s',
        'lag max after 1 h, scaled (min)',
        'catch-up events/s',
        'plain script events/s',
        'duplicates',
        'gaps/out of order',
        'missing',
      ],
      [
        [
          o.shipments,
          o.events,
          o.lagP50Seconds,
          o.lagMaxSeconds,
          o.scaledLagMaxMinutes,
          o.catchUpEventsPerSecond,
          o.plainScriptEventsPerSecond,
          o.duplicates,
          o.gapsOrOutOfOrder,
          o.missing,
        ],
      ],
    );
    process.stdout.write(`  catch-up rate ${ratio(o.catchUpEventsPerSecond, o.plainScriptEventsPerSecond)} the plain script's\n`);
  }
  if (r.history) {
    table(
      'History per delivered shipment (medians)',
      [
        'path',
        'polls',
        'shipments',
        'events',
        'workflow tasks',
        'runs',
        'actions (est.)',
        'of which pollers',
        'API calls per poll',
        'actions: server, alone',
        'est., alone',
      ],
      r.history.map((h) => [
        h.path,
        h.polls,
        h.shipments,
        h.eventsPerShipment,
        h.workflowTasksPerShipment,
        h.runsPerShipment,
        h.actionsPerShipment,
        h.pollerActionsPerShipment,
        h.callsPerPoll,
        h.serverActionsPerShipment ?? '',
        h.estimatedActionsAlone ?? '',
      ]),
    );
    process.stdout.write(
      "  actions: server, alone: the server's own `action` counter (namespace default) over a run of the fleet's shipments alone, per shipment; est., alone: that run's estimate from history\n",
    );
    // Each target beside today's path, measured in the same run.
    table(
      'Targets: fleet pollers beside the per-shipment activity (same run)',
      ['polls', 'target', 'fleet', 'per-shipment', ''],
      targetRows(r.history, 'fleet pollers', 'per-shipment activity', [
        ['actions per shipment <= 20', (h) => h.actionsPerShipment, (v) => v <= 20],
        ['history events <= 60', (h) => h.eventsPerShipment, (v) => v <= 60],
        ['workflow tasks <= 15', (h) => h.workflowTasksPerShipment, (v) => v <= 15],
        ['API calls per poll = 1', (h) => h.callsPerPoll, (v) => v <= 1.01],
      ]),
    );
    // With a shop to tell, beside the same path before its changes were told inside their task.
    table(
      'Targets with a shop to tell: now beside the regular activity per change (same run)',
      ['polls', 'target', 'now', 'before', ''],
      targetRows(r.history, 'fleet, shop told', 'fleet, shop told (before)', [
        ['history events <= 60', (h) => h.eventsPerShipment, (v) => v <= 60],
        ['workflow tasks <= 15', (h) => h.workflowTasksPerShipment, (v) => v <= 15],
      ]),
    );
  }
  if (r.latency) {
    table(
      'Tracking latency: a change at the API until the shipment knows it (target: p95 within one cadence interval)',
      ['path', 'shipments', 'changes', 'cadence s', 'p50 s', 'p95 s', 'max s', 'p95 ÷ cadence', ''],
      r.latency.map((l) => [
        l.path,
        l.shipments,
        l.changes,
        l.cadenceSeconds,
        l.p50Seconds,
        l.p95Seconds,
        l.maxSeconds,
        l.p95PerCadence,
        l.path === 'fleet pollers' ? (l.p95PerCadence <= 1 ? 'met' : 'NOT MET') : 'baseline',
      ]),
    );
  }
  if (r.scale) printScaleTables(r.scale);
}

/** A target of the history rows: its name, the row's figure, whether the figure meets it. */
type HistoryTarget = [name: string, value: (h: HistoryRow) => number, met: (value: number) => boolean];

/** Per poll count, each target of `path`'s row beside `baseline`'s, measured in the same run. */
function targetRows(
  history: HistoryRow[],
  path: HistoryPath,
  baseline: HistoryPath,
  targets: HistoryTarget[],
): Array<Array<string | number>> {
  const rows: Array<Array<string | number>> = [];
  for (const polls of new Set(history.map((h) => h.polls))) {
    const now = history.find((h) => h.polls === polls && h.path === path);
    const before = history.find((h) => h.polls === polls && h.path === baseline);
    if (!now) continue;
    for (const [name, value, met] of targets)
      rows.push([`${polls} polls`, name, value(now), before ? value(before) : '-', met(value(now)) ? 'met' : 'NOT MET']);
  }
  return rows;
}

/** Worker RSS at 10,000 open shipments (issue 30): steady while they wait, and at the peak of their import. */
const RSS_TARGET_MB = { steady: 500, peak: 700 } as const;

function printScaleTables(rows: ScaleRow[]): void {
  const target = (mb: number, limit: number, s: ScaleRow) =>
    s.path !== 'fleet pollers' ? `${mb} (baseline)` : `${mb} ≤ ${limit}: ${mb <= limit ? 'met' : 'NOT MET'}`;
  table(
    'Open shipments',
    [
      'path',
      'shipments',
      'in tracking',
      's to tracking',
      'per s',
      'worker RSS MB (target)',
      'worker peak MB (target)',
      'server RSS MB',
      'polls in window',
      'worker CPU ms/poll',
      'server CPU ms/poll',
      'worker CPU ms/shipment',
      'server CPU ms/shipment',
      'restarted worker CPU ms/poll (polls)',
    ],
    rows.map((s) => [
      s.path,
      s.shipments,
      s.reachedTracking,
      s.secondsToTracking,
      s.shipmentsPerSecond,
      target(s.workerRssMb, RSS_TARGET_MB.steady, s),
      target(s.workerPeakRssMb, RSS_TARGET_MB.peak, s),
      s.serverRssMb,
      s.pollsInWindow,
      s.workerCpuMsPerPoll,
      s.serverCpuMsPerPoll,
      s.workerCpuMsPerShipment,
      s.serverCpuMsPerShipment,
      `${s.restartedWorkerCpuMsPerPoll} (${s.restartedWorkerPolls})`,
    ]),
  );
  const [fleet, base] = rows;
  if (fleet && base) {
    process.stdout.write(
      `  fleet pollers vs ${base.path}: ${ratio(fleet.shipmentsPerSecond, base.shipmentsPerSecond)} the rate to tracking, ` +
        `${ratio(fleet.workerRssMb / fleet.shipments, base.workerRssMb / base.shipments)} the worker RSS per open shipment, ` +
        `${ratio(fleet.workerPeakRssMb, base.workerPeakRssMb)} the peak, ` +
        `${ratio(fleet.workerCpuMsPerPoll, base.workerCpuMsPerPoll)} the worker CPU and ${ratio(fleet.serverCpuMsPerPoll, base.serverCpuMsPerPoll)} the server CPU per poll\n`,
    );
  }
  const profiled = rows.filter((s) => s.heap);
  if (profiled.length === 0) return;
  table(
    "What holds the worker's memory (end of the window)",
    [
      'path',
      'started as',
      'allocator',
      'RSS MB',
      'main thread heap MB',
      'workflow thread heap MB',
      'outside the heaps MB',
      'of the RSS, file-backed MB',
      'cached workflows',
      'KB per cached workflow',
      'cache misses (replays)',
      'forced evictions',
      'restarted worker RSS MB (cache empty)',
    ],
    profiled.map((s) => {
      const h = s.heap!;
      return [
        s.path,
        s.started,
        s.allocator,
        h.rssMb,
        h.mainHeapMb,
        h.workflowHeapMb,
        h.otherMb,
        h.fileBackedMb,
        h.cachedWorkflows,
        h.kbPerCachedWorkflow,
        s.cacheMisses,
        s.forcedEvictions,
        s.restartedWorkerRssMb,
      ];
    }),
  );
  for (const s of profiled) {
    table(
      `${s.path}: the main thread's live objects by constructor (heap snapshot)`,
      ['constructor', 'objects', 'MB'],
      s.heap!.mainByConstructor.map((c) => [c.name, c.count, c.mb]),
    );
  }
}

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

function table(title: string, head: string[], rows: Array<Array<string | number>>): void {
  const cells = [head, ...rows.map((row) => row.map(String))];
  const widths = head.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  process.stdout.write(
    `\n${title}\n${line(head)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|\n${cells.slice(1).map(line).join('\n')}\n`,
  );
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);

function printPlatformTables(p: PlatformResults): void {
  table(
    'Platform connectors: history per delivered shipment (medians)',
    ['connector', 'shipments', 'history events', 'workflow tasks'],
    p.cost.map((c) => [c.connector, c.shipments, c.eventsPerShipment, c.workflowTasksPerShipment]),
  );
  table(
    `Exactly once: ${p.faults[0]!.orders} orders (half Shopify, half WooCommerce), 10 % of writes cut off after they commit`,
    [
      'who',
      'answers cut off',
      'throttled calls',
      'worker kills',
      'dup. fulfillments',
      'dup. events',
      'events after DELIVERED',
      'dup. tracking items',
      'dup. notes',
      'dup. completed e-mails',
      'orders left without tracking',
      'late writes',
      '429/503 + Retry-After',
      'calls before Retry-After (order / store)',
    ],
    p.faults.map((f) => [
      f.who,
      f.answersCutOff,
      f.throttledCalls,
      f.workerKills,
      f.duplicateFulfillments,
      f.duplicateEvents,
      f.eventsAfterDelivered,
      f.duplicateTrackingItems,
      f.duplicateNotes,
      f.duplicateCompletedEmails,
      f.ordersLeftWithoutTracking ?? 0,
      f.lateWrites ?? '-',
      f.busyAnswers ?? '-',
      f.callsBeforeRetryAfter === undefined ? '-' : `${f.callsBeforeRetryAfter} / ${f.storeCallsBeforeRetryAfter}`,
    ]),
  );
  const b = p.budget;
  table(
    `Shopify budget: ${b.shipments} shipments catching up after the store was down, bucket ${b.bucket}, ${b.windowSeconds} s window`,
    ['points spent', 'share of the restore rate used', 'calls', 'throttled', 'throttled share'],
    [[b.pointsSpent, b.restoreRateUsed, b.calls, b.throttled, `${Math.round(b.throttledShare * 1000) / 10} %`]],
  );
}
