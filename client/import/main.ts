/**
 * `npm run import -- <file|->` (also `npm run cli -- import`): starts one shipment workflow per valid
 * order of a shop export (NDJSON, JSON array or CSV). See docs/import-and-cli.md.
 */
import { constants, createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { access, chmod, stat } from 'node:fs/promises';
import { once } from 'node:events';
import type { ShippingApiClient } from '../../shipping-api/client';
import { ShippingApiError } from '../../shipping-api/errors';
import type { FieldProblem } from '../../shipping-api/contract';
import {
  CliError,
  connectTemporal,
  deadlineFlag,
  EXIT,
  isUnavailable,
  messageOf,
  parseCommandArgs,
  PAYLOAD_ENCRYPTION_HELP,
  payloadDataConverter,
  positiveInt,
  printable,
  println,
  runMain,
  shippingAccounts,
  usageError,
  type ExitCode,
  type Io,
  type TemporalSession,
} from '../cli-support';
import { TEMPORAL_CONNECTION_HELP } from '../../config/temporal-connection';
import { startTracingFromEnv, TRACING_HELP } from '../../config/tracing';
import type { Tracing } from '../../tracing/setup';
import { BacklogGate, workflowBacklogReader } from '../../order-import/backlog-gate';
import {
  importRecords,
  KEPT_IN_RESULT,
  type AccountNotStarted,
  type ImportResult,
  type Rejection,
  type StartFailure,
} from '../../order-import/engine';
import {
  formatFromPath,
  FORMATS,
  InputError,
  readRecords,
  sniffFormat,
  type InputFormat,
  type SourceRecord,
} from '../../order-import/source';
import { AccountPreflights, patientCatalog, waitedOut } from '../../order-import/preflight';
import { openAccountClient, type ShippingAccounts } from '../../config/shipping-accounts';
import { DEFAULT_SHIPPING_ACCOUNT } from '../../domain/shipment';
import { Progress } from '../../order-import/progress';
import { MAX_WORKFLOW_ID_BYTES, startShipment } from '../../order-import/start-shipment';
import { RECORD_LIMITS } from '../../order-import/limits';
import { decodeUtf8 } from '../../order-import/utf8';
import { loadShopConnectors } from '../../platforms/connectors';
import { ConfigError, loadShipmentPriorities, PAYLOAD_ENCRYPTION_OFF } from '../../config/settings';
import { shipmentPriorityKey, type ShipmentPriorities } from '../../domain/priority';
import { readShop, shopConnector, sinceOf, type ShopInput } from './from-shop';

export const DEFAULT_CONCURRENCY = 16;
/** Workflow tasks waiting for a worker above which the import holds new starts. */
export const DEFAULT_MAX_BACKLOG = 200;

export const IMPORT_HELP = `Usage: npm run import -- [options] <file|->
       npm run import -- [options] --from <shop>
       (the same as npm run cli -- import ...)

Starts one shipment workflow per order of a shop export. Records are
{ "shop", "orderId", "labelRequest" } (the label request without idempotencyKey:
the system derives it). Every record is validated; invalid ones are reported with
their line (or array index) and field path, and the others are still imported.
Importing the same file again starts nothing new (orders are counted "already known").
shop and orderId: 1-200 characters without control characters, and together short enough
for a workflow id of at most ${MAX_WORKFLOW_ID_BYTES} bytes. A record may have ${RECORD_LIMITS.maxChars} characters and
${RECORD_LIMITS.maxDepth} levels of nesting; the input must be UTF-8 (a line that is not is rejected).
The first ${KEPT_IN_RESULT} problems are printed and kept in the summary; --rejects has them all.

Input (- reads standard input):
  --format <ndjson|json|csv>  Default: from the extension (.ndjson/.jsonl, .json, .csv),
                              else guessed from the first character ([ json, { ndjson, else csv)
  --from <shop>               Instead of a file: the orders of a Shopify or WooCommerce shop in
                              SHOP_CONNECTORS (with "import" settings) that need a label, mapped
                              by its import.mapping (docs/shop-import.md). Orders the platform
                              lists but we need not label (fulfilled elsewhere, picked up) are
                              counted as skipped. The shop's schedule does this on its own.
  --since <time|duration>     With --from: read orders changed since this ISO time, or this long
                              ago (2d, 90m); default the shop's import.firstPull
  --deadline <duration>       How long after the start reads are tried again (default 15m). With
                              --from: a shop read that fails in passing (429/503, 5xx, THROTTLED,
                              network), with the schedule's rules (its Retry-After, else 2 s
                              doubling to 1 min; printed at the start); a refusal (401, 403, 404)
                              ends it at once. The preflight's shipping API reads wait out a 429's
                              Retry-After and back off a 5xx (1 s doubling, the workers' rule),
                              a line on stderr saying which account and how long; the orders of
                              an account still failing at the deadline fail to start (the summary
                              names the account, how many and the command to run again), the
                              other accounts' orders are started
Options:
  --concurrency <n>           Orders preflighted/started at once (default ${DEFAULT_CONCURRENCY}, max 256)
  --max-backlog <n>           Hold new starts while more than n workflow tasks wait for a worker
                              on the task queue, so the import goes at the workers' pace (default
                              ${DEFAULT_MAX_BACKLOG}; 0 = never hold). If the reading stops shrinking for 30 s,
                              starts go at the rate workers take tasks, or, when none are
                              taken (no worker running?), the rest is started anyway.
  --dry-run                   Validate and preflight only; start nothing, no Temporal needed
  --skip-preflight            Do not check courier/product codes against GET /couriers and
                              GET /products (for when the shipping API is not reachable)
  --rejects <path>            Write every rejected record (original text, parsed record,
                              reasons) and every order that failed to start to <path>, as NDJSON;
                              it holds personal data, so it is created readable by you only (0600)
  --json                      Print one JSON summary document on stdout (no other stdout output)
  --no-encryption             Send the orders' names, addresses and phones in clear (PAYLOAD_ENCRYPTION=off)
  -h, --help                  Show this help

Environment: SHIPPING_API_BASE_URL, SHIPPING_API_KEY, SHIPPING_API_TOKEN for the preflight;
SHIPPING_ACCOUNTS_FILE (or SHIPPING_ACCOUNTS): each shop's shipping account, fixed in its
shipments' input and preflighted against (the workers' file; docs/configuration.md).
LIVE_ORDER_MAX_AGE (default 15m; off): a file's orders start as a backlog, behind live orders
on the task queue; with --from, orders changed that recently start live (docs/capacity.md).

${PAYLOAD_ENCRYPTION_HELP}

${TEMPORAL_CONNECTION_HELP}

${TRACING_HELP}

Exit codes: 0 all imported (started or already known); 1 some records rejected;
2 usage or configuration error; 3 some orders failed to start (even if others were rejected);
5 Temporal or the shipping API (preflight) unreachable or refused credentials, nothing started.
A shipping account held by a Retry-After (or answering 5xx) past --deadline is no exit 5:
its orders count as failed to start (3), and the other accounts' orders are started.
`;

export interface ImportSummary {
  input: string;
  format: InputFormat | 'shopify' | 'woocommerce';
  /** --from: orders the platform listed that need no label from us. */
  skipped?: number;
  dryRun: boolean;
  preflight: 'checked' | 'skipped';
  counts: ImportResult['counts'];
  /** Per shipping account whose preflight could not be read: its orders were not started; the command to run again. */
  notStarted: Array<AccountNotStarted & { rerun: string }>;
  rejections: Rejection[];
  failures: StartFailure[];
  durationMs: number;
  exitCode: ExitCode;
}

/** Runs the import command; resolves with the exit code. */
export async function importCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    format: { type: 'string' },
    from: { type: 'string' },
    since: { type: 'string' },
    deadline: { type: 'string' },
    concurrency: { type: 'string' },
    'max-backlog': { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
    'skip-preflight': { type: 'boolean', default: false },
    rejects: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(IMPORT_HELP);
    return EXIT.ok;
  }
  if (values.from !== undefined) {
    if (positionals.length > 0 || values.format !== undefined) throw usageError('--from reads a shop: give no file and no --format');
  } else if (positionals.length !== 1)
    throw usageError('import takes one input: a file path, - for standard input, or --from <shop>. See: npm run cli -- import --help');
  else if (values.since !== undefined) throw usageError('--since goes with --from <shop>');
  const input = values.from !== undefined ? `shop ${values.from}` : positionals[0]!;
  if (values.format !== undefined && !(FORMATS as readonly string[]).includes(values.format)) {
    throw usageError(`--format must be one of ${FORMATS.join(', ')} (got "${values.format}")`);
  }
  const concurrency = positiveInt('concurrency', values.concurrency, DEFAULT_CONCURRENCY, 256);
  const maxBacklog = values['max-backlog'] === '0' ? 0 : positiveInt('max-backlog', values['max-backlog'], DEFAULT_MAX_BACKLOG, 1_000_000);
  const dryRun = values['dry-run'];
  const began = Date.now();

  // Everything that can fail for the whole run fails here, before any record is read.
  if (!dryRun) payloadDataConverter(io.env); // no key and not told to send in clear: refused, naming the setting
  const platformOf = platformShops(io.env);
  const reading = new AbortController();
  const connector = values.from === undefined ? undefined : shopConnector(io.env, values.from);
  const deadline = began + deadlineFlag(values.deadline);
  // Replaced by the progress-aware printer once it exists.
  let notify = (line: string) => println(io.stderr, line);
  const shop =
    connector && readShop(connector, sinceOf(values.since, connector, Date.now()), reading.signal, { deadline, onWait: (l) => notify(l) });
  if (shop)
    println(
      io.stderr,
      `reading ${values.from} since ${shop.since}; passing failures are read again until ${new Date(deadline).toISOString()} (--deadline)`,
    );
  const source = shop ? shopSource(shop) : await openInput(input, io);
  const rejects = values.rejects === undefined ? undefined : await openRejects(values.rejects);
  const catalogs: ShippingApiClient[] = [];
  let temporal: TemporalSession | undefined;
  let tracing: Tracing | undefined;
  try {
    const accounts = preflightAccounts(io.env, !values['skip-preflight']);
    let preflight: AccountPreflights | undefined;
    if (!values['skip-preflight']) {
      let firstWait = (_account: string) => {};
      preflight = new AccountPreflights(async (name) => {
        const client = await openAccountClient(accounts!.get(name)!);
        catalogs.push(client);
        const onWait = (line: string) => {
          firstWait(name);
          notify(line);
        };
        return patientCatalog(client, `preflight${name === DEFAULT_SHIPPING_ACCOUNT ? '' : ` of shipping account "${name}"`}`, {
          deadline,
          onWait,
          signal: reading.signal,
        });
      });
      // The shop's account (--from), or the one shops fall back to: read before anything starts,
      // so an unreachable API or refused credentials start nothing. An account held by a
      // Retry-After, or failing in passing (5xx), holds only its own orders: the others go on
      // while they wait.
      const first = connector ? accounts!.accountOf(connector.shop) : { account: accounts!.defaultAccount };
      const account = 'account' in first ? first.account : null;
      if (account !== null) {
        const held = new Promise<{ held: true }>((resolve) => (firstWait = () => resolve({ held: true })));
        const read = preflight.ready(account).then(
          () => ({ ok: true as const }),
          (err: unknown) => ({ ok: false as const, err }),
        );
        const outcome = await Promise.race([read, held]);
        if ('held' in outcome || (!outcome.ok && waitedOut(outcome.err))) {
          notify(`the orders of shipping account "${account}" wait for its preflight (up to --deadline); the other accounts' go on`);
        } else if (!outcome.ok) {
          const { err } = outcome;
          throw new CliError(
            `preflight${account === DEFAULT_SHIPPING_ACCOUNT ? '' : ` of shipping account "${account}"`}: cannot read GET /couriers: ${messageOf(err)}; nothing was started.\n${preflightHint(err, io.env, account)}`,
            isUnavailable(err) ? EXIT.unavailable : EXIT.usage,
          );
        }
      }
    }
    const priorities = shipmentPriorities(io.env);
    // With OTEL_EXPORTER_OTLP_ENDPOINT, each order's start is the root of its trace (tracing/).
    if (!dryRun) tracing = await importTracing(io.env);
    if (!dryRun) temporal = await connectTemporal(io.env);

    let format = (values.format as InputFormat | undefined) ?? (input === '-' || shop ? undefined : formatFromPath(input));
    let chunks: AsyncIterable<string> = source.chunks;
    if (format === undefined && !shop) ({ format, chunks } = await sniffFormat(chunks));

    const progress = new Progress(io.stderr, dryRun, { total: source.size, read: source.bytesRead });
    const human = !values.json;
    const report = (line: string) => {
      progress.clear();
      println(io.stderr, line);
    };
    notify = report;
    // Each bad record is printed up to KEPT_IN_RESULT; beyond that only the rejects file has them.
    let printed = 0;
    const reportProblem = (line: string) => {
      if (!human) return;
      printed++;
      if (printed <= KEPT_IN_RESULT) report(line);
      else if (printed === KEPT_IN_RESULT + 1) {
        report(
          `note: more records were rejected or failed; they are counted${values.rejects === undefined ? ' (use --rejects <path> to keep every one)' : ` and written to ${values.rejects}`}`,
        );
      }
    };
    const session = temporal;
    const gate = session
      ? new BacklogGate({
          maxBacklog,
          readBacklog: workflowBacklogReader(session.client, session.settings.namespace, session.settings.taskQueue),
          onNotice: (message) => report(`note: ${message}`),
        })
      : undefined;
    const result = await importRecords({
      records: shop ? shop.records : readRecords(chunks, format!),
      preflight,
      accountOf: accounts?.accountOf,
      start: session
        ? (order) => startShipment(session.client, session.settings.taskQueue, order, shipmentPriorityKey(order, priorities, Date.now()))
        : undefined,
      admit: gate ? () => gate.admit() : undefined,
      concurrency,
      platformOf,
      onRejected: (rejection, record) => {
        reportProblem(`rejected ${where(rejection)}${who(rejection)}: ${printable(reasonsText(rejection.reasons))}`);
        return rejects?.write(
          rejectLine('rejected', record, { shop: rejection.shop, orderId: rejection.orderId, reasons: rejection.reasons }),
        );
      },
      onFailed: (failure, record) => {
        reportProblem(`failed to start ${where(failure)}${who(failure)}: ${printable(failure.message)}`);
        return rejects?.write(
          rejectLine('failed_to_start', record, { shop: failure.shop, orderId: failure.orderId, error: failure.message }),
        );
      },
      onProgress: (counts) => progress.update(counts),
    });
    progress.finish(result.counts);

    const exitCode: ExitCode = result.counts.failed > 0 ? EXIT.failedToStart : result.counts.rejected > 0 ? EXIT.rejected : EXIT.ok;
    const summary: ImportSummary = {
      input,
      format: shop ? shop.connector.type : format!,
      ...(shop ? { skipped: shop.skipped() } : {}),
      dryRun,
      preflight: preflight ? 'checked' : 'skipped',
      ...result,
      // Started and known orders are skipped by the same command: it starts the rest.
      notStarted: result.notStarted.map((held) => ({ ...held, rerun: rerunCommand(argv, io.env) })),
      durationMs: Date.now() - began,
      exitCode,
    };
    if (values.json) println(io.stdout, JSON.stringify(summary, null, 2));
    else println(io.stdout, summaryText(summary, values.rejects));
    return exitCode;
  } catch (err) {
    if (err instanceof InputError) throw usageError(err.message);
    throw err;
  } finally {
    reading.abort();
    const [, , , rejectsClosed] = await Promise.allSettled([
      source.close(),
      Promise.all(catalogs.map((c) => c.close())),
      temporal?.close(),
      rejects?.close(),
      tracing?.shutdown(),
    ]);
    if (rejectsClosed?.status === 'rejected') println(io.stderr, `error: ${messageOf(rejectsClosed.reason)}`);
  }
}

// ---------------------------------------------------------------- input and output files

/** A shop read as an input: no bytes to count, nothing to close but the read itself. */
function shopSource(shop: ShopInput): InputSource {
  return {
    chunks: (async function* () {})(),
    bytesRead: () => 0,
    close: async () => {
      await shop.records.return(undefined);
    },
  };
}

interface InputSource {
  /** The input as text; the file is opened on the first read. */
  chunks: AsyncGenerator<string>;
  /** Bytes, when the input is a regular file. */
  size?: number;
  bytesRead: () => number;
  /** Closes the file if it was opened and not read to the end. */
  close: () => Promise<void>;
}

async function openInput(input: string, io: Io): Promise<InputSource> {
  let size: number | undefined;
  if (input !== '-') {
    try {
      const info = await stat(input);
      if (!info.isFile()) throw new Error('not a regular file');
      await access(input, constants.R_OK);
      size = info.size;
    } catch (err) {
      throw usageError(`cannot read input ${input}: ${messageOf(err)}`);
    }
  }
  let bytes = 0;
  async function* counted(): AsyncGenerator<Buffer | string> {
    const stream: AsyncIterable<Buffer | string> =
      input === '-' ? (io.stdin as AsyncIterable<Buffer>) : createReadStream(input, { highWaterMark: 64 * 1024 });
    for await (const chunk of stream) {
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      yield chunk;
    }
  }
  const chunks = decodeUtf8(counted());
  return {
    chunks,
    size,
    bytesRead: () => bytes,
    close: async () => {
      await chunks.return(undefined);
    },
  };
}

/**
 * The rejects file. A write waits while the file is behind (so a flood of bad records holds the
 * reading instead of filling memory); a write error is remembered and reported at the end, never thrown.
 */
class RejectsFile {
  private failure: Error | undefined;

  constructor(
    private readonly stream: WriteStream,
    readonly path: string,
  ) {
    stream.on('error', (err) => (this.failure ??= err));
  }

  private drained: Promise<void> | undefined;

  write(line: string): Promise<void> | undefined {
    if (this.failure || this.stream.write(line)) return undefined;
    // One wait shared by every writer, ended by 'drain' or by 'close' (after an error).
    this.drained ??= new Promise<void>((resolve) => {
      const done = () => {
        this.stream.off('drain', done).off('close', done);
        this.drained = undefined;
        resolve();
      };
      this.stream.on('drain', done).on('close', done);
    });
    return this.drained;
  }

  async close(): Promise<void> {
    if (!this.failure) {
      this.stream.end();
      await once(this.stream, 'finish').catch(() => undefined);
    }
    if (this.failure) throw new Error(`could not write the rejects file ${this.path}: ${this.failure.message}`);
  }
}

/** Rejected records hold names, addresses and phones: the file is readable by its owner only. */
async function openRejects(path: string): Promise<RejectsFile> {
  const stream = createWriteStream(path, { flags: 'w', mode: 0o600 });
  try {
    await once(stream, 'open');
    // A file that already existed keeps its mode on open: narrow it (not a pipe or a device).
    if ((await stat(path)).isFile()) await chmod(path, 0o600);
  } catch (err) {
    stream.destroy();
    throw usageError(`cannot write rejects file ${path}: ${messageOf(err)}`);
  }
  return new RejectsFile(stream, path);
}

/** The accounts the preflight reads and the inputs name (see shippingAccounts). */
function preflightAccounts(env: Io['env'], required: boolean): ShippingAccounts | undefined {
  try {
    return shippingAccounts(env, required);
  } catch (err) {
    if (err instanceof CliError)
      throw usageError(
        `${err.message}\nThe import checks courier and product codes with the shipping API first; ` +
          'to import without the check: --skip-preflight.',
      );
    throw err;
  }
}

/** What to check next, by what the preflight met: the wrong credentials are not an unreachable API. */
function preflightHint(err: unknown, env: Io['env'], account: string): string {
  const kind = err instanceof ShippingApiError ? err.kind : undefined;
  if ((kind === 'unauthorized' || kind === 'forbidden') && account !== DEFAULT_SHIPPING_ACCOUNT)
    return `Check the credentials of account "${account}" in ${env.SHIPPING_ACCOUNTS_FILE ? 'SHIPPING_ACCOUNTS_FILE' : 'SHIPPING_ACCOUNTS'}.`;
  if (kind === 'unauthorized' || kind === 'forbidden')
    return 'Check SHIPPING_API_KEY and SHIPPING_API_TOKEN (with `npm run dev`, the ones its banner prints).';
  if (kind === 'network')
    return `Is the shipping API running at ${env.SHIPPING_API_BASE_URL ?? '(SHIPPING_API_BASE_URL)'}? (\`npm run dev\` starts the fake one.) To import without the check: --skip-preflight.`;
  return 'To import without the check: --skip-preflight (an unknown courier or product then waits in the workflow as a label rejection).';
}

/**
 * One NDJSON line of the rejects file: the record as it was read, and why it was not imported.
 * Cannot throw: a parsed record that does not serialize is left out (its raw text stays).
 */
function rejectLine(kind: 'rejected' | 'failed_to_start', record: SourceRecord, details: Record<string, unknown>): string {
  const entry: Record<string, unknown> = { kind, line: record.line };
  if (record.index !== undefined) entry.index = record.index;
  Object.assign(entry, details);
  entry.raw = record.raw;
  if (record.header !== undefined) entry.header = record.header;
  if (record.value !== undefined) {
    try {
      return `${JSON.stringify({ ...entry, record: record.value })}\n`;
    } catch {
      entry.recordOmitted = 'the parsed record could not be written as JSON';
    }
  }
  return `${JSON.stringify(entry)}\n`;
}

// ---------------------------------------------------------------- human output

/** The command line that runs this import again, quoted for a POSIX shell where needed. */
function rerunCommand(argv: string[], env: Io['env']): string {
  // --no-encryption reaches the command as the environment's setting (commandEnvironment).
  const inClear = env[PAYLOAD_ENCRYPTION_OFF.variable] === PAYLOAD_ENCRYPTION_OFF.value && !argv.includes('--no-encryption');
  const quoted = [...(inClear ? ['--no-encryption'] : []), ...argv].map((arg) =>
    /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`,
  );
  return ['npm run cli -- import', ...quoted].join(' ');
}

function where(p: { line: number; index?: number }): string {
  return p.index === undefined ? `line ${p.line}` : `index ${p.index} (line ${p.line})`;
}

function who(p: { shop: string | null; orderId: string | null }): string {
  return p.shop !== null || p.orderId !== null ? ` (shop ${printable(p.shop ?? '?')} order ${printable(p.orderId ?? '?')})` : '';
}

function reasonsText(reasons: FieldProblem[]): string {
  return reasons.map((r) => `${r.field}: ${r.message}`).join('; ');
}

function summaryText(s: ImportSummary, rejectsPath: string | undefined): string {
  const c = s.counts;
  const lines = [
    `${s.dryRun ? 'Dry run of' : 'Imported'} ${s.input === '-' ? 'standard input' : s.input} (${s.format}, preflight ${s.preflight}) in ${(s.durationMs / 1000).toFixed(1)} s`,
    `  records        ${c.records}`,
  ];
  if (s.skipped !== undefined)
    lines.push(`  skipped        ${s.skipped}   (need no label from us: fulfilled elsewhere, on hold, picked up)`);
  if (s.dryRun) lines.push(`  valid          ${c.accepted}   (would be started or found already known)`);
  else lines.push(`  started        ${c.started}`, `  already known  ${c.alreadyKnown}`);
  lines.push(`  rejected       ${c.rejected}`);
  if (!s.dryRun || c.failed > 0) lines.push(`  failed         ${c.failed}`);
  if (rejectsPath !== undefined && (c.rejected > 0 || c.failed > 0)) lines.push(`Rejected and failed records written to ${rejectsPath}`);
  for (const held of s.notStarted) {
    lines.push(
      `Shipping account "${printable(held.account)}": ${held.orders} order${held.orders === 1 ? '' : 's'} not started, its preflight could not be read: ${printable(held.reason)}`,
      `  to start them once it can be read, run again: ${printable(held.rerun)}${s.input === '-' ? ' (with the same standard input)' : ''}`,
    );
  }
  if (s.exitCode === EXIT.failedToStart)
    lines.push('Some orders failed to start: fix the cause and import the same input again (started orders are skipped).');
  return lines.join('\n');
}

if (require.main === module) runMain(importCommand);

/** LIVE_ORDER_MAX_AGE as the workers read it: a file's orders are a backlog, a shop's recent orders live. */
function shipmentPriorities(env: Record<string, string | undefined>): ShipmentPriorities {
  try {
    return loadShipmentPriorities(env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`${err.message}\nnothing was started.`, EXIT.usage);
    throw err;
  }
}

/** The import's tracing when the environment turns it on; a bad endpoint is a usage error. */
async function importTracing(env: Record<string, string | undefined>): Promise<Tracing | undefined> {
  try {
    return await startTracingFromEnv('shipping-sync-import', env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`${err.message}\nnothing was started.`, EXIT.usage);
    throw err;
  }
}

/**
 * The worker's shop connectors, when this environment has them (SHOP_CONNECTORS or its file):
 * records of a platform shop then need a platformOrderId. Credentials are not read.
 */
function platformShops(env: Record<string, string | undefined>): (shop: string) => string | null {
  try {
    const connectors = loadShopConnectors(env, { readSecretFiles: false });
    return (shop) => {
      const type = connectors.connectorFor(shop)?.type;
      return type === 'shopify' || type === 'woocommerce' ? type : null;
    };
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`${err.message}\nnothing was started.`, EXIT.usage);
    throw err;
  }
}
