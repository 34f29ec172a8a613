/**
 * Command line of the fake shipping API: `npm run fake-api -- --port 4010 [flags]`.
 * Run with --help for every flag. Exit codes: 0 normal/--help, 1 start-up failure, 2 bad flags.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { fieldProblems } from '../shipping-api/contract';
import {
  defaultAccount,
  defaultBurst,
  DEFAULTS,
  ENDPOINT_KEYS,
  normalizeEndpointKey,
  RateLimitSchema,
  startFakeShippingApi,
  type AnyFakeAccount,
  type FakeShippingApiOptions,
  type Faults,
} from './server';
import { closeOnSignals } from '../local-http/local-server';

export const CLI_DEFAULT_PORT = 4010;

export class CliError extends Error {
  override readonly name = 'CliError';
}

export const HELP = `Fake shipping API (local stand-in for the shipping label service)

Usage: npm run fake-api -- [flags]
       npx tsx fake-shipping-api/main.ts [flags]

Flags:
  --host <host>                 Interface to listen on (default ${DEFAULTS.host})
  --port <port>                 TCP port, 0 = any free port (default ${CLI_DEFAULT_PORT})
  --tracking-step-ms <ms>       Length of one tracking stage (default ${DEFAULTS.trackingStepMs})
  --tracking-step-polls <n>     Advance tracking by polls instead: n GET /tracking calls per stage
  --state-file <file>           Keep the labels in <file> (0600) and read them back at the next
                                start: tracking goes on from their creation time
                                (npm run dev: .data/fake-shipping-api.json)
  --reject-postal-code <code>   Destination postal code the courier rejects; repeatable,
                                replaces the default list (default ${DEFAULTS.rejectPostalCodes.join(', ')})
  --seed <n>                    Seed of the PRNG behind every fault rate (default ${DEFAULTS.seed})
  --rate-limit <perSecond>      Per-account token bucket refill rate, > 0 (default: no limit)
  --burst <n>                   Token bucket size, integer >= 1; needs --rate-limit
                                (default: ceil(perSecond))
  --refused-takes-token         A refused call spends a token too (the bucket goes below empty):
                                a limiter that counts every call; needs --rate-limit
  --rate-limiter <kind>         bucket (default) or window: at most --rate-limit calls (a whole
                                number) in any second, no burst; needs --rate-limit
  --rate-limited-rate <0..1>    Share of requests answered 429 at random, bucket or not (default 0)
  --retry-after <s|min-max>     Retry-After seconds of those random 429s, one value or a range
                                drawn per answer (default 1)
  --error-rate <0..1>           Share of requests answered 500 (default 0)
  --latency-ms <ms>             Delay added after handling, before answering (default 0)
  --hang-rate <0..1>            Share of requests handled and never answered (default 0)
  --malformed-rate <0..1>       Share of 2xx answers whose body breaks the contract (default 0)
  --lost-answer-rate <0..1>     Share of requests handled (label created) whose connection is then
                                cut without an answer (default 0)
  --fault-endpoint <key>        Restrict faults to this endpoint; repeatable (default: all).
                                Keys: ${ENDPOINT_KEYS.join(', ')}
  --extra-account <name:key:token>
                                Additional account (e.g. to test 403); repeatable (default: none)
  --accounts-file <path>        More accounts, each with its own credentials, limit and labels:
                                a JSON array of {name, apiKey, apiToken} or {name, auth: "bearer",
                                accessToken, shipperAccountId}, each with an optional
                                rateLimit {perSecond, burst?, refusedTakesToken?, kind?} (default: the --rate-limit)
  -h, --help                    Print this help and exit

Credentials of the default account come from SHIPPING_API_KEY and SHIPPING_API_TOKEN;
when unset, the dev credentials x-rr-apikey=dev-api-key, x-rr-apitoken=dev-api-token apply.
Admin endpoints (no auth): GET /__admin/stats, GET|POST /__admin/faults,
POST /__admin/reset-stats, GET /__admin/labels, GET /__admin/accounts,
POST /__admin/credentials (rotate an account's). See docs/fake-shipping-api.md.
`;

function parseNumber(flag: string, raw: string, check: { integer?: boolean; min?: number; max?: number; exclusiveMin?: boolean }): number {
  const value = /^\s*-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(raw) ? Number(raw) : NaN;
  const range =
    check.min !== undefined && check.max !== undefined
      ? ` between ${check.min} and ${check.max}`
      : check.min !== undefined
        ? check.exclusiveMin
          ? ` greater than ${check.min}`
          : ` >= ${check.min}`
        : '';
  const what = `${check.integer ? 'an integer' : 'a number'}${range}`;
  if (!Number.isFinite(value)) throw new CliError(`${flag}: "${raw}" is not ${what}`);
  if (check.integer && !Number.isInteger(value)) throw new CliError(`${flag}: "${raw}" is not ${what}`);
  if (check.min !== undefined && (check.exclusiveMin ? value <= check.min : value < check.min)) {
    throw new CliError(`${flag}: "${raw}" is not ${what}`);
  }
  if (check.max !== undefined && value > check.max) throw new CliError(`${flag}: "${raw}" is not ${what}`);
  return value;
}

export type CliCommand =
  { kind: 'help' } | { kind: 'run'; options: FakeShippingApiOptions & { host: string; port: number }; extraAccountNames: string[] };

/** Parses the flags; throws CliError naming the flag on any invalid value. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): CliCommand {
  let values: Record<string, string | string[] | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        'tracking-step-ms': { type: 'string' },
        'tracking-step-polls': { type: 'string' },
        'state-file': { type: 'string' },
        'reject-postal-code': { type: 'string', multiple: true },
        seed: { type: 'string' },
        'rate-limit': { type: 'string' },
        burst: { type: 'string' },
        'refused-takes-token': { type: 'boolean' },
        'rate-limiter': { type: 'string' },
        'rate-limited-rate': { type: 'string' },
        'retry-after': { type: 'string' },
        'error-rate': { type: 'string' },
        'latency-ms': { type: 'string' },
        'hang-rate': { type: 'string' },
        'malformed-rate': { type: 'string' },
        'lost-answer-rate': { type: 'string' },
        'fault-endpoint': { type: 'string', multiple: true },
        'extra-account': { type: 'string', multiple: true },
        'accounts-file': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  if (values.help) return { kind: 'help' };
  if (positionals.length > 0) throw new CliError(`unexpected argument "${positionals[0]}" (flags start with --)`);

  const str = (name: string): string | undefined => values[name] as string | undefined;
  const list = (name: string): string[] | undefined => values[name] as string[] | undefined;
  const num = (name: string, check: Parameters<typeof parseNumber>[2]): number | undefined => {
    const raw = str(name);
    return raw === undefined ? undefined : parseNumber(`--${name}`, raw, check);
  };

  const host = str('host') ?? DEFAULTS.host;
  if (host.trim() === '') throw new CliError('--host: must not be empty');
  const port = num('port', { integer: true, min: 0, max: 65535 }) ?? CLI_DEFAULT_PORT;
  const trackingStepMs = num('tracking-step-ms', { integer: true, min: 0 });
  const trackingStepPolls = num('tracking-step-polls', { integer: true, min: 1 });
  const seed = num('seed', { integer: true, min: 0, max: 2 ** 32 - 1 });
  const stateFile = str('state-file');
  if (stateFile?.trim() === '') throw new CliError('--state-file: must not be empty');

  const rejectPostalCodes = list('reject-postal-code');
  if (rejectPostalCodes?.some((c) => c.trim() === '')) throw new CliError('--reject-postal-code: must not be empty');

  const faults: Partial<Faults> = {};
  const perSecond = num('rate-limit', { min: 0, exclusiveMin: true });
  const burst = num('burst', { integer: true, min: 1 });
  if (burst !== undefined && perSecond === undefined) throw new CliError('--burst: only valid together with --rate-limit');
  const refusedTakesToken = values['refused-takes-token'] === true;
  if (refusedTakesToken && perSecond === undefined) throw new CliError('--refused-takes-token: only valid together with --rate-limit');
  const kind = str('rate-limiter');
  if (kind !== undefined) {
    if (kind !== 'bucket' && kind !== 'window') throw new CliError(`--rate-limiter: "${kind}" is neither bucket nor window`);
    if (perSecond === undefined) throw new CliError('--rate-limiter: only valid together with --rate-limit');
    if (kind === 'window' && !Number.isInteger(perSecond)) throw new CliError('--rate-limit: a window counts whole calls: an integer');
    if (kind === 'window' && burst !== undefined) throw new CliError('--burst: a window has none (--rate-limiter window)');
  }
  if (perSecond !== undefined)
    faults.rateLimit = {
      perSecond,
      ...(kind === 'window' ? { kind } : { burst: burst ?? defaultBurst(perSecond) }),
      ...(refusedTakesToken ? { refusedTakesToken } : {}),
    };
  const rateLimitedRate = num('rate-limited-rate', { min: 0, max: 1 });
  if (rateLimitedRate !== undefined) faults.rateLimitedRate = rateLimitedRate;
  const retryAfter = str('retry-after');
  if (retryAfter !== undefined) {
    const [low, high, ...more] = retryAfter.split('-');
    if (more.length > 0) throw new CliError(`--retry-after: "${retryAfter}" is not seconds or a range min-max`);
    const minSeconds = parseNumber('--retry-after', low!, { integer: true, min: 0, max: 3600 });
    const maxSeconds = high === undefined ? minSeconds : parseNumber('--retry-after', high, { integer: true, min: 0, max: 3600 });
    if (minSeconds > maxSeconds) throw new CliError(`--retry-after: the range "${retryAfter}" ends before it starts`);
    faults.rateLimitedRetryAfter = { minSeconds, maxSeconds };
  }
  const errorRate = num('error-rate', { min: 0, max: 1 });
  if (errorRate !== undefined) faults.serverErrorRate = errorRate;
  const latencyMs = num('latency-ms', { integer: true, min: 0, max: 600_000 });
  if (latencyMs !== undefined) faults.latencyMs = latencyMs;
  const hangRate = num('hang-rate', { min: 0, max: 1 });
  if (hangRate !== undefined) faults.hangRate = hangRate;
  const malformedRate = num('malformed-rate', { min: 0, max: 1 });
  if (malformedRate !== undefined) faults.malformedRate = malformedRate;
  const lostAnswerRate = num('lost-answer-rate', { min: 0, max: 1 });
  if (lostAnswerRate !== undefined) faults.lostAnswerRate = lostAnswerRate;
  const endpoints = list('fault-endpoint');
  if (endpoints !== undefined) {
    faults.endpoints = endpoints.map((raw) => {
      const key = normalizeEndpointKey(raw);
      if (key === null) throw new CliError(`--fault-endpoint: unknown endpoint "${raw}"; expected one of: ${ENDPOINT_KEYS.join(', ')}`);
      return key;
    });
  }

  const accounts: AnyFakeAccount[] = [defaultAccount(env).account];
  for (const raw of list('extra-account') ?? []) {
    const first = raw.indexOf(':');
    const second = first < 0 ? -1 : raw.indexOf(':', first + 1);
    const name = first < 0 ? '' : raw.slice(0, first);
    const apiKey = second < 0 ? '' : raw.slice(first + 1, second);
    const apiToken = second < 0 ? '' : raw.slice(second + 1);
    if (!name || !apiKey || !apiToken) throw new CliError('--extra-account: expected name:key:token, each part non-empty');
    if (accounts.some((a) => a.name === name)) throw new CliError(`--extra-account: account name "${name}" is already used`);
    if (accounts.some((a) => a.auth !== 'bearer' && a.apiKey === apiKey)) {
      throw new CliError(`--extra-account: the key of account "${name}" is already used`);
    }
    accounts.push({ name, apiKey, apiToken });
  }
  const file = str('accounts-file');
  for (const account of file === undefined ? [] : readAccountsFile(file)) {
    if (accounts.some((a) => a.name === account.name))
      throw new CliError(`--accounts-file: account name "${account.name}" is already used`);
    accounts.push(account);
  }

  return {
    kind: 'run',
    options: { host, port, trackingStepMs, trackingStepPolls, rejectPostalCodes, seed, accounts, faults, stateFile },
    extraAccountNames: accounts.slice(1).map((a) => a.name),
  };
}

const AccountsFile = z
  .array(
    z.union([
      z.strictObject({
        name: z.string().min(1),
        apiKey: z.string().min(1),
        apiToken: z.string().min(1),
        rateLimit: RateLimitSchema.optional(),
      }),
      z.strictObject({
        name: z.string().min(1),
        auth: z.literal('bearer'),
        accessToken: z.string().min(1),
        shipperAccountId: z.string().min(1),
        rateLimit: RateLimitSchema.optional(),
      }),
    ]),
  )
  .max(100);

/** The accounts of --accounts-file; a problem names the index and field, never a credential. */
function readAccountsFile(file: string): AnyFakeAccount[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new CliError(`--accounts-file: cannot read ${file} as JSON: ${(e as NodeJS.ErrnoException).code ?? 'not valid JSON'}`);
  }
  const parsed = AccountsFile.safeParse(json);
  if (!parsed.success) {
    const first = fieldProblems(parsed.error)[0]!;
    throw new CliError(`--accounts-file: ${first.field}: ${first.message}`);
  }
  return parsed.data;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let command: CliCommand;
  try {
    command = parseCli(argv, env);
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    process.stderr.write(`fake-api: ${e.message}\nRun with --help to list the flags.\n`);
    process.exitCode = 2;
    return;
  }
  if (command.kind === 'help') {
    process.stdout.write(HELP);
    return;
  }

  const { devKey, devToken } = defaultAccount(env);
  if (devKey || devToken) {
    const which = [devKey ? 'SHIPPING_API_KEY' : null, devToken ? 'SHIPPING_API_TOKEN' : null].filter(Boolean).join(' and ');
    process.stderr.write(
      `Note: ${which} not set; the default account accepts the dev credentials` +
        `${devKey ? ` x-rr-apikey=${'dev-api-key'}` : ''}${devToken ? ` x-rr-apitoken=${'dev-api-token'}` : ''}.\n`,
    );
  } else {
    process.stderr.write('Using credentials from SHIPPING_API_KEY / SHIPPING_API_TOKEN for the default account.\n');
  }
  if (command.extraAccountNames.length > 0) process.stderr.write(`Extra accounts: ${command.extraAccountNames.join(', ')}\n`);

  let api;
  try {
    api = await startFakeShippingApi(command.options);
  } catch (e) {
    process.stderr.write(`fake-api: could not start: ${(e as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  const faults = api.setFaults({});
  const active = Object.entries(faults).filter(([k, v]) => (k === 'failNext' ? false : v !== null && v !== 0));
  if (active.length > 0) process.stderr.write(`Faults: ${JSON.stringify(Object.fromEntries(active))}\n`);
  process.stdout.write(`Fake shipping API listening on ${api.baseUrl}\n`);

  closeOnSignals('fake-api', () => api.close());
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`fake-api: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
