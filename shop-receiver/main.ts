/**
 * Command line of the reference shop receiver:
 *   npm run shop-receiver -- --port 8090 --secret whsec_... [--secret whsec_...]
 * Run with --help for every flag. Exit codes: 0 normal/--help, 1 start-up failure, 2 bad flags.
 */
import { parseArgs } from 'node:util';
import { SECRET_FORMAT_MESSAGE, WebhookSecret } from '../platforms/webhook/write-back';
import type { ReceiverFaultsPatch } from './faults';
import { RECEIVER_DEFAULTS, startShopReceiver, type ShopReceiverOptions } from './server';
import { closeOnSignals } from '../local-http/local-server';

export const CLI_DEFAULT_PORT = 8090;
export const SECRETS_ENV = 'SHOP_RECEIVER_SECRETS';

export class CliError extends Error {
  override readonly name = 'CliError';
}

export const HELP = `Reference shop receiver: accepts signed shipment webhooks and shows the orders

Usage: npm run shop-receiver -- --secret whsec_... [flags]
       npx tsx shop-receiver/main.ts --secret whsec_... [flags]

Webhooks: POST /webhooks/<shop> (one path per shop). Orders: GET / (HTML), GET /api/orders,
GET /api/events. Admin: GET /__admin/stats, GET|POST /__admin/faults, POST /__admin/reset.

Flags:
  --secret <whsec_...>      Signing secret; repeatable (rotation: any one verifies).
                            Or ${SECRETS_ENV}="whsec_a whsec_b" (keeps secrets out of ps).
  --host <host>             Interface to listen on (default ${RECEIVER_DEFAULTS.host})
  --port <port>             TCP port, 0 = any free port (default ${CLI_DEFAULT_PORT})
  --page-port <port>        Also serve the page, the API and the admin endpoints here (no
                            webhooks): they keep answering while the shop is down
  --journal <file>          Keep accepted events in <file> (created 0600) and replay it at
                            start, so the page survives a restart (default: memory only)
  --seed <n>                Seed of the PRNG behind --error-rate (default ${RECEIVER_DEFAULTS.seed})
  --slow-ms <ms>            Delay before every webhook answer (default 0)
  --error-rate <0..1>       Share of webhooks answered 500 (default 0)
  --rate-limit <perSecond>  Token bucket over all webhooks; beyond it 429 + Retry-After
  --burst <n>               Token bucket size, integer >= 1; needs --rate-limit (default ceil(perSecond))
  --gone                    Answer 410 for every shop
  --gone-shop <shop>        Answer 410 for this shop; repeatable
  -h, --help                Print this help and exit

Take the receiver down for a while (connections refused, then back on the same port):
  curl -X POST localhost:${CLI_DEFAULT_PORT}/__admin/faults -d '{"downForMs": 20000}'
Queue exact answers:
  curl -X POST localhost:${CLI_DEFAULT_PORT}/__admin/faults -d '{"failNext": [{"status": 503, "retryAfter": "5"}]}'

Make a secret: node -e "console.log('whsec_' + require('crypto').randomBytes(32).toString('base64'))"
See docs/shop-sync.md.
`;

function parseNumber(flag: string, raw: string, check: { integer?: boolean; min: number; max?: number; exclusiveMin?: boolean }): number {
  const value = /^\s*(\d+\.?\d*|\.\d+)\s*$/.test(raw) ? Number(raw) : NaN;
  const range =
    check.max !== undefined
      ? ` between ${check.min} and ${check.max}`
      : check.exclusiveMin
        ? ` greater than ${check.min}`
        : ` >= ${check.min}`;
  const ok =
    Number.isFinite(value) &&
    (!check.integer || Number.isInteger(value)) &&
    (check.exclusiveMin ? value > check.min : value >= check.min) &&
    (check.max === undefined || value <= check.max);
  if (!ok) throw new CliError(`${flag}: "${raw}" is not ${check.integer ? 'an integer' : 'a number'}${range}`);
  return value;
}

export type CliCommand = { kind: 'help' } | { kind: 'run'; options: ShopReceiverOptions & { host: string; port: number } };

/** Parses the flags; throws CliError naming the flag (never echoing a secret). */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): CliCommand {
  let values: Record<string, string | string[] | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        secret: { type: 'string', multiple: true },
        host: { type: 'string' },
        port: { type: 'string' },
        'page-port': { type: 'string' },
        journal: { type: 'string' },
        seed: { type: 'string' },
        'slow-ms': { type: 'string' },
        'error-rate': { type: 'string' },
        'rate-limit': { type: 'string' },
        burst: { type: 'string' },
        gone: { type: 'boolean' },
        'gone-shop': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  if (values.help) return { kind: 'help' };
  if (positionals.length > 0) throw new CliError(`unexpected argument (flags start with --)`);

  const str = (name: string) => values[name] as string | undefined;
  const num = (name: string, check: Parameters<typeof parseNumber>[2]) => {
    const raw = str(name);
    return raw === undefined ? undefined : parseNumber(`--${name}`, raw, check);
  };

  const fromFlags = (values.secret as string[] | undefined) ?? [];
  const fromEnv = (env[SECRETS_ENV] ?? '').split(/[\s,]+/).filter(Boolean);
  const secrets = fromFlags.length > 0 ? fromFlags : fromEnv;
  const source = fromFlags.length > 0 ? '--secret' : SECRETS_ENV;
  if (secrets.length === 0) throw new CliError(`--secret: at least one is required (or set ${SECRETS_ENV})`);
  secrets.forEach((secret, i) => {
    const parsed = WebhookSecret.safeParse(secret);
    if (!parsed.success) throw new CliError(`${source} #${i + 1}: ${parsed.error.issues[0]?.message ?? SECRET_FORMAT_MESSAGE}`);
  });

  const host = str('host') ?? RECEIVER_DEFAULTS.host;
  if (host.trim() === '') throw new CliError('--host: must not be empty');
  const port = num('port', { integer: true, min: 0, max: 65535 }) ?? CLI_DEFAULT_PORT;
  const seed = num('seed', { integer: true, min: 0, max: 2 ** 32 - 1 });
  const pagePort = num('page-port', { integer: true, min: 0, max: 65535 });
  const journalFile = str('journal');
  if (journalFile !== undefined && journalFile.trim() === '') throw new CliError('--journal: must not be empty');

  const faults: ReceiverFaultsPatch = {};
  const slowMs = num('slow-ms', { integer: true, min: 0, max: 600_000 });
  if (slowMs !== undefined) faults.slowMs = slowMs;
  const errorRate = num('error-rate', { min: 0, max: 1 });
  if (errorRate !== undefined) faults.errorRate = errorRate;
  const perSecond = num('rate-limit', { min: 0, exclusiveMin: true });
  const burst = num('burst', { integer: true, min: 1 });
  if (burst !== undefined && perSecond === undefined) throw new CliError('--burst: only valid together with --rate-limit');
  if (perSecond !== undefined) faults.rateLimit = { perSecond, burst: burst ?? Math.max(1, Math.ceil(perSecond)) };
  const goneShops = values['gone-shop'] as string[] | undefined;
  if (values.gone && goneShops) throw new CliError('--gone-shop: not needed with --gone, which covers every shop');
  if (goneShops?.some((s) => s.trim() === '')) throw new CliError('--gone-shop: must not be empty');
  if (values.gone) faults.gone = true;
  else if (goneShops) faults.gone = goneShops;

  return {
    kind: 'run',
    options: {
      secrets,
      host,
      port,
      seed,
      faults,
      ...(pagePort === undefined ? {} : { pagePort }),
      ...(journalFile ? { journalFile } : {}),
    },
  };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let command: CliCommand;
  try {
    command = parseCli(argv, env);
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    process.stderr.write(`shop-receiver: ${e.message}\nRun with --help to list the flags.\n`);
    process.exitCode = 2;
    return;
  }
  if (command.kind === 'help') {
    process.stdout.write(HELP);
    return;
  }

  let receiver;
  try {
    receiver = await startShopReceiver(command.options);
  } catch (e) {
    process.stderr.write(`shop-receiver: could not start: ${(e as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  const { faults } = receiver.state();
  const active = Object.entries(faults).filter(([k, v]) => k !== 'failNext' && k !== 'down' && v !== null && v !== 0 && v !== false);
  if (active.length > 0) process.stderr.write(`Faults: ${JSON.stringify(Object.fromEntries(active))}\n`);
  process.stderr.write(`Accepting ${command.options.secrets.length} secret${command.options.secrets.length === 1 ? '' : 's'}.\n`);
  process.stdout.write(`Shop receiver listening on ${receiver.url} (webhooks: ${receiver.url}/webhooks/<shop>)\n`);
  if (receiver.pageUrl) process.stdout.write(`Shop page on ${receiver.pageUrl} (stays up while the shop is down)\n`);

  closeOnSignals('shop-receiver', () => receiver.close());
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`shop-receiver: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
