/**
 * `npm run dev`'s command line and what is checked before anything starts: its help text, its
 * options, the npm scripts it runs (and how to run each as one process).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadPayloadEncryptionSettings } from '../config/settings';
import {
  DEFAULT_FAKE_API_PORT,
  DEFAULT_TEMPORAL_PORT,
  DEMO_TRACKING_STEP_MS,
  DEMO_POLL_INTERVAL,
  DEV_API_KEY,
  DEV_API_TOKEN,
  LOCAL_NAMESPACE as NAMESPACE,
} from '../launcher/defaults';
import { DEFAULT_TASK_QUEUE } from '../domain/shipment';
import { PLATFORM_SHOPS } from './example-shops';
import { REPO_ROOT } from './temporal-cli';

export const DEFAULTS = {
  temporalPort: DEFAULT_TEMPORAL_PORT,
  uiPort: 8233,
  fakeApiPort: DEFAULT_FAKE_API_PORT,
  shopReceiverPort: 8090,
  shopifyPort: 4020,
  wooCommercePort: 4030,
  codecPort: 8888,
  triggerPort: 4040,
  healthPort: 8081,
  sdkMetricsPort: 9464,
  prometheusPort: 9090,
  dataDir: path.join(REPO_ROOT, '.data'),
  // A minute a checkpoint: a shipment stays in tracking for about five minutes, long enough to
  // watch its pending poll in the Web UI (the tests pass a few hundred ms).
  trackingStepMs: DEMO_TRACKING_STEP_MS,
};

export const HELP = `Usage: npm run dev [-- options]

Runs the shipping worker locally with everything it needs, as child processes:
  temporal   Temporal dev server (\`temporal server start-dev\`) with this project's search
             attributes, state kept in <data-dir>/temporal.db, Web UI on --ui-port
  fake-api   the fake shipping API (\`npm run fake-api\`), only if SHIPPING_API_BASE_URL is unset
             or names its own address with nothing listening there (an export from the banner);
             its labels are kept in <data-dir>/fake-shipping-api.json across restarts
  shop       the reference shop receiver (\`npm run shop-receiver\`) with a page of the orders on
             --shop-port (it stays up while the shop is down: webhooks have a port of their own)
             and the example files' shops wired to it (signed webhooks, a fresh secret per run);
             what it was told is kept in <data-dir>/shop-receiver.ndjson across restarts;
             only if SHOP_CONNECTORS and SHOP_CONNECTORS_FILE are unset
  shopify    a fake Shopify store (\`npm run fake-shopify\`) on --shopify-port, wired to the
             shop ${PLATFORM_SHOPS.shopify}: fulfillments, tracking and events land there
  woocommerce a fake WooCommerce store (\`npm run fake-woocommerce\`) on --woocommerce-port,
             wired to the shop ${PLATFORM_SHOPS.woocommerce}: tracking items, notes, statuses
             (six seeded orders each at the first start; their orders, fulfillments, notes and
             tracking are kept in <data-dir>/fake-shopify.json and fake-woocommerce.json across
             restarts; only without SHOP_CONNECTORS(_FILE));
             both are import sources too: the worker pulls their orders on a schedule per shop,
             and their order webhooks reach the worker's trigger endpoint on --trigger-port
  codec      the codec server (\`npm run codec-server\`): payloads are encrypted (personal data
             in orders) with PAYLOAD_ENCRYPTION_KEYS(_FILE) if set, else with a key made once
             in <data-dir>/payload-encryption.keys (0600); the Web UI decrypts through it
             (loopback, no token: the dev server's Web UI cannot send one)
  worker     the worker (\`npm run worker\`), connected to all of them; its /livez, /readyz and
             /metrics (the project's counters) on 127.0.0.1:--health-port, and the SDK's metrics
             on 127.0.0.1:--sdk-metrics-port (loopback only: no authentication)
  prometheus with --prometheus: Debian's Prometheus (\`apt-get install -y prometheus\`, or
             PROMETHEUS_PATH) on 127.0.0.1:--prometheus-port, scraping both every 5 s with the
             project's alert rules (metrics/prometheus/alerts.yml, every "for:" shortened to 1m
             for the demo): its Alerts page shows them fire and resolve; state in <data-dir>/prometheus/

Ctrl-C stops all of them. If one exits on its own, the others are stopped too and npm run dev
exits non-zero naming it.

Options:
  --temporal-port <n>     Temporal gRPC port (default ${DEFAULTS.temporalPort})
  --ui-port <n>           Temporal Web UI port (default ${DEFAULTS.uiPort})
  --fake-api-port <n>     fake shipping API port (default ${DEFAULTS.fakeApiPort})
  --shop-port <n>         shop page and admin port (default ${DEFAULTS.shopReceiverPort})
  --shopify-port <n>      fake Shopify store port, its admin page at / (default ${DEFAULTS.shopifyPort})
  --woocommerce-port <n>  fake WooCommerce store port, its admin page at / (default ${DEFAULTS.wooCommercePort})
  --codec-port <n>        codec server port, with encryption keys (default ${DEFAULTS.codecPort})
  --trigger-port <n>      the worker's platform webhook endpoint (SHOP_TRIGGER_PORT; default ${DEFAULTS.triggerPort})
  --health-port <n>       the worker's /livez, /readyz, /metrics (default ${DEFAULTS.healthPort})
  --sdk-metrics-port <n>  the worker's Temporal SDK metrics, METRICS_BIND_ADDRESS (default ${DEFAULTS.sdkMetricsPort})
  --prometheus            also run Prometheus with the project's alerts (see above)
  --prometheus-port <n>   its web UI and API (default ${DEFAULTS.prometheusPort})
  --data-dir <dir>        where the state lives (default .data/): Temporal's SQLite file, the fakes'
                          and the shop page's state, the payload key; stop, then delete it to reset
  --tracking-step-ms <n>  fake API: time between tracking checkpoints (default ${DEFAULTS.trackingStepMs}: about
                          5 minutes from label to delivered; 3000 for a fast run)
  --no-encryption         store payloads in clear (names, addresses and phones readable in the
                          Web UI and the database); no codec server
  -h, --help              this text

Environment:
  PROMETHEUS_PATH         Prometheus binary for --prometheus (else \`prometheus\` on PATH)
  TEMPORAL_CLI_PATH       Temporal CLI to use (else \`temporal\` on PATH, else .tools/bin/temporal,
                          else built with Go into .tools/bin; see docs/dev-server.md)
  SHIPPING_API_BASE_URL   use this shipping API instead of starting the fake one (its own
                          address, http://127.0.0.1:<fake-api-port>, with nothing listening: the fake)
  SHIPPING_API_KEY        API key for the shipping API (default "${DEV_API_KEY}", as the fake expects)
  SHIPPING_API_TOKEN      API token for the shipping API (default "${DEV_API_TOKEN}")
  SHIPPING_ACCOUNTS_FILE  your shipping accounts for the worker, instead of the example ones
                          ("sandbox" and "production" on the fake, in <data dir>/accounts/)
  TRACKING_POLL_INTERVAL  worker's tracking poll interval (default ${DEMO_POLL_INTERVAL} here, for the demo)
  SHOP_CONNECTORS(_FILE)  your own shop connectors for the worker; then no shop receiver is started
  TEMPORAL_TASK_QUEUE     task queue of the worker (default ${DEFAULT_TASK_QUEUE})
  LOG_LEVEL               worker log level (passed through)
  PAYLOAD_ENCRYPTION_KEYS keyId=base64-32-bytes,...: your keys instead of the data dir's; also
                          PAYLOAD_ENCRYPTION_KEYS_FILE, PAYLOAD_ENCRYPTION_KEY_ID
The worker always gets TEMPORAL_ADDRESS=localhost:<temporal-port> and TEMPORAL_NAMESPACE=${NAMESPACE},
and none of the shell's other Temporal connection settings (TEMPORAL_API_KEY, TEMPORAL_TLS*,
TEMPORAL_PROFILE, the profile file).
`;

export interface DevOptions {
  temporalPort: number;
  uiPort: number;
  fakeApiPort: number;
  shopPort: number;
  shopifyPort: number;
  wooCommercePort: number;
  codecPort: number;
  triggerPort: number;
  healthPort: number;
  sdkMetricsPort: number;
  /** --prometheus: Prometheus with the project's alerts, scraping the worker. */
  prometheus: boolean;
  prometheusPort: number;
  dataDir: string;
  trackingStepMs: string;
  /** SHIPPING_API_BASE_URL: then no fake API is started. */
  externalApi: string | undefined;
  /** SHOP_CONNECTORS(_FILE): then no shop receiver is started. */
  ownConnectors: boolean;
  /** SHIPPING_ACCOUNTS(_FILE): then the worker gets those, not the example accounts. */
  ownAccounts: boolean;
  encryption: ReturnType<typeof loadPayloadEncryptionSettings>;
  /** --no-encryption: payloads in clear. */
  noEncryption: boolean;
}

/** The options, or undefined after printing --help. Throws on a bad flag or bad encryption keys. */
export function parseDevOptions(argv: string[]): DevOptions | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      'temporal-port': { type: 'string' },
      'ui-port': { type: 'string' },
      'fake-api-port': { type: 'string' },
      'shop-port': { type: 'string' },
      'shopify-port': { type: 'string' },
      'woocommerce-port': { type: 'string' },
      'codec-port': { type: 'string' },
      'trigger-port': { type: 'string' },
      'health-port': { type: 'string' },
      'sdk-metrics-port': { type: 'string' },
      prometheus: { type: 'boolean', default: false },
      'prometheus-port': { type: 'string' },
      'data-dir': { type: 'string' },
      'tracking-step-ms': { type: 'string' },
      'no-encryption': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  const o = {
    temporalPort: parsePort(values['temporal-port'], DEFAULTS.temporalPort, '--temporal-port'),
    uiPort: parsePort(values['ui-port'], DEFAULTS.uiPort, '--ui-port'),
    fakeApiPort: parsePort(values['fake-api-port'], DEFAULTS.fakeApiPort, '--fake-api-port'),
    shopPort: parsePort(values['shop-port'], DEFAULTS.shopReceiverPort, '--shop-port'),
    shopifyPort: parsePort(values['shopify-port'], DEFAULTS.shopifyPort, '--shopify-port'),
    wooCommercePort: parsePort(values['woocommerce-port'], DEFAULTS.wooCommercePort, '--woocommerce-port'),
    ownConnectors: Boolean(process.env.SHOP_CONNECTORS || process.env.SHOP_CONNECTORS_FILE),
    ownAccounts: Boolean(process.env.SHIPPING_ACCOUNTS || process.env.SHIPPING_ACCOUNTS_FILE),
    codecPort: parsePort(values['codec-port'], DEFAULTS.codecPort, '--codec-port'),
    triggerPort: parsePort(values['trigger-port'], DEFAULTS.triggerPort, '--trigger-port'),
    healthPort: parsePort(values['health-port'], DEFAULTS.healthPort, '--health-port'),
    sdkMetricsPort: parsePort(values['sdk-metrics-port'], DEFAULTS.sdkMetricsPort, '--sdk-metrics-port'),
    prometheus: values.prometheus,
    prometheusPort: parsePort(values['prometheus-port'], DEFAULTS.prometheusPort, '--prometheus-port'),
    // Bad keys stop us here, before anything starts (the error names the variable, never the key).
    encryption: loadPayloadEncryptionSettings(process.env),
    dataDir: path.resolve(values['data-dir'] ?? DEFAULTS.dataDir),
    trackingStepMs: values['tracking-step-ms'] ?? String(DEFAULTS.trackingStepMs),
    externalApi: process.env.SHIPPING_API_BASE_URL,
    // The shell's PAYLOAD_ENCRYPTION=off means the same as the flag, for the worker and the banner.
    noEncryption: values['no-encryption'] || process.env.PAYLOAD_ENCRYPTION === 'off',
  };
  if (o.noEncryption && o.encryption) throw new Error('--no-encryption and PAYLOAD_ENCRYPTION_KEYS(_FILE) contradict each other: drop one');
  if (!/^\d+$/.test(o.trackingStepMs)) throw new Error(`--tracking-step-ms must be a number of milliseconds, got "${o.trackingStepMs}"`);
  return o;
}

function parsePort(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${flag} must be a port number, got "${value}"`);
  return n;
}

// ---------------------------------------------------------------- npm scripts

export function readPackageScripts(): Record<string, string> {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  return pkg.scripts ?? {};
}

/** Problems with an npm script the dev environment runs: missing, or naming a missing .ts file. */
export function checkScript(scripts: Record<string, string>, script: string, expectedFile: string): string[] {
  const command = scripts[script];
  if (!command) {
    return [`package.json has no "${script}" script (expected to run ${expectedFile}; is it written yet?)`];
  }
  const problems: string[] = [];
  for (const file of command.match(/[\w./-]+\.[cm]?[tj]s\b/g) ?? []) {
    if (!fs.existsSync(path.join(REPO_ROOT, file))) problems.push(`npm run ${script} runs "${command}", but ${file} does not exist`);
  }
  return problems;
}

/** Problems with the scripts these options would run, all at once, so the user fixes them in one go. */
export function scriptProblems(scripts: Record<string, string>, o: DevOptions): string[] {
  return [
    ...checkScript(scripts, 'worker', 'worker/main.ts'),
    ...(o.externalApi ? [] : checkScript(scripts, 'fake-api', 'fake-shipping-api/main.ts')),
    ...(o.ownConnectors ? [] : checkScript(scripts, 'shop-receiver', 'shop-receiver/main.ts')),
    ...(o.ownConnectors ? [] : checkScript(scripts, 'fake-shopify', 'fake-shopify/main.ts')),
    ...(o.ownConnectors ? [] : checkScript(scripts, 'fake-woocommerce', 'fake-woocommerce/main.ts')),
    ...(o.encryption ? checkScript(scripts, 'codec-server', 'codec/server-main.ts') : []),
  ];
}

export interface Launch {
  command: string;
  args: string[];
  /** What the user would type, for messages. */
  display: string;
  signalGroupOnStop: boolean;
}

/**
 * How to run npm script `name` with `extraArgs`. A plain `tsx <file> [args]` script runs as
 * `node --import tsx <file> [args]`: the same thing in ONE process, so the SIGINT we send on
 * Ctrl-C reaches it exactly once. (Via `npm run`, dash does not forward signals, and tsx's
 * own relay re-sends SIGINT, then SIGKILLs its child, when the child does not acknowledge the
 * signal within 30 ms — a busy worker would be killed mid-drain.) Anything fancier runs through
 * `npm run` and is stopped by signalling its whole process group.
 */
export function launchScript(scripts: Record<string, string>, name: string, extraArgs: string[]): Launch {
  const script = (scripts[name] ?? '').trim();
  const tokens = script.split(/\s+/);
  if (/^[\w./=:@-]+(\s+[\w./=:@-]+)*$/.test(script) && tokens[0] === 'tsx' && /\.[cm]?[tj]s$/.test(tokens[1] ?? '')) {
    return {
      command: process.execPath,
      args: ['--import', 'tsx', ...tokens.slice(1), ...extraArgs],
      display: `npm run ${name}${extraArgs.length ? ` -- ${extraArgs.join(' ')}` : ''} (as node --import tsx ${tokens.slice(1).join(' ')})`,
      signalGroupOnStop: false,
    };
  }
  return {
    command: 'npm',
    args: ['run', '--silent', name, ...(extraArgs.length ? ['--', ...extraArgs] : [])],
    display: `npm run ${name}${extraArgs.length ? ` -- ${extraArgs.join(' ')}` : ''}`,
    signalGroupOnStop: true,
  };
}
