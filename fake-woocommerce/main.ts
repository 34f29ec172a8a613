/**
 * Command line of the fake WooCommerce store: `npx tsx fake-woocommerce/main.ts --port 0 [flags]`.
 * Run with --help for every flag. Exit codes: 0 normal/--help, 1 start-up failure, 2 bad flags.
 */
import { parseArgs } from 'node:util';
import { closeOnSignals } from '../local-http/local-server';
import { DEFAULTS } from './defaults';
import { InvalidWooFaultsError, WooFaultsPatchSchema, type WooFaultsPatch } from './faults';
import { demoSeeds } from './seed';
import { startFakeWooCommerce } from './server';
import type { FakeWooCommerceOptions } from './types';

export const CLI_DEFAULT_PORT = 4030;

export class CliError extends Error {
  override readonly name = 'CliError';
}

export const HELP = `Fake WooCommerce store (wc/v3 REST API plus the Shipment Tracking extension)

Usage: npx tsx fake-woocommerce/main.ts [flags]

Flags:
  --host <host>                 Interface to listen on (default ${DEFAULTS.host})
  --port <port>                 TCP port, 0 = any free port (default ${CLI_DEFAULT_PORT})
  --consumer-key <ck>           Accepted consumer key (default ${DEFAULTS.consumerKey})
  --consumer-secret <cs>        Accepted consumer secret (default ${DEFAULTS.consumerSecret})
  --timezone <iana>             The store's time zone (default ${DEFAULTS.timezone})
  --no-shipment-tracking        Start without the Shipment Tracking extension (its routes 404)
  --hpos                        Reads of one order bump its date_modified (the HPOS quirk)
  --strip-authorization         The host drops the Authorization header: only query-string auth works
  --seed-orders <n>             Create n processing orders at start (default 0)
  --state-file <file>           Keep the orders and products in <file> (0600) and read it back at the next
                                start, which then seeds nothing (npm run dev: .data/fake-woocommerce.json)
  --generate-orders <n>         Generate n varied EU processing orders at start (0..${DEFAULTS.maxGeneratedOrders},
                                default 0): 1-3 lines from a small catalogue, flat rate / free
                                shipping / local pickup, created over the last day; --seed picks them
  --store-name <name>           Shown on the page at / (default ${DEFAULTS.storeName})
  --seed <n>                    Seed of the PRNG behind every fault rate and --generate-orders (default ${DEFAULTS.seed})
  --rate-limited-rate <0..1>    Share of API requests answered 429 (an HTML page)
  --retry-after <s|none>        Retry-After of those 429s (default none)
  --unavailable-rate <0..1>     Share answered 503 (an HTML page)
  --gateway-timeout-rate <0..1> Share answered 504 (an HTML page)
  --error-rate <0..1>           Share answered 500 (WordPress's "critical error")
  --latency-ms <ms>             Delay before every answer
  --hang-rate <0..1>            Share handled and never answered
  --commit-then-drop-rate <0..1>
                                Share of writes applied, then cut off without an answer
  --down                        Start with every API connection destroyed at once
  -h, --help                    Print this help and exit

Admin routes (no auth): POST|GET /_fake/orders, GET /_fake/orders/:id, POST /_fake/orders/:id/edit,
POST /_fake/orders/generate {"count":n,"seed"?,"status"?,"spreadSeconds"?,"endGmt"?},
GET|POST /_fake/webhooks {"topic","deliveryUrl","secret","status"?}, DELETE /_fake/webhooks/:id,
GET|POST /_fake/faults, POST /_fake/shipment-tracking {"installed":bool}, GET /_fake/stats,
POST /_fake/stats/reset.
The page at / shows the orders as the merchant sees them. See docs/fake-woocommerce.md.
`;

const FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'consumer-key': { type: 'string' },
  'consumer-secret': { type: 'string' },
  timezone: { type: 'string' },
  'no-shipment-tracking': { type: 'boolean' },
  hpos: { type: 'boolean' },
  'strip-authorization': { type: 'boolean' },
  'seed-orders': { type: 'string' },
  'state-file': { type: 'string' },
  'generate-orders': { type: 'string' },
  'store-name': { type: 'string' },
  seed: { type: 'string' },
  'rate-limited-rate': { type: 'string' },
  'retry-after': { type: 'string' },
  'unavailable-rate': { type: 'string' },
  'gateway-timeout-rate': { type: 'string' },
  'error-rate': { type: 'string' },
  'latency-ms': { type: 'string' },
  'hang-rate': { type: 'string' },
  'commit-then-drop-rate': { type: 'string' },
  down: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Fault flags → patch fields; the values are checked by the faults' own schema. */
const FAULT_FLAGS = {
  'rate-limited-rate': 'rateLimitedRate',
  'unavailable-rate': 'unavailableRate',
  'gateway-timeout-rate': 'gatewayTimeoutRate',
  'error-rate': 'serverErrorRate',
  'latency-ms': 'latencyMs',
  'hang-rate': 'hangRate',
  'commit-then-drop-rate': 'commitThenDropRate',
} as const;

function integer(flag: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw new CliError(`--${flag}: "${raw}" is not an integer between ${min} and ${max}`);
  return value;
}

function faultsOf(values: Record<string, string | boolean | undefined>): WooFaultsPatch {
  const patch: Record<string, unknown> = {};
  for (const [flag, field] of Object.entries(FAULT_FLAGS)) {
    const raw = values[flag];
    if (typeof raw === 'string') patch[field] = /^\s*$/.test(raw) ? NaN : Number(raw);
  }
  const retryAfter = values['retry-after'];
  if (typeof retryAfter === 'string') patch.retryAfterSeconds = retryAfter === 'none' ? null : Number(retryAfter);
  if (values.down === true) patch.down = true;
  const parsed = WooFaultsPatchSchema.safeParse(patch);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = String(issue.path[0]);
    const flag = Object.entries(FAULT_FLAGS).find(([, f]) => f === field)?.[0] ?? (field === 'retryAfterSeconds' ? 'retry-after' : field);
    throw new CliError(`--${flag}: "${String(values[flag])}" is invalid (${issue.message})`);
  }
  return parsed.data;
}

export type CliCommand = { kind: 'help' } | { kind: 'run'; options: FakeWooCommerceOptions; seedOrders: number; generateOrders: number };

/** Parses the flags; throws CliError naming the flag on any invalid value. */
export function parseCli(argv: string[]): CliCommand {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: FLAGS }));
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  if (values.help) return { kind: 'help' };
  const str = (name: string): string | undefined => values[name] as string | undefined;
  const host = str('host') ?? DEFAULTS.host;
  if (host.trim() === '') throw new CliError('--host: must not be empty');
  const options: FakeWooCommerceOptions = {
    host,
    port: integer('port', str('port'), 0, 65535) ?? CLI_DEFAULT_PORT,
    consumerKey: str('consumer-key'),
    consumerSecret: str('consumer-secret'),
    timezone: str('timezone'),
    shipmentTracking: values['no-shipment-tracking'] !== true,
    hpos: values.hpos === true,
    stripAuthorization: values['strip-authorization'] === true,
    storeName: str('store-name'),
    seed: integer('seed', str('seed'), 0, 2 ** 32 - 1),
    faults: faultsOf(values),
    stateFile: nonEmpty('state-file', str('state-file')),
  };
  return {
    kind: 'run',
    options,
    seedOrders: integer('seed-orders', str('seed-orders'), 0, 10_000) ?? 0,
    generateOrders: integer('generate-orders', str('generate-orders'), 0, DEFAULTS.maxGeneratedOrders) ?? 0,
  };
}

function nonEmpty(flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && value.trim() === '') throw new CliError(`--${flag}: must not be empty`);
  return value;
}

export async function main(argv: string[]): Promise<void> {
  let command: CliCommand;
  try {
    command = parseCli(argv);
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    process.stderr.write(`fake-woocommerce: ${e.message}\nRun with --help to list the flags.\n`);
    process.exitCode = 2;
    return;
  }
  if (command.kind === 'help') {
    process.stdout.write(HELP);
    return;
  }
  let store;
  try {
    store = await startFakeWooCommerce(command.options);
  } catch (e) {
    const message = e instanceof InvalidWooFaultsError || e instanceof Error ? e.message : String(e);
    process.stderr.write(`fake-woocommerce: could not start: ${message}\n`);
    process.exitCode = 1;
    return;
  }
  const o = command.options;
  if (store.restored) process.stderr.write(`Orders read back from ${o.stateFile}: nothing seeded.\n`);
  else {
    for (const seed of demoSeeds(command.seedOrders, Date.now())) store.createOrder(seed);
    if (command.generateOrders > 0) store.generateOrders({ count: command.generateOrders, seed: o.seed ?? DEFAULTS.seed });
  }
  process.stderr.write(
    `Consumer key ${o.consumerKey ?? DEFAULTS.consumerKey}; time zone ${o.timezone ?? DEFAULTS.timezone}; ` +
      `Shipment Tracking ${o.shipmentTracking ? 'installed' : 'not installed'}; ${command.seedOrders} seeded orders; ` +
      `${command.generateOrders} generated orders.\n`,
  );
  process.stdout.write(`fake WooCommerce listening on ${store.baseUrl}\n`);
  closeOnSignals('fake-woocommerce', () => store.close());
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`fake-woocommerce: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
