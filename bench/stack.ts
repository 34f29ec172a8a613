/**
 * The processes a benchmark measures: a Temporal dev server and worker processes (each a real
 * child process, so their RSS and CPU can be read from /proc), plus readers for those figures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection, Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { inClear } from '../config/settings';
import { localServerEnv } from '../config/temporal-connection';
import { freePort } from '../dev-server/free-port';
import { findTemporalCli } from '../dev-server/temporal-cli';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflow-definitions/shipment';
import { priorityDevServerArgs } from '../dev-server/server-priority';

export const ROOT = path.join(__dirname, '..');

/** The fake API account every scenario uses. */
export const BENCH_CREDENTIALS = { apiKey: 'bench-key', apiToken: 'bench-token' };
export const BENCH_ACCOUNTS = [{ name: 'bench', ...BENCH_CREDENTIALS }];

/** What a worker process (or the import) needs to reach the bench's server and fake API. */
export function benchProcessEnv(server: DevServer, taskQueue: string, apiBaseUrl: string): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    SHIPPING_API_BASE_URL: apiBaseUrl,
    SHIPPING_API_KEY: BENCH_CREDENTIALS.apiKey,
    SHIPPING_API_TOKEN: BENCH_CREDENTIALS.apiToken,
  };
}

export interface Proc {
  child: ChildProcess;
  pid: number;
  stop(): Promise<void>;
}

function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv, name: string, stdout: 'ignore' | number = 'ignore'): Proc {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', stdout, 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  child.on('exit', (code, signal) => {
    if (code !== 0 && code !== null && signal === null) process.stderr.write(`[bench] ${name} exited with ${code}:\n${stderr}\n`);
  });
  return {
    child,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface DevServer extends Proc {
  address: string;
  client: Client;
  connection: Connection;
  /** The server's own Prometheus endpoint (its `action` counter: what Temporal Cloud would bill). */
  metricsUrl: string;
}

/**
 * The server's `action` counter summed over namespace `default`: the count Temporal documents for
 * estimating Cloud actions on a self-hosted server (docs.temporal.io, "Estimate Actions").
 */
export async function serverActions(server: DevServer, namespace = 'default'): Promise<Map<string, number>> {
  const text = await (await fetch(server.metricsUrl)).text();
  const byType = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('action{') || !line.includes(`namespace="${namespace}"`)) continue;
    const type = /action_type="([^"]*)"/.exec(line)?.[1] ?? '?';
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) byType.set(type, (byType.get(type) ?? 0) + value);
  }
  return byType;
}

/** What `serverActions` counted between two readings, by action type, largest first. */
export function actionsBetween(before: Map<string, number>, after: Map<string, number>): Array<[string, number]> {
  return [...after]
    .map(([type, n]): [string, number] => [type, n - (before.get(type) ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
}

/**
 * A dev server with a SQLite file in a temp dir (so its RSS is the server, not the data), with task
 * queue priority on as `npm run dev` runs it; `priority: false` is the server as it was before.
 */
export async function startDevServer({ priority = true }: { priority?: boolean } = {}): Promise<DevServer> {
  const cli = await findTemporalCli({ build: true, log: (m) => process.stderr.write(`[temporal-cli] ${m}\n`) });
  if (!cli) throw new Error('No Temporal CLI found or built (see docs/testing.md, "The Temporal CLI")');
  const port = await freePort();
  const metricsPort = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-temporal-'));
  const args = [
    'server',
    'start-dev',
    '--headless',
    '--port',
    String(port),
    '--metrics-port',
    String(metricsPort),
    '--db-filename',
    path.join(dir, 'temporal.db'),
    '--log-level',
    'error',
    ...(priority ? priorityDevServerArgs() : []),
    ...(process.env.BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean),
    ...SEARCH_ATTRIBUTE_KEYS.flatMap((key) => ['--search-attribute', `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`]),
  ];
  const proc = startProcess(cli, args, process.env, 'temporal dev server');
  const address = `127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  let connection: Connection | undefined;
  while (!connection) {
    try {
      connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
    } catch (err) {
      connection = undefined;
      if (Date.now() > deadline) throw new Error(`dev server did not start: ${String(err)}`, { cause: err });
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return {
    ...proc,
    address,
    connection,
    client: new Client({ connection, namespace: 'default' }),
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    async stop() {
      await connection.close();
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let workerLogs = 0;

/**
 * `npm run worker` as a process (tsx as a loader, so one process to measure), from `dir`; or
 * `nodeArgs` (e.g. the compiled worker, as `npm start` runs it).
 * `logFile`: its log goes there (at LOG_LEVEL from `env`, else info), for a scenario that reads it.
 */
export function startWorkerProcess(
  dir: string,
  env: Record<string, string>,
  logFile?: string,
  nodeArgs: string[] = ['--import', 'tsx', path.join(dir, 'worker', 'main.ts')],
): Proc {
  // BENCH_WORKER_LOGS=<dir>: each worker's log (at info, or BENCH_WORKER_LOG_LEVEL) in a file of its own there, to read what the pacer did.
  const logs = process.env.BENCH_WORKER_LOGS;
  const file = logFile ?? (logs ? path.join(logs, `worker-${Date.now()}-${workerLogs++}.log`) : undefined);
  const stdout = file ? openSync(file, 'a') : 'ignore';
  const proc = startProcess(
    process.execPath,
    nodeArgs,
    // In clear unless the scenario gives keys: the benches' clients send in clear (a tree without this setting ignores it).
    {
      ...(env.PAYLOAD_ENCRYPTION_KEYS || env.PAYLOAD_ENCRYPTION_KEYS_FILE
        ? localServerEnv(process.env)
        : inClear(localServerEnv(process.env))),
      LOG_LEVEL: file ? (process.env.BENCH_WORKER_LOG_LEVEL ?? 'info') : 'warn',
      ...env,
    },
    'worker',
    stdout,
  );
  if (typeof stdout === 'number') proc.child.once('spawn', () => closeSync(stdout));
  return proc;
}

/** The import command of the tree at `dir`: client/import/main.ts, or client/import.ts in trees older than that folder (the baseline). */
function importEntry(dir: string): string {
  const current = path.join(dir, 'client', 'import', 'main.ts');
  return existsSync(current) ? current : path.join(dir, 'client', 'import.ts');
}

/** Runs the import CLI of the tree at `dir` to completion; resolves with its JSON summary. */
export async function runImport(dir: string, file: string, env: Record<string, string>, flags: string[] = []): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', importEntry(dir), file, '--json', '--skip-preflight', ...flags], {
      cwd: ROOT,
      // The benches' workers run without keys unless given some: their import is told so (older trees ignore the setting).
      env: {
        ...(env.PAYLOAD_ENCRYPTION_KEYS || env.PAYLOAD_ENCRYPTION_KEYS_FILE
          ? localServerEnv(process.env)
          : inClear(localServerEnv(process.env))),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
    child.on('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out));
      else reject(new Error(`import exited with ${code}: ${err}`));
    });
  });
}

/** Resident memory of a process, in MB (VmRSS), and its peak (VmHWM). */
export function rssMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The value at share `p` of `values` (nearest rank); NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
