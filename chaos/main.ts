/**
 * `npm run chaos`: a bounded chaos run of the whole system next to a plain script (see
 * ./run.ts and docs/chaos.md). Exit codes: 0 our path met every check, 1 it did not
 * (or the run broke), 2 bad flags, 130 interrupted.
 */
import { parseArgs } from 'node:util';
import { parseDuration } from '../config/settings';
import { CHAOS_FAULTS, DEFAULT_OPTIONS, runChaos, type ChaosOptions, type ChaosReport } from './run';
import { killAllChildren } from './processes';
import { platformChaosFailures, platformChaosTable, runPlatformChaos } from './platform-run';

/** Nothing may outlive this, whatever a step does. */
export const MAX_DEADLINE_MS = 580_000;

const seconds = (ms: number) => `${ms / 1000}s`;

export const HELP = `Usage: npm run chaos -- [options]

A bounded chaos run (at most 10 minutes; everything it starts is stopped at the end):
the real import, two worker processes and a Temporal dev server on a SQLite file against a
local fake shipping API answering random 429s (Retry-After ${CHAOS_FAULTS.rateLimitedRetryAfter!.minSeconds}-${CHAOS_FAULTS.rateLimitedRetryAfter!.maxSeconds} s, ${pct(CHAOS_FAULTS.rateLimitedRate)}),
500s (${pct(CHAOS_FAULTS.serverErrorRate)}), hangs (${pct(CHAOS_FAULTS.hangRate)}), lost answers (${pct(CHAOS_FAULTS.lostAnswerRate)}) and malformed bodies
(${pct(CHAOS_FAULTS.malformedRate)}); a worker is SIGKILLed every few seconds and restarted, the server
restarted once. Beside it, a plain SDK-style script (chaos/plain-script.ts) under the same faults
and kills, against its own fake. Then it checks both and prints one table.

Options:
  --orders <n>          Orders to import (default ${DEFAULT_OPTIONS.orders}); every 50th from the 7th
                        goes to postal code 00000, which the courier rejects
  --seed <n>            Seed of the kill schedule and the fakes' faults (default ${DEFAULT_OPTIONS.seed})
  --duration <d>        How long faults and kills last, e.g. 90s, 3m (default ${seconds(DEFAULT_OPTIONS.durationMs)})
  --deadline <d>        Hard limit of the whole run, at most 9m40s; a last-resort timer kills
                        everything 20 s after it (default ${seconds(DEFAULT_OPTIONS.deadlineMs)})
  --kill-every <d-d>    Range of the time between kills (default ${seconds(DEFAULT_OPTIONS.minKillMs)}-${seconds(DEFAULT_OPTIONS.maxKillMs)})
  --tracking-step-ms <ms>  One tracking stage of the fakes; delivery after 4 (default ${DEFAULT_OPTIONS.trackingStepMs})
  --keep-429s           The random 429s go on after the fault phase while the shipments settle
                        (429s no pace causes): compare "settled ... after the faults stopped"
                        and "Throughput" with a run without it (same seed)
  --platform            Instead: hostile shop platforms (issue 28). One worker process pulls four
                        shops every 5 s: a healthy Shopify and WooCommerce store and a hostile
                        one of each (half their answers absurd: throttleStatus, dates, malformed
                        and huge orders, endless paging, echoing 403s, a day's Retry-After),
                        through a clean phase and a hostile phase of --duration each (default
                        60s). Prints the healthy shops' placed-to-label p50/p95 per phase; exit 1
                        if the worker exited, a credential reached its output, or a healthy
                        order got no label
  --json                Print the report as JSON on stdout instead of the table
  -h, --help            Show this help

Our path passes (exit 0) with: zero duplicate labels, every order with a label whose details
were read, zero stuck shipments (each finished, or waiting for an operator after a rejection),
zero calls before their Retry-After (same order / label / tracking id), no credential in any
worker or import output nor in the Temporal SQLite file, no worker log line naming a task token.
It also prints the workers' log volume and their "shipping API call failed" lines (one per failed
call) against the failed or unanswered requests the fake saw. Otherwise exit 1, naming what failed.
Environment: TEMPORAL_CLI_PATH (the Temporal CLI; else found or built, see docs/testing.md);
CHAOS_KEEP_WORK_DIR=1 keeps the logs, the SQLite file and the orders.
`;

function pct(rate: number | undefined): string {
  return `${Math.round((rate ?? 0) * 100)} %`;
}

export class UsageError extends Error {}

export function parseChaosArgs(
  argv: string[],
): { help: true } | { help: false; json: boolean; platform: boolean; options: Omit<ChaosOptions, 'log' | 'signal'> } {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        orders: { type: 'string' },
        seed: { type: 'string' },
        duration: { type: 'string' },
        deadline: { type: 'string' },
        'kill-every': { type: 'string' },
        'tracking-step-ms': { type: 'string' },
        'keep-429s': { type: 'boolean' },
        platform: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return { help: true };
  const options = { ...DEFAULT_OPTIONS };
  const int = (flag: string, min: number, max: number): number | undefined => {
    const raw = values[flag] as string | undefined;
    if (raw === undefined) return undefined;
    const n = /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${flag}: "${raw}" is not an integer between ${min} and ${max}`);
    return n;
  };
  const duration = (flag: string, raw: string | undefined): number | undefined => {
    if (raw === undefined) return undefined;
    const ms = parseDuration(raw);
    if (ms === undefined || ms <= 0) throw new UsageError(`--${flag}: "${raw}" is not a positive duration like 90s or 3m`);
    return ms;
  };
  options.orders = int('orders', 1, 5000) ?? options.orders;
  options.seed = int('seed', 0, 2 ** 32 - 1) ?? options.seed;
  options.trackingStepMs = int('tracking-step-ms', 0, 60_000) ?? options.trackingStepMs;
  options.keep429s = values['keep-429s'] === true;
  options.durationMs = duration('duration', values.duration as string | undefined) ?? options.durationMs;
  options.deadlineMs = duration('deadline', values.deadline as string | undefined) ?? options.deadlineMs;
  if (options.deadlineMs > MAX_DEADLINE_MS) throw new UsageError(`--deadline: at most 9m40s (got ${seconds(options.deadlineMs)})`);
  if (options.durationMs + 60_000 > options.deadlineMs) {
    throw new UsageError(
      `--duration: leave at least 60s before the deadline for start-up and checks (deadline ${seconds(options.deadlineMs)})`,
    );
  }
  const kill = values['kill-every'] as string | undefined;
  if (kill !== undefined) {
    const [a, b, ...rest] = kill.split('-');
    const min = duration('kill-every', a);
    const max = b === undefined ? min : duration('kill-every', b);
    if (rest.length > 0 || min === undefined || max === undefined || min > max) {
      throw new UsageError(`--kill-every: "${kill}" is not a range like 5s-10s`);
    }
    options.minKillMs = min;
    options.maxKillMs = max;
  }
  const platform = values.platform === true;
  if (platform && values.duration === undefined) options.durationMs = PLATFORM_PHASE_MS;
  return { help: false, json: values.json === true, platform, options };
}

/** One phase of `--platform` unless --duration says otherwise. */
const PLATFORM_PHASE_MS = 60_000;

async function platformMain(options: { durationMs: number; seed: number }, json: boolean): Promise<number> {
  const report = await runPlatformChaos({ ...options, log: (l) => process.stderr.write(`${l}\n`) });
  report.failures = platformChaosFailures(report);
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    process.stdout.write(`\n${platformChaosTable(report)}\n`);
    process.stdout.write(report.failures.length === 0 ? '\nPASS\n' : `\nFAIL\n${report.failures.map((f) => `  - ${f}`).join('\n')}\n`);
  }
  return report.failures.length === 0 ? 0 : 1;
}

export function printReport(report: ChaosReport, write: (s: string) => void): void {
  const e = report.events;
  write(`\n${report.table}\n\n`);
  write(
    `Run: ${(report.elapsedMs / 1000).toFixed(0)} s; ${e.workerKills} worker kills, ${e.scriptKills} script kills ` +
      `(script started ${e.scriptStarts}x, ${e.scriptFinished ? 'finished its last pass' : 'did not finish its last pass'}), ` +
      `${e.serverRestarts} server restart(s)${e.serverDownMs === null ? '' : ` (at ${e.serverRestartAt}, down ${(e.serverDownMs / 1000).toFixed(1)} s)`}, ` +
      `import: ${e.importRuns.length} run(s), exit code(s) ${e.importRuns.map((r) => r.exitCode).join(', ')}; ` +
      `settled ${e.settledAfterFaultsMs === null ? 'not before the deadline' : `${(e.settledAfterFaultsMs / 1000).toFixed(0)} s after the faults stopped`}` +
      `${e.keep429s ? ' (the random 429s went on while settling)' : ''}.\n`,
  );
  const t = report.throughput;
  write(
    t === null
      ? 'Throughput: no shipment finished.\n'
      : `Throughput: ${t.finished} shipments finished within ${t.seconds} s of the start, ${t.perMinute} a minute` +
          ` (put beside a run ${e.keep429s ? 'without' : 'with'} --keep-429s, same seed).\n`,
  );
  const faults = (s: ChaosReport['stats']['ours']) =>
    Object.entries(s.requests)
      .map(
        ([k, v]) =>
          `${k} ${Object.entries(v)
            .map(([st, n]) => `${st}:${n}`)
            .join(' ')}`,
      )
      .join('; ');
  const logs = report.ours.logs;
  if (logs) {
    const failedAnswers = report.logs.ours.filter((r) => (r.status >= 400 && r.status !== 404) || r.fault !== null).length;
    write(
      `Our workers' logs: ${(logs.bytes / 1024).toFixed(0)} KB, ${logs.lines} lines, ${logs.warnLines} at warn or worse; ` +
        `${logs.failedCallLines} "shipping API call failed" lines for ${failedAnswers} failed or unanswered requests; ` +
        `${logs.taskTokenLines} naming a task token.\n`,
    );
  }
  write(`Requests seen by our fake: ${faults(report.stats.ours)}\n`);
  write(`Requests seen by the script's fake: ${faults(report.stats.plain)}\n`);
  for (const r of [report.ours, report.plain]) {
    if (r.retryAfter.length === 0) continue;
    write(`\nCalls before their Retry-After, ${r.path} (${r.retryAfter.length}):\n`);
    for (const v of r.retryAfter.slice(0, 20)) {
      write(
        `  ${v.resource}: 429 at ${new Date(v.rateLimitedAt).toISOString()} with Retry-After ${v.retryAfterMs / 1000} s, ` +
          `next call ${v.gapMs} ms later (early by ${v.retryAfterMs - v.gapMs} ms)\n`,
      );
    }
    if (r.retryAfter.length > 20) write(`  … and ${r.retryAfter.length - 20} more\n`);
  }
  write(report.failures.length === 0 ? '\nOur path: PASS\n' : `\nOur path: FAIL\n${report.failures.map((f) => `  - ${f}`).join('\n')}\n`);
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseChaosArgs>;
  try {
    parsed = parseChaosArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`chaos: ${e.message}\nRun with --help to list the options.\n`);
    return 2;
  }
  if (parsed.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const interrupt = new AbortController();
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      killAllChildren();
      process.exit(130);
    }
    interrupted = true;
    process.stderr.write(`chaos: ${signal}: stopping everything\n`);
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // The last resort: whatever hangs, nothing outlives the deadline.
  const hardStop = setTimeout(() => {
    process.stderr.write('chaos: hard deadline reached: killing every child process\n');
    killAllChildren();
    process.exit(1);
  }, parsed.options.deadlineMs + 20_000);
  hardStop.unref();
  try {
    if (parsed.platform) return await platformMain(parsed.options, parsed.json);
    const report = await runChaos({ ...parsed.options, log: (l) => process.stderr.write(`${l}\n`), signal: interrupt.signal });
    if (parsed.json) {
      const { logs: _logs, ...rest } = report;
      process.stdout.write(`${JSON.stringify(rest, null, 2)}\n`);
    } else printReport(report, (s) => process.stdout.write(s));
    if (interrupted) return 130;
    return report.failures.length === 0 ? 0 : 1;
  } finally {
    killAllChildren();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`chaos: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      killAllChildren();
      process.exit(1);
    },
  );
}
