/**
 * `npm run dev` — the whole product on one machine: a Temporal dev server with persistent SQLite
 * state, the fake shipping API (unless SHIPPING_API_BASE_URL points elsewhere) and the worker,
 * as child processes with prefixed output. Ctrl-C stops them all; if one dies, the rest are
 * stopped and this exits non-zero naming it.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { localServerEnv } from '../config/temporal-connection';
import { loadPayloadEncryptionSettings } from '../config/settings';
import { Child } from '../launcher/child';
import { launcherConsole } from '../launcher/console';
import {
  demoSettings,
  fakeApiLaunch,
  FAKE_API_LISTENING,
  LOCAL_NAMESPACE as NAMESPACE,
  workerEnv,
  type DemoSettings,
} from '../launcher/defaults';
import { assertPortsFree } from '../launcher/ports';
import { Supervisor } from '../launcher/supervisor';
import { searchAttributeArgs } from '../launcher/temporal';
import { printDevBanner } from './dev-banner';
import { isHarmlessServerWarning } from './server-warnings';
import { ensureDevKeyFile } from './dev-key';
import { DEV_CONNECTORS_FILE, writeDevFile, writeDevSession } from './dev-session';
import { jemallocPreload } from '../worker/allocator';
import { HELP, launchScript, parseDevOptions, readPackageScripts, scriptProblems, type DevOptions, type Launch } from './dev-options';
import { ensureDevAccounts, type DevAccounts } from './dev-accounts';
import { exampleShops } from './example-shops';
import { isIdleOwnFakeApi } from './own-fake-api';
import { nextOrders, startPlatformStores, subscribeStoreWebhooks, type PlatformStores } from './platform-stores';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { triggerPull } from '../shop-import/schedule';
import { ensureSearchAttributes } from './search-attributes';
import { findTemporalCli, REPO_ROOT } from './temporal-cli';
import { connectWhenReady } from './temporal-ready';
import { priorityDevServerArgs } from './server-priority';
import { findPrometheus, prepareDemoPrometheus, prometheusReady } from './dev-prometheus';

const STOP_TIMEOUT_MS = 15_000;
const out = launcherConsole('dev', { temporal: 35, 'fake-api': 36, shop: 33, worker: 32, codec: 34, prometheus: 31 }, 37);
const children: Array<{ child: Child; launch: Launch }> = [];
const supervisor = new Supervisor({
  out,
  // Reverse start order: the worker drains while Temporal and the API are still there.
  stopAll: async () => {
    for (const { child, launch } of [...children].reverse()) {
      await child.stop({
        signal: 'SIGINT',
        toGroup: launch.signalGroupOnStop,
        graceMs: STOP_TIMEOUT_MS,
        killWaitMs: 2_000,
        onTimeout: () => out.warn(`${child.name} did not stop within ${STOP_TIMEOUT_MS / 1000} s; killing it`),
      });
    }
  },
});
supervisor.handleSignals();

async function main(): Promise<void> {
  const parsed = parseDevOptions(process.argv.slice(2));
  if (!parsed) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const o = await withoutLeftOverApi(parsed);
  useDevKey(o);
  const settings = demoSettings();
  const scripts = await preflight(o);
  const prometheusBinary = o.prometheus ? findPrometheusOrExplain() : undefined;
  const cli = await findCli();
  const codecUrl = await startCodec(o, scripts);
  const { address, dbFile } = await startTemporal(o, cli, codecUrl);
  // Two example accounts beside the default one, on the fake only, unless the shell names its own.
  const accounts = o.externalApi || o.ownAccounts ? undefined : ensureDevAccounts(o.dataDir);
  const apiUrl = await startShippingApi(o, scripts, settings, accounts);
  const accountsFile = accounts?.settingsFor(apiUrl);
  const shop = await startShop(o, scripts);
  await startWorker(
    scripts,
    // A person reads this terminal: one readable line per log entry, unless asked otherwise.
    {
      ...workerEnv(localServerEnv(process.env), { ...settings, address, namespace: NAMESPACE, apiUrl }),
      ...(accountsFile ? { SHIPPING_ACCOUNTS_FILE: accountsFile } : {}),
      LOG_FORMAT: process.env.LOG_FORMAT ?? 'pretty',
      // What production serves, on loopback: probes, the project's counters, the SDK's metrics.
      WORKER_HEALTH_HOST: '127.0.0.1',
      WORKER_HEALTH_PORT: String(o.healthPort),
      METRICS_BIND_ADDRESS: `127.0.0.1:${o.sdkMetricsPort}`,
      // One build across restarts: shipments in .data keep running after a code change (rollouts: docs/production.md).
      WORKER_BUILD_ID: process.env.WORKER_BUILD_ID || 'dev',
      // A worker without keys refuses to start unless told to run in clear.
      ...(o.noEncryption ? { PAYLOAD_ENCRYPTION: 'off' } : {}),
    },
    shop?.connectorsFile,
    shop ? o.triggerPort : undefined,
  );
  if (shop) await connectStores(shop.stores, address, o.triggerPort);
  const prometheusUrl = prometheusBinary ? await startPrometheus(o, prometheusBinary) : undefined;
  // The import and CLI of this checkout find the key and connectors through it (client/dev-checkout.ts).
  writeDevSession(o.dataDir, {
    temporalAddress: address,
    namespace: NAMESPACE,
    // The user's own inline keys are not written anywhere: their terminal exports them itself.
    ...(o.encryption && process.env.PAYLOAD_ENCRYPTION_KEYS_FILE
      ? { payloadEncryptionKeysFile: path.resolve(process.env.PAYLOAD_ENCRYPTION_KEYS_FILE) }
      : {}),
    ...(o.noEncryption ? { payloadEncryption: 'off' as const } : {}),
    ...(shop ? { shopConnectorsFile: shop.connectorsFile } : {}),
  });
  printDevBanner(out, o, {
    address,
    apiUrl,
    dbFile,
    codecUrl,
    shopUrl: shop?.url,
    stores: shop?.stores,
    connectorsFile: shop?.connectorsFile,
    settings,
    prometheusUrl,
    nextOrders: shop ? await nextOrders(shop.stores) : undefined,
    accounts: accounts && accountsFile ? { file: accountsFile, shops: accounts.shops } : undefined,
  });
}

/**
 * A child with its output prefixed by `name`; its exit, unless we stop it, stops everything.
 * detached: each leads its own process group, so a terminal Ctrl-C reaches only us and we stop
 * the children in order; a group can be killed whole (npm -> sh -> tsx -> node).
 */
function startChild(name: string, launch: Launch, env: NodeJS.ProcessEnv): Child {
  const child = new Child({
    name,
    command: launch.command,
    args: launch.args,
    env,
    cwd: REPO_ROOT,
    detached: true,
    output: (line, stderr) => {
      // The dev server logs a burst of connection warnings while it stops; they mean nothing.
      if (supervisor.stopping && name === 'temporal' && !/level=(ERROR|FATAL)/.test(line)) return;
      if (name === 'temporal' && isHarmlessServerWarning(line)) return;
      out.child(name, line, stderr);
    },
    onExit: ({ why, spawnFailed }) => {
      if (supervisor.stopping) return;
      void supervisor.shutdown(
        1,
        `${name} (${launch.display}) ${spawnFailed ? why : `exited unexpectedly (${why})`}; stopping the others.`,
      );
    },
  });
  child.start();
  children.push({ child, launch });
  return child;
}

/** SHIPPING_API_BASE_URL naming this dev's own fake, exported from its banner, while none runs: the fake is started. */
async function withoutLeftOverApi(o: DevOptions): Promise<DevOptions> {
  if (!o.externalApi || !(await isIdleOwnFakeApi(o.externalApi, o.fakeApiPort))) return o;
  out.say(
    `SHIPPING_API_BASE_URL=${o.externalApi} is this dev's own fake API (exported from its banner?) and nothing listens there: starting the fake one`,
  );
  return { ...o, externalApi: undefined };
}

/** Everything that can be checked before starting anything. */
async function preflight(o: DevOptions): Promise<Record<string, string>> {
  const scripts = readPackageScripts();
  const problems = scriptProblems(scripts, o);
  if (problems.length > 0) {
    throw new Error(`Cannot start the dev environment:\n  - ${problems.join('\n  - ')}`);
  }
  await assertPortsFree(
    [
      { port: o.temporalPort, what: 'Temporal gRPC', flag: '--temporal-port' },
      { port: o.uiPort, what: 'Temporal Web UI', flag: '--ui-port' },
      ...(o.externalApi ? [] : [{ port: o.fakeApiPort, what: 'fake shipping API', flag: '--fake-api-port' }]),
      ...(o.ownConnectors ? [] : [{ port: o.shopPort, what: 'shop receiver', flag: '--shop-port' }]),
      ...(o.ownConnectors ? [] : [{ port: o.shopifyPort, what: 'fake Shopify store', flag: '--shopify-port' }]),
      ...(o.ownConnectors ? [] : [{ port: o.wooCommercePort, what: 'fake WooCommerce store', flag: '--woocommerce-port' }]),
      ...(o.ownConnectors ? [] : [{ port: o.triggerPort, what: "worker's platform webhook endpoint", flag: '--trigger-port' }]),
      ...(o.encryption ? [{ port: o.codecPort, what: 'codec server', flag: '--codec-port' }] : []),
      { port: o.healthPort, what: "worker's health and metrics endpoint", flag: '--health-port' },
      { port: o.sdkMetricsPort, what: "worker's SDK metrics endpoint", flag: '--sdk-metrics-port' },
      ...(o.prometheus ? [{ port: o.prometheusPort, what: 'Prometheus', flag: '--prometheus-port' }] : []),
    ],
    { inUseHint: ' (is another `npm run dev` or Temporal server running?)' },
  );
  return scripts;
}

async function findCli(): Promise<string> {
  const cli = await findTemporalCli({ build: true, log: out.say });
  if (!cli) {
    throw new Error(
      'No Temporal CLI: set TEMPORAL_CLI_PATH, put `temporal` on PATH, or install Go so it can be built ' +
        'into .tools/bin (see `npm run temporal:cli -- --help` and docs/dev-server.md).',
    );
  }
  return cli;
}

/** Without keys of the user's own, the data dir's (made on the first start); the children inherit it. */
function useDevKey(o: DevOptions): void {
  if (o.encryption || o.noEncryption) return;
  const { file, created } = ensureDevKeyFile(o.dataDir);
  if (created) out.say(`Made a payload encryption key: ${file} (0600; delete it only together with the rest of ${o.dataDir})`);
  process.env.PAYLOAD_ENCRYPTION_KEYS_FILE = file;
  o.encryption = loadPayloadEncryptionSettings(process.env);
}

/** The codec server comes first: the Web UI is told its address when Temporal starts. */
async function startCodec(o: DevOptions, scripts: Record<string, string>): Promise<string | undefined> {
  if (!o.encryption) return undefined;
  out.say(`Payload encryption on (active key "${o.encryption.activeKeyId}"): starting the codec server on port ${o.codecPort}`);
  const codec = startChild('codec', launchScript(scripts, 'codec-server', ['--port', String(o.codecPort), '--insecure-no-auth']), {
    ...process.env,
    CODEC_SERVER_CORS_ORIGIN: `http://localhost:${o.uiPort},http://127.0.0.1:${o.uiPort}`,
  });
  if (!(await codec.waitForLine(/Codec server listening on/, 60_000))) throw new Error('codec server did not start within 60 s');
  return `http://127.0.0.1:${o.codecPort}`;
}

async function startTemporal(o: DevOptions, cli: string, codecUrl: string | undefined): Promise<{ address: string; dbFile: string }> {
  fs.mkdirSync(o.dataDir, { recursive: true, mode: 0o700 });
  const dbFile = path.join(o.dataDir, 'temporal.db');
  // The database holds the orders (encrypted payloads, but search attributes and ids in clear):
  // readable by you only, like the rest of the data folder. The server creates it (and its
  // -wal/-shm companions) under the umask it inherits; one made by an older version is fixed here.
  process.umask(0o077);
  for (const file of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) if (fs.existsSync(file)) fs.chmodSync(file, 0o600);
  const address = `localhost:${o.temporalPort}`;
  const args = [
    ...['server', 'start-dev', '--db-filename', dbFile, '--port', String(o.temporalPort), '--ui-port', String(o.uiPort)],
    ...['--namespace', NAMESPACE, '--log-level', 'warn'],
    ...(codecUrl ? ['--ui-codec-endpoint', codecUrl] : []),
    ...searchAttributeArgs(),
    ...priorityDevServerArgs(),
  ];
  out.say(`Starting Temporal dev server (${path.relative(process.cwd(), dbFile) || dbFile})`);
  const temporal = startChild(
    'temporal',
    { command: cli, args, display: `${cli} ${args.join(' ')}`, signalGroupOnStop: false },
    process.env,
  );
  const connection = await connectWhenReady(address, {
    namespace: NAMESPACE,
    alive: () => temporal.running,
    what: 'Temporal dev server',
    timeoutMs: 90_000,
  });
  try {
    // start-dev --search-attribute registers attributes only when it creates the database (CLI
    // v1.5.1): on an existing .data/temporal.db, ones added to the code since would be missing.
    const hint = `Delete ${o.dataDir} to start fresh (this drops the local workflow history).`;
    const registered = await ensureSearchAttributes(connection, NAMESPACE, hint);
    if (registered.length > 0) out.say(`Registered search attributes missing from the existing database: ${registered.join(', ')}`);
  } finally {
    await connection.close();
  }
  out.say(`Temporal is up at ${address}`);
  return { address, dbFile };
}

/** The fake shipping API, unless SHIPPING_API_BASE_URL names another; resolves with its URL. */
async function startShippingApi(
  o: DevOptions,
  scripts: Record<string, string>,
  settings: DemoSettings,
  accounts: DevAccounts | undefined,
): Promise<string> {
  if (o.externalApi) {
    out.say(`Using the shipping API at ${o.externalApi} (SHIPPING_API_BASE_URL); not starting the fake one`);
    return o.externalApi;
  }
  out.say(`Starting the fake shipping API on port ${o.fakeApiPort}`);
  const { args, env } = fakeApiLaunch(o.fakeApiPort, o.trackingStepMs, settings);
  // Its labels survive a restart, so a shipment tracking at Ctrl-C is found (and delivered) after it.
  const stateFile = ['--state-file', path.join(o.dataDir, 'fake-shipping-api.json')];
  if (accounts) args.push('--accounts-file', accounts.fakeAccountsFile);
  const fakeApi = startChild('fake-api', launchScript(scripts, 'fake-api', [...args, ...stateFile]), env);
  const listening = await fakeApi.waitForLine(FAKE_API_LISTENING, 60_000);
  if (!listening) throw new Error('fake-api did not print "Fake shipping API listening on <url>" within 60 s');
  return listening[1]!;
}

/** The shop: a reference receiver, and a connector per example shop pointing at it. */
async function startShop(
  o: DevOptions,
  scripts: Record<string, string>,
): Promise<{ url: string; connectorsFile: string; stores: PlatformStores } | undefined> {
  if (o.ownConnectors) {
    out.say('Using your SHOP_CONNECTORS(_FILE) for the worker; not starting the shop receiver');
    return undefined;
  }
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  out.say(`Starting the shop receiver: its page on port ${o.shopPort}`);
  // Webhooks on a port of their own (any free one): taking the shop down closes that one only, so
  // the page keeps answering while the shop catches up. Its journal keeps the page across restarts.
  const args = ['--port', '0', '--page-port', String(o.shopPort), '--journal', path.join(o.dataDir, 'shop-receiver.ndjson')];
  const receiver = startChild('shop', launchScript(scripts, 'shop-receiver', args), {
    ...process.env,
    SHOP_RECEIVER_SECRETS: secret, // in the environment, not on the command line (ps)
  });
  const listening = await receiver.waitForLine(/Shop receiver listening on (\S+)/, 60_000);
  if (!listening) throw new Error('the shop receiver did not print "Shop receiver listening on <url>" within 60 s');
  const url = listening[1]!;
  const pageUrl = `http://127.0.0.1:${o.shopPort}`;
  const shops = exampleShops();
  out.say(`Starting the fake Shopify and WooCommerce stores on ports ${o.shopifyPort} and ${o.wooCommercePort}`);
  const stores = await startPlatformStores(
    { shopify: o.shopifyPort, wooCommerce: o.wooCommercePort },
    (name, script, args) => startChild(name, launchScript(scripts, script, args), process.env),
    o.dataDir,
  );
  // A file (0600), so the worker, the import and the CLI read the same connectors (and their secrets stay off `ps`).
  const connectors = JSON.stringify({
    // Short, so a shop taken down in the demo catches up within seconds of coming back.
    maxBackoff: '10s',
    ...Object.fromEntries(
      shops.map((shop) => [shop, { type: 'webhook', url: `${url}/webhooks/${encodeURIComponent(shop)}`, secrets: [secret] }]),
    ),
    ...stores.connectors,
  });
  const connectorsFile = writeDevFile(o.dataDir, DEV_CONNECTORS_FILE, connectors);
  out.say(`Shops wired to the receiver: ${shops.join(', ')}; to the fake stores: ${Object.keys(stores.connectors).join(', ')}`);
  return { url: pageUrl, connectorsFile, stores };
}

async function startWorker(
  scripts: Record<string, string>,
  env: NodeJS.ProcessEnv,
  shopConnectorsFile: string | undefined,
  triggerPort: number | undefined,
): Promise<void> {
  out.say('Starting the worker');
  const worker = startChild('worker', launchScript(scripts, 'worker', []), {
    ...env,
    ...jemallocPreload(env),
    ...(shopConnectorsFile ? { SHOP_CONNECTORS_FILE: shopConnectorsFile } : {}),
    ...(triggerPort ? { SHOP_TRIGGER_PORT: String(triggerPort) } : {}),
  });
  // The SDK logs "Worker state changed ... RUNNING" once it polls (after bundling the workflows).
  // If the worker dies first, the exit handler stops everything and we never get past this.
  const running = await worker.waitForLine(/RUNNING/, 60_000);
  if (!running) out.warn('The worker has not said it is RUNNING after 60 s; check its output above.');
}

function findPrometheusOrExplain(): string {
  const binary = findPrometheus();
  if (binary) return binary;
  throw new Error(
    process.env.PROMETHEUS_PATH
      ? `--prometheus: PROMETHEUS_PATH=${process.env.PROMETHEUS_PATH} does not exist`
      : '--prometheus needs Prometheus: `apt-get install -y prometheus` (Debian/Ubuntu), or set PROMETHEUS_PATH to its binary',
  );
}

/** Prometheus on the worker's two endpoints with the project's alerts; resolves with its URL. */
async function startPrometheus(o: DevOptions, binary: string): Promise<string> {
  const { command, args } = prepareDemoPrometheus({
    binary,
    dataDir: o.dataDir,
    port: o.prometheusPort,
    healthPort: o.healthPort,
    sdkMetricsPort: o.sdkMetricsPort,
  });
  out.say(`Starting Prometheus on port ${o.prometheusPort} with the project's alerts (metrics/prometheus/alerts.yml)`);
  const prometheus = startChild(
    'prometheus',
    { command, args, display: `${command} ${args.join(' ')}`, signalGroupOnStop: false },
    process.env,
  );
  const url = `http://127.0.0.1:${o.prometheusPort}`;
  if (!(await prometheusReady(url, () => prometheus.running))) throw new Error(`Prometheus did not answer ${url}/-/ready within 60 s`);
  return url;
}

/**
 * The fake stores as import sources: their new-order webhooks go to the worker's trigger endpoint,
 * and each shop's first pull starts now rather than at the schedule's first tick.
 */
async function connectStores(stores: PlatformStores, address: string, triggerPort: number): Promise<void> {
  await subscribeStoreWebhooks(stores, `http://127.0.0.1:${triggerPort}`);
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace: NAMESPACE });
    for (const shop of Object.keys(stores.connectors)) await waitForSchedule(() => triggerPull(client, shop));
  } finally {
    await connection.close();
  }
  out.say(`The fake stores' orders are pulled every minute and at once on their order webhooks (trigger endpoint on port ${triggerPort})`);
}

/** The worker applies the schedules as it starts: the first trigger may come a moment before. */
async function waitForSchedule(trigger: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await trigger();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError) || attempt >= 50) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

main().catch((err: unknown) => {
  void supervisor.shutdown(1, err instanceof Error ? err.message : String(err));
});
