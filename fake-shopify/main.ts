/**
 * Command line of the fake Shopify store: `npx tsx fake-shopify/main.ts --port 4020 [flags]`.
 * Run with --help for every flag. Exit codes: 0 normal/--help, 1 start-up failure, 2 bad flags.
 */
import { parseArgs } from 'node:util';
import { closeOnSignals } from '../local-http/local-server';
import { DEFAULTS } from './defaults';
import type { ShopifyFaultsPatch } from './faults';
import type { SeedOrder } from './seed';
import { startFakeShopify } from './server';
import type { FakeShopifyOptions } from './types';

export const CLI_DEFAULT_PORT = 4020;

export class CliError extends Error {
  override readonly name = 'CliError';
}

export const HELP = `Fake Shopify store (local stand-in for the Shopify GraphQL Admin API)

Usage: npx tsx fake-shopify/main.ts [flags]

Flags:
  --host <host>                 Interface to listen on (default ${DEFAULTS.host})
  --port <port>                 TCP port, 0 = any free port (default ${CLI_DEFAULT_PORT})
  --access-token <token>        Static X-Shopify-Access-Token accepted (default ${DEFAULTS.accessToken})
  --client-id <id>              Client-credentials app id (default ${DEFAULTS.clientId})
  --client-secret <secret>      Client-credentials app secret (default ${DEFAULTS.clientSecret})
  --token-lifetime <s>          Lifetime of client-credentials tokens (default ${DEFAULTS.tokenLifetimeSeconds})
  --bucket <max/rate>           Cost bucket size and restore rate per second
                                (default ${DEFAULTS.bucket.maximumAvailable}/${DEFAULTS.bucket.restoreRate}; a dev store is about 40/2)
  --throttle-as <how>           graphql-200 (Shopify) or http-429 (default ${DEFAULTS.throttleAs})
  --visibility-days <n|all>     Orders older than n days are invisible (default ${DEFAULTS.orderVisibilityDays})
  --seed-orders <n>             Create n sample orders at start (default 0)
  --state-file <file>           Keep the orders in <file> (0600) and read it back at the next
                                start, which then seeds nothing (npm run dev: .data/fake-shopify.json)
  --generate-orders <n>         Create n generated orders at start (at most 20000): EU addresses,
                                1-3 lines, created over the last 30 days, deterministic from --seed
  --shop-name <name>            Shown on the page and in Query.shop
  --seed <n>                    Seed of the PRNG behind the fault rates (default ${DEFAULTS.seed})
  --error-rate <0..1>           Share of requests answered 500
  --unavailable-rate <0..1>     Share of requests answered 503 (HTML)
  --latency-ms <ms>             Delay before every answer
  --hang-rate <0..1>            Share of requests run and never answered
  --commit-then-drop-rate <0..1>
                                Share of mutations applied, then the connection cut
  -h, --help                    Print this help and exit

GraphQL: POST /admin/api/<YYYY-MM>/graphql.json with X-Shopify-Access-Token.
Admin (no auth): GET|POST /_fake/orders, POST /_fake/orders/generate, GET /_fake/orders/<id>,
POST /_fake/orders/<id>/edit|cancel|close, GET|POST /_fake/webhooks, DELETE /_fake/webhooks/<id>,
GET|POST /_fake/faults, GET|POST /_fake/bucket, GET /_fake/stats, POST /_fake/stats/reset.
Webhooks: subscribe with POST /_fake/webhooks {topic, address, secret?}; deliveries are signed
with the client secret unless the subscription names its own. Page: GET /.
See docs/fake-shopify.md.
`;

export interface CliRun {
  kind: 'run';
  options: FakeShopifyOptions & { host: string; port: number };
  faults: ShopifyFaultsPatch;
  seedOrders: number;
  generateOrders: number;
}

function number(flag: string, raw: string, min: number, max: number, integer: boolean): number {
  const value = /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw new CliError(`${flag}: "${raw}" is not ${integer ? 'an integer' : 'a number'} between ${min} and ${max}`);
  }
  return value;
}

const FLAGS = [
  'host',
  'port',
  'access-token',
  'client-id',
  'client-secret',
  'token-lifetime',
  'bucket',
  'throttle-as',
  'visibility-days',
  'seed-orders',
  'state-file',
  'generate-orders',
  'shop-name',
  'seed',
  'error-rate',
  'unavailable-rate',
  'latency-ms',
  'hang-rate',
  'commit-then-drop-rate',
] as const;

type Flag = (typeof FLAGS)[number];

/** Typed readers over the parsed flag values; each throws CliError naming its flag. */
function readers(values: Record<string, string | boolean | undefined>) {
  const str = (name: Flag) => values[name] as string | undefined;
  const num = (name: Flag, min: number, max: number, integer = true) => {
    const raw = str(name);
    return raw === undefined ? undefined : number(`--${name}`, raw, min, max, integer);
  };
  const text = (name: Flag) => {
    const raw = str(name);
    if (raw !== undefined && raw.trim() === '') throw new CliError(`--${name}: must not be empty`);
    return raw;
  };
  return { str, num, text };
}

function serverOptions({ str, num, text }: ReturnType<typeof readers>): CliRun['options'] {
  const options: CliRun['options'] = {
    host: text('host') ?? DEFAULTS.host,
    port: num('port', 0, 65535) ?? CLI_DEFAULT_PORT,
    accessToken: text('access-token'),
    clientId: text('client-id'),
    clientSecret: text('client-secret'),
    tokenLifetimeSeconds: num('token-lifetime', 1, 10 * 365 * 86_400),
    shopName: text('shop-name'),
    seed: num('seed', 0, 2 ** 32 - 1),
    stateFile: text('state-file'),
  };
  const bucket = str('bucket');
  if (bucket !== undefined) {
    const [max, rate, ...more] = bucket.split('/');
    if (rate === undefined || more.length > 0) throw new CliError(`--bucket: "${bucket}" is not max/rate, e.g. 40/2`);
    options.bucket = {
      maximumAvailable: number('--bucket', max!, 1, 1_000_000, true),
      restoreRate: number('--bucket', rate, 0.001, 1_000_000, false),
    };
  }
  const throttleAs = str('throttle-as');
  if (throttleAs !== undefined && throttleAs !== 'graphql-200' && throttleAs !== 'http-429') {
    throw new CliError(`--throttle-as: "${throttleAs}" is not graphql-200 or http-429`);
  }
  options.throttleAs = throttleAs;
  const days = str('visibility-days');
  if (days !== undefined) options.orderVisibilityDays = days === 'all' ? null : number('--visibility-days', days, 1, 100_000, true);
  return options;
}

function faultFlags({ num }: ReturnType<typeof readers>): ShopifyFaultsPatch {
  const faults: ShopifyFaultsPatch = {
    serverErrorRate: num('error-rate', 0, 1, false),
    unavailableRate: num('unavailable-rate', 0, 1, false),
    latencyMs: num('latency-ms', 0, 600_000),
    hangRate: num('hang-rate', 0, 1, false),
    commitThenDropRate: num('commit-then-drop-rate', 0, 1, false),
  };
  return Object.fromEntries(Object.entries(faults).filter(([, v]) => v !== undefined));
}

/** Parses the flags; throws CliError naming the flag on any invalid value. */
export function parseCli(argv: string[]): CliRun | { kind: 'help' } {
  let values: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(FLAGS.map((f) => [f, { type: 'string' as const }]));
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  if (values.help) return { kind: 'help' };
  const read = readers(values);
  return {
    kind: 'run',
    options: serverOptions(read),
    faults: faultFlags(read),
    seedOrders: read.num('seed-orders', 0, 10_000) ?? 0,
    generateOrders: read.num('generate-orders', 0, 20_000) ?? 0,
  };
}

/** Sample order i: varied quantities, every 4th split over both locations, every 5th on hold. */
export function sampleOrder(i: number, now: number): SeedOrder {
  return {
    email: `customer${i}@example.com`,
    lineItems: [
      { sku: `SKU-${i}-A`, title: `Sample product ${i}A`, quantity: 1 + (i % 3), grams: 250 },
      { sku: `SKU-${i}-B`, title: `Sample product ${i}B`, quantity: 1, grams: 1200 },
    ],
    splitLocations: i % 4 === 3,
    fulfillmentOrderStatus: i % 5 === 4 ? 'ON_HOLD' : 'OPEN',
    createdAt: new Date(now - i * 3_600_000).toISOString(),
  };
}

export async function main(argv: string[]): Promise<void> {
  let command: ReturnType<typeof parseCli>;
  try {
    command = parseCli(argv);
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    process.stderr.write(`fake-shopify: ${e.message}\nRun with --help to list the flags.\n`);
    process.exitCode = 2;
    return;
  }
  if (command.kind === 'help') {
    process.stdout.write(HELP);
    return;
  }
  let shop;
  try {
    shop = await startFakeShopify(command.options);
  } catch (e) {
    process.stderr.write(`fake-shopify: could not start: ${(e as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  const faults = shop.setFaults(command.faults);
  const active = Object.entries(faults).filter(([k, v]) => k !== 'failNext' && v !== 0 && v !== false && v !== null);
  if (active.length > 0) process.stderr.write(`Faults: ${JSON.stringify(Object.fromEntries(active))}\n`);
  if (shop.restored) process.stderr.write(`Orders read back from ${command.options.stateFile}: nothing seeded.\n`);
  else {
    for (let i = 0; i < command.seedOrders; i++) shop.createOrder(sampleOrder(i, Date.now()));
    if (command.generateOrders > 0) shop.generateOrders({ count: command.generateOrders, seed: command.options.seed });
  }
  process.stdout.write(`fake Shopify listening on ${shop.baseUrl}\n`);
  closeOnSignals('fake-shopify', () => shop.close());
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`fake-shopify: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
