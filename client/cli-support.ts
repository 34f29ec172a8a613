/**
 * What every operator command shares: exit codes, the error type that carries one, argument
 * parsing on node's util.parseArgs, the Temporal connection from the environment, and the
 * translation of known failures into one clear line.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { clientDataConverter } from '../codec/data-converter';
import { accountsGiven, ConfigError, loadShippingApiSettings, PAYLOAD_ENCRYPTION_OFF } from '../config/settings';
import { loadShippingAccounts, type ShippingAccounts } from '../config/shipping-accounts';
import { explainConnectFailure, loadTemporalSettings, temporalTarget, type TemporalSettings } from '../config/temporal-connection';
import { ShippingApiClient } from '../shipping-api/client';
import { ShippingApiError } from '../shipping-api/errors';
import { CONTROL_CHARACTER } from '../shipping-api/contract';
import { withDevCheckout } from './dev-checkout';
import { readDeadlineMs } from '../order-import/read-again';
import { tracingClientInterceptors } from '../tracing/temporal';

/** Exit codes of `npm run cli` and `npm run import` (documented in docs/import-and-cli.md). */
export const EXIT = {
  ok: 0,
  /** import: some records rejected; resubmit: data invalid, refused by the workflow, or the label failed again; cancel: shipment already ended. */
  rejected: 1,
  /** Bad command line, unreadable input file, invalid configuration. */
  usage: 2,
  /** import: some valid orders could not be started. */
  failedToStart: 3,
  /** No shipment workflow for that shop and order. */
  notFound: 4,
  /** Temporal or the shipping API could not be reached, or refused our credentials. */
  unavailable: 5,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.usage);

/** The process around a command: streams and environment, replaceable in tests. */
export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stdin: NodeJS.ReadableStream;
  env: Record<string, string | undefined>;
}

export const processIo = (): Io => ({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env });

/** The payload encryption part of the import's and the CLI's --help. */
export const PAYLOAD_ENCRYPTION_HELP = `Payload encryption (names, addresses and phones; the worker's keys):
  PAYLOAD_ENCRYPTION_KEYS_FILE      the worker's keys, from a file (or PAYLOAD_ENCRYPTION_KEYS);
                                    with \`npm run dev\` running in this checkout, its key is used
                                    when unset (and SHOP_CONNECTORS_FILE its shops')
  PAYLOAD_ENCRYPTION=off            send in clear on purpose (or --no-encryption); without either,
                                    every command that reaches Temporal refuses to run`;

/** Every command takes `--no-encryption`: PAYLOAD_ENCRYPTION=off for this run (payloads sent in clear, on purpose). */
export const NO_ENCRYPTION_FLAG = '--no-encryption';

/**
 * The environment a command runs with: `--no-encryption` taken out of its arguments and made
 * PAYLOAD_ENCRYPTION=off, then the key and connectors of this checkout's running `npm run dev`.
 */
export function commandEnvironment(argv: string[], env: Io['env']): { argv: string[]; env: Io['env'] } {
  const end = argv.indexOf('--');
  const options = end === -1 ? argv : argv.slice(0, end);
  if (!options.includes(NO_ENCRYPTION_FLAG)) return { argv, env: withDevCheckout(env) };
  const rest = [...options.filter((a) => a !== NO_ENCRYPTION_FLAG), ...(end === -1 ? [] : argv.slice(end))];
  return { argv: rest, env: withDevCheckout({ ...env, [PAYLOAD_ENCRYPTION_OFF.variable]: PAYLOAD_ENCRYPTION_OFF.value }) };
}

/** util.parseArgs with strict checking; its errors become usage errors (exit 2). */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageError(err instanceof Error ? err.message : String(err));
  }
}

/** Reads a positive integer flag. */
export function positiveInt(name: string, text: string | undefined, fallback: number, max = 10_000): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) throw usageError(`--${name} must be an integer from 1 to ${max} (got "${text}")`);
  return n;
}

/** `--deadline` of a command that reads again (order-import/read-again.ts): its ms, the default when absent. */
export function deadlineFlag(text: string | undefined): number {
  const ms = readDeadlineMs(text);
  if (ms === undefined) throw usageError(`--deadline must be a duration such as 15m or 2h (got "${text}")`);
  return ms;
}

export function requirePositionals(positionals: string[], names: string[], command: string): string[] {
  if (positionals.length !== names.length) {
    throw usageError(
      `${command} takes ${names.map((n) => `<${n}>`).join(' ')}; got ${positionals.length} argument(s). See: shipments ${command} --help`,
    );
  }
  return positionals;
}

/** Settings from the environment; a ConfigError is a usage error with its own message. */
export function temporalSettings(env: Io['env']): TemporalSettings {
  try {
    return loadTemporalSettings(env);
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(err.message);
    throw err;
  }
}

/** The payload codec from PAYLOAD_ENCRYPTION_KEYS, as the worker has it; refused without keys unless PAYLOAD_ENCRYPTION=off. */
export function payloadDataConverter(env: Io['env']): DataConverter {
  try {
    return clientDataConverter(env);
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(err.message);
    throw err;
  }
}

/** Where the shipping API settings come from, for an error that names a missing or wrong one. */
export const SHIPPING_API_SETTINGS_HINT =
  "Set the variables `npm run dev` prints in its banner (the export line of the README's quick start), or your own API's (docs/configuration.md).";

/**
 * The shipping accounts and the shops each serves (SHIPPING_ACCOUNTS, or the one account of
 * SHIPPING_API_*); undefined when neither is set and `required` is false (then inputs name no
 * account: `default`).
 */
export function shippingAccounts(env: Io['env'], required: boolean): ShippingAccounts | undefined {
  if (!required && !accountsGiven(env) && !env.SHIPPING_API_BASE_URL) return undefined;
  try {
    return loadShippingAccounts(env);
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(`${err.message}\n${SHIPPING_API_SETTINGS_HINT}`);
    throw err;
  }
}

export function shippingApi(env: Io['env']): ShippingApiClient {
  try {
    return new ShippingApiClient(loadShippingApiSettings(env));
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(`${err.message}\n${SHIPPING_API_SETTINGS_HINT}`);
    throw err;
  }
}

export interface TemporalSession {
  client: Client;
  settings: TemporalSettings;
  close(): Promise<void>;
}

/** Connects to Temporal; an unreachable server or refused credentials are exit 5, naming the address and how we connected (never the key). */
export async function connectTemporal(env: Io['env']): Promise<TemporalSession> {
  const settings = temporalSettings(env);
  const dataConverter = payloadDataConverter(env);
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...settings.connection, connectTimeout: '5s' });
  } catch (err) {
    throw new CliError(
      `cannot connect to Temporal at ${temporalTarget(settings)}: ${await explainConnectFailure(settings, err)}\n` +
        'Is a Temporal server running there (`npm run dev` starts one on localhost:7233)? Else point TEMPORAL_ADDRESS ' +
        '(or TEMPORAL_PROFILE) at yours: see docs/production.md, "Connecting to a Temporal cluster or Temporal Cloud".',
      EXIT.unavailable,
    );
  }
  // Traced starts only inside an order's span, when the import turned tracing on (tracing/).
  const client = new Client({ connection, namespace: settings.namespace, dataConverter, interceptors: tracingClientInterceptors() });
  return { client, settings, close: () => connection.close() };
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Shipping API failures that mean "cannot talk to it" rather than "it said no". */
export function isUnavailable(err: unknown): boolean {
  return (
    err instanceof ShippingApiError &&
    ['network', 'server_error', 'rate_limited', 'unauthorized', 'forbidden', 'contract_violation'].includes(err.kind)
  );
}

/** A shipping API failure as a CliError with the right exit code. */
export function shippingApiFailure(what: string, err: unknown): CliError {
  return new CliError(`${what}: ${messageOf(err)}`, isUnavailable(err) ? EXIT.unavailable : EXIT.rejected);
}

export const noShipment = (shop: string, orderId: string) =>
  new CliError(`no shipment for shop ${printable(shop)} order ${printable(orderId)}`, EXIT.notFound);

export function isNotFound(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError;
}

/**
 * Runs a command as the process: its exit code becomes the process's, a CliError prints its
 * message and exits with its code, anything else prints and exits 1. Waits for stdout to drain.
 */
export function runMain(command: (argv: string[], io: Io) => Promise<ExitCode>, given = process.argv.slice(2)): void {
  const { argv, env } = commandEnvironment(given, process.env);
  const io = { ...processIo(), env };
  const exit = (code: number) => io.stdout.write('', () => process.exit(code));
  command(argv, io).then(exit, (err: unknown) => {
    println(io.stderr, `error: ${messageOf(err)}`);
    exit(err instanceof CliError ? err.exitCode : 1);
  });
}

const CONTROL_CHARACTERS = new RegExp(CONTROL_CHARACTER.source, 'g');

/**
 * Text from outside (ids, API and server answers) as it may be printed for a human: control
 * characters as \\uXXXX escapes, so an id cannot break a line, forge one, or send terminal codes.
 * (JSON output escapes them already.)
 */
export function printable(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Writes a line. */
export function println(stream: NodeJS.WritableStream, text = ''): void {
  stream.write(`${text}\n`);
}

/** Plain left-aligned columns for human output. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  const cells = rows.map((row) => row.map(printable));
  for (const row of cells) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}
