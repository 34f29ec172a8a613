/**
 * `npm run cluster` — a Temporal cluster as production runs it, on this machine as plain
 * processes: PostgreSQL (Debian's package, a private instance), the Temporal server with its
 * schema set up by its own SQL tool, the Web UI server, the fake shipping API and several workers
 * on one task queue. `status`, `down`, `restart|stop|start <service>` talk to a running one.
 */
import fs from 'node:fs';
import http from 'node:http';
import { portProblem } from '../dev-server/local-server';
import { connectWhenReady } from '../dev-server/temporal-ready';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Connection, isGrpcServiceError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { z } from 'zod';
import { ensureSearchAttributes } from '../dev-server/search-attributes';
import { REPO_ROOT } from '../dev-server/temporal-cli';
import { DEFAULT_TASK_QUEUE } from '../workflows/definitions';
import { findClusterBinaries, TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from './binaries';
import {
  clusterLayout,
  NAMESPACE,
  NAMESPACE_RETENTION_DAYS,
  SQL_PASSWORD_ENV,
  TEMPORAL_PORT_BLOCK,
  writeServerConfigs,
  type ClusterLayout,
} from './config';
import { fetchStatus, controlRequest, serviceAction, SERVICE_ACTIONS, startControlServer, type ClusterStatus, type ServiceAction } from './control';
import { findPostgres, initPostgres, installPostgres, postgresCommand, postgresPassword, postgresRunAs, waitForPostgres } from './postgres';
import { setupSchemas } from './schema';
import { Service, type ServiceSpec } from './services';

const DEFAULTS = {
  dataDir: path.join(REPO_ROOT, '.data', 'cluster'),
  pgPort: 5433,
  temporalPort: 7233,
  uiPort: 8080,
  fakeApiPort: 4010,
  workers: 2,
  trackingStepMs: 15_000,
  temporalLogLevel: 'warn',
};
const DEV_API_KEY = 'dev-api-key';
const DEV_API_TOKEN = 'dev-api-token';
const DEMO_POLL_INTERVAL = '20s';
/** `npm run cluster -- status` exits with this when no cluster runs (as LSB init scripts do). */
const EXIT_NOT_RUNNING = 3;

const HELP = `Usage: npm run cluster [-- up] [options]
       npm run cluster -- status [--json] [--data-dir <dir>]
       npm run cluster -- down [--data-dir <dir>]
       npm run cluster -- restart|stop|start <service> [--data-dir <dir>]
       npm run cluster -- binaries

up (the default) runs, as processes on this machine, until Ctrl-C or SIGTERM:
  postgres   PostgreSQL from Debian's packages (apt-get install postgresql if missing, as root),
             a private instance: initdb into <data-dir>/pg, 127.0.0.1:<pg-port> only, password
             in <data-dir>/pg-password; run as the postgres user when started as root
  temporal   the Temporal server ${TEMPORAL_SERVER_VERSION} (all four services in one process) on PostgreSQL,
             schema set up and updated by temporal-sql-tool, namespace ${NAMESPACE} and this
             project's search attributes registered
  ui         the Temporal Web UI server ${TEMPORAL_UI_VERSION}
  fake-api   the fake shipping API (only if SHIPPING_API_BASE_URL is unset)
  worker-N   --workers worker processes (npm run worker) on one task queue
The Temporal binaries come from $TEMPORAL_SERVER_PATH / $TEMPORAL_SQL_TOOL_PATH /
$TEMPORAL_UI_SERVER_PATH, PATH, .tools/bin, or are built there with Go (minutes, once).
Ctrl-C stops everything, workers first. A worker that dies stays down and the others carry on;
PostgreSQL, Temporal, the UI or the fake API dying stops the cluster.

status    the running cluster's addresses and every service's state (--json: as JSON); exit 3
          when none runs
down      stops the running cluster (or what a killed one left behind)
restart|stop|start <service>
          e.g. restart temporal, stop worker-2, start worker-2 (waits until it serves)
binaries  finds or builds the three Temporal binaries and prints their paths (CI warms them so)

Options:
  --data-dir <dir>            state: PostgreSQL data, configs, control socket (default .data/cluster)
  --pg-port <n>               PostgreSQL (default ${DEFAULTS.pgPort})
  --temporal-port <n>         Temporal frontend gRPC (default ${DEFAULTS.temporalPort}); the server uses the
                              ${TEMPORAL_PORT_BLOCK} ports from there: history, matching, worker, HTTP API, membership, metrics
                              (at most 32757: the server stores membership ports as a smallint)
  --ui-port <n>               Web UI (default ${DEFAULTS.uiPort})
  --fake-api-port <n>         fake shipping API (default ${DEFAULTS.fakeApiPort})
  --workers <n>               worker processes (default ${DEFAULTS.workers})
  --tracking-step-ms <n>      fake API: time between tracking checkpoints (default ${DEFAULTS.trackingStepMs})
  --temporal-log-level <l>    debug, info, warn, error (default ${DEFAULTS.temporalLogLevel})
  --json                      status: print JSON
  -h, --help                  this text

Environment: SHIPPING_API_BASE_URL / SHIPPING_API_KEY / SHIPPING_API_TOKEN, TEMPORAL_TASK_QUEUE,
TRACKING_POLL_INTERVAL (default ${DEMO_POLL_INTERVAL} here), LOG_LEVEL go to the workers as for npm run dev;
PG_BIN_DIR picks a PostgreSQL installation.
`;

const port = z.coerce.number().int().min(1).max(65535);
const Options = z.object({
  dataDir: z.string().min(1).default(DEFAULTS.dataDir),
  pgPort: port.default(DEFAULTS.pgPort),
  // The server stores membership ports in a SQL smallint: the whole block must stay below 32768.
  temporalPort: z.coerce.number().int().min(1).max(32767 - TEMPORAL_PORT_BLOCK, 'the server keeps its ports in a smallint: at most 32757').default(DEFAULTS.temporalPort),
  uiPort: port.default(DEFAULTS.uiPort),
  fakeApiPort: port.default(DEFAULTS.fakeApiPort),
  workers: z.coerce.number().int().min(1).max(32).default(DEFAULTS.workers),
  trackingStepMs: z.coerce.number().int().min(0).default(DEFAULTS.trackingStepMs),
  temporalLogLevel: z.enum(['debug', 'info', 'warn', 'error']).default('warn'),
  json: z.boolean().default(false),
});
type Options = z.infer<typeof Options>;

const FLAG_NAMES: Record<string, string> = {
  dataDir: '--data-dir',
  pgPort: '--pg-port',
  temporalPort: '--temporal-port',
  uiPort: '--ui-port',
  fakeApiPort: '--fake-api-port',
  workers: '--workers',
  trackingStepMs: '--tracking-step-ms',
  temporalLogLevel: '--temporal-log-level',
};

class UsageError extends Error {}

function parseCommandLine(argv: string[]): { command: string; target?: string; options: Options; help: boolean } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      'pg-port': { type: 'string' },
      'temporal-port': { type: 'string' },
      'ui-port': { type: 'string' },
      'fake-api-port': { type: 'string' },
      workers: { type: 'string' },
      'tracking-step-ms': { type: 'string' },
      'temporal-log-level': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const parsed = Options.safeParse({
    dataDir: values['data-dir'],
    pgPort: values['pg-port'],
    temporalPort: values['temporal-port'],
    uiPort: values['ui-port'],
    fakeApiPort: values['fake-api-port'],
    workers: values.workers,
    trackingStepMs: values['tracking-step-ms'],
    temporalLogLevel: values['temporal-log-level'],
    json: values.json,
  });
  if (!parsed.success) {
    throw new UsageError(
      parsed.error.issues.map((i) => `${FLAG_NAMES[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`).join('\n'),
    );
  }
  const [command = 'up', target, ...rest] = positionals;
  const known = ['up', 'status', 'down', 'binaries', ...SERVICE_ACTIONS];
  if (!known.includes(command)) throw new UsageError(`Unknown command "${command}" (one of ${known.join(', ')})`);
  const wantsTarget = (SERVICE_ACTIONS as readonly string[]).includes(command);
  if (wantsTarget && !target) throw new UsageError(`${command} needs a service name, e.g. ${command} worker-1`);
  if ((!wantsTarget && target !== undefined) || rest.length > 0) throw new UsageError(`Unexpected argument "${wantsTarget ? rest[0] : target}"`);
  return { command, target, options: { ...parsed.data, dataDir: path.resolve(parsed.data.dataDir) }, help: values.help ?? false };
}

// ---------------------------------------------------------------- output

const useColor = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: number, s: string) => (useColor ? `\u001b[${code}m${s}\u001b[0m` : s);
const COLORS: Record<string, number> = { postgres: 34, temporal: 35, ui: 33, 'fake-api': 36 };
const say = (msg: string) => process.stdout.write(`${paint(1, '[cluster]')} ${msg}\n`);
const warn = (msg: string) => process.stderr.write(`${paint(33, '[cluster]')} ${msg}\n`);
function serviceOutput(name: string, line: string, stderr: boolean): void {
  (stderr ? process.stderr : process.stdout).write(`${paint(COLORS[name] ?? 32, `[${name}]`)} ${line}\n`);
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- leftovers of a killed cluster

/** What `up` records in <data-dir>/cluster.json, so `down` can clean up after a killed `up`. */
const StateFile = z.object({
  pid: z.number(),
  services: z.array(z.object({ name: z.string(), pid: z.number(), command: z.string(), stopSignal: z.string() })),
});

function processCommand(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
  } catch {
    return undefined;
  }
}

/** Stops processes a killed `up` left running (only those still running the recorded program). */
async function stopLeftovers(layout: ClusterLayout): Promise<string[]> {
  if (!fs.existsSync(layout.stateFile)) return [];
  const state = StateFile.safeParse(JSON.parse(fs.readFileSync(layout.stateFile, 'utf8')));
  const stopped: string[] = [];
  if (state.success) {
    // Reverse start order, as a normal stop does.
    for (const s of [...state.data.services].reverse()) {
      if (processCommand(s.pid) !== s.command) continue;
      try {
        process.kill(s.pid, s.stopSignal as NodeJS.Signals);
      } catch {
        continue;
      }
      const deadline = Date.now() + 20_000;
      while (processCommand(s.pid) === s.command && Date.now() < deadline) await delay(100);
      if (processCommand(s.pid) === s.command) {
        try {
          process.kill(-s.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      stopped.push(`${s.name} (pid ${s.pid})`);
    }
  }
  fs.rmSync(layout.stateFile, { force: true });
  fs.rmSync(layout.controlSocket, { force: true });
  return stopped;
}

// ---------------------------------------------------------------- checks

async function assertPortFree(port: number, what: string, flag: string): Promise<void> {
  const problem = await portProblem(port, what, flag);
  if (problem) throw new UsageError(problem);
}

// ---------------------------------------------------------------- Temporal


const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;

/** Registers the namespace (first start) and the project's search attributes in it. */
async function setUpNamespace(connection: Connection, dataDir: string): Promise<{ created: boolean; attributes: string[] }> {
  let created = false;
  try {
    await connection.workflowService.describeNamespace({ namespace: NAMESPACE });
  } catch (err) {
    if (!isGrpcServiceError(err) || err.code !== GRPC_NOT_FOUND) throw err;
    try {
      await connection.workflowService.registerNamespace({
        namespace: NAMESPACE,
        workflowExecutionRetentionPeriod: msToTs(`${NAMESPACE_RETENTION_DAYS} days`),
        description: 'shipments (npm run cluster)',
      });
      created = true;
    } catch (e) {
      if (!isGrpcServiceError(e) || e.code !== GRPC_ALREADY_EXISTS) throw e;
    }
  }
  // A new namespace reaches the frontend's namespace cache within seconds; until then it is "not found".
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const attributes = await ensureSearchAttributes(
        connection,
        NAMESPACE,
        `Stop the cluster and delete ${dataDir} to start fresh (this drops its workflow history).`,
      );
      return { created, attributes };
    } catch (err) {
      if (!isGrpcServiceError(err) || err.code !== GRPC_NOT_FOUND || Date.now() > deadline) throw err;
      await delay(500);
    }
  }
}

function waitForHttp(url: string, service: Service, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (!service.alive()) return reject(new Error(`${service.name} exited during startup (${service.lastExit})`));
      const req = http.get(url, (res) => {
        res.resume();
        resolve();
      });
      req.setTimeout(2_000, () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        if (Date.now() > deadline) reject(new Error(`${service.name} did not answer on ${url} within ${timeoutMs / 1000} s`));
        else setTimeout(attempt, 300);
      });
    };
    attempt();
  });
}

// ---------------------------------------------------------------- up

async function up(o: Options): Promise<void> {
  const began = Date.now();
  const phases: Array<[string, number]> = [];
  let phaseStart = began;
  const phase = (name: string) => {
    const now = Date.now();
    phases.push([name, (now - phaseStart) / 1000]);
    phaseStart = now;
  };
  const layout = clusterLayout(o.dataDir);
  fs.mkdirSync(layout.dataDir, { recursive: true });

  if (await fetchStatus(layout.controlSocket).catch(() => undefined)) {
    throw new UsageError(`A cluster is already running with data dir ${layout.dataDir} (npm run cluster -- status).`);
  }
  const leftovers = await stopLeftovers(layout);
  if (leftovers.length > 0) warn(`Stopped what a previous cluster left running: ${leftovers.join(', ')}`);

  const externalApi = process.env.SHIPPING_API_BASE_URL;
  await assertPortFree(o.pgPort, 'PostgreSQL', '--pg-port');
  for (let i = 0; i < TEMPORAL_PORT_BLOCK; i++) {
    await assertPortFree(o.temporalPort + i, `Temporal server, block ${o.temporalPort}-${o.temporalPort + TEMPORAL_PORT_BLOCK - 1}`, '--temporal-port');
  }
  await assertPortFree(o.uiPort, 'Web UI', '--ui-port');
  if (!externalApi) await assertPortFree(o.fakeApiPort, 'fake shipping API', '--fake-api-port');

  const pg = findPostgres() ?? installPostgres(say);
  phase('postgres package');
  const binaries = await findClusterBinaries({ log: say });
  phase('temporal binaries');
  const runAs = postgresRunAs();
  const password = postgresPassword(layout.passwordFile);
  if (initPostgres(pg, layout.pgDir, password, runAs)) say(`Created a PostgreSQL ${pg.version} cluster in ${layout.pgDir}`);
  phase('initdb');
  const { temporalArgs, uiArgs } = writeServerConfigs(layout, {
    temporalPort: o.temporalPort,
    pgPort: o.pgPort,
    uiPort: o.uiPort,
    logLevel: o.temporalLogLevel,
  });

  // ---- supervision
  const services: Service[] = [];
  let shuttingDown = false;
  let control: http.Server | undefined;
  const writeState = () => {
    const state: z.infer<typeof StateFile> = {
      pid: process.pid,
      services: services
        .filter((s) => s.pid !== undefined)
        .map((s) => ({ name: s.name, pid: s.pid!, command: s.spec.command, stopSignal: s.spec.stopSignal })),
    };
    fs.writeFileSync(layout.stateFile, JSON.stringify(state, null, 2));
  };
  const shutdown = async (code: number, reason?: string): Promise<never> => {
    if (!shuttingDown) {
      shuttingDown = true;
      if (reason) (code === 0 ? say : warn)(reason);
      for (const s of [...services].reverse()) await s.stop();
      control?.close();
      fs.rmSync(layout.controlSocket, { force: true });
      fs.rmSync(layout.stateFile, { force: true });
      if (code === 0) say('All stopped.');
      process.exit(code);
    }
    return new Promise<never>(() => undefined);
  };
  const onUnexpectedExit = (service: Service, why: string) => {
    writeState();
    if (shuttingDown) return;
    if (service.spec.critical) void shutdown(1, `${service.name} exited unexpectedly (${why}); stopping the cluster.`);
    else warn(`${service.name} exited (${why}); the other workers carry on. Start it again with: npm run cluster -- start ${service.name}`);
  };
  const add = (spec: ServiceSpec) => {
    const service = new Service(spec, serviceOutput, onUnexpectedExit);
    services.push(service);
    return service;
  };
  process.on('exit', () => {
    for (const s of services) s.killGroup();
  });
  let firstSignalAt = 0;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (firstSignalAt > 0) {
        // tsx (under npm run cluster) relays the same Ctrl-C again a moment later: not a second press.
        if (Date.now() - firstSignalAt < 1_000) return;
        warn('Second interrupt: killing everything now.');
        for (const s of services) s.killGroup();
        process.exit(130);
      }
      firstSignalAt = Date.now();
      if (signal === 'SIGINT') process.stdout.write('\n');
      void shutdown(0, `Got ${signal}; stopping (Ctrl-C again to kill).`);
    });
  }

  const address = `127.0.0.1:${o.temporalPort}`;
  const taskQueue = process.env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE;
  const apiKey = process.env.SHIPPING_API_KEY || DEV_API_KEY;
  const apiToken = process.env.SHIPPING_API_TOKEN || DEV_API_TOKEN;
  const pollInterval = process.env.TRACKING_POLL_INTERVAL || DEMO_POLL_INTERVAL;
  let apiUrl = externalApi ?? `http://127.0.0.1:${o.fakeApiPort}`;
  const { command: pgCommand, args: pgArgs } = postgresCommand(pg, layout.pgDir, o.pgPort);
  const nodeTsx = (file: string, args: string[] = []) => ({ command: process.execPath, args: ['--import', 'tsx', file, ...args] });

  const postgres = add({
    name: 'postgres',
    command: pgCommand,
    args: pgArgs,
    env: { PATH: process.env.PATH, LANG: 'C' },
    cwd: layout.pgDir,
    runAs,
    stopSignal: 'SIGINT',
    critical: true,
    ready: (s) => waitForPostgres(pg, o.pgPort, () => s.alive()),
    // create-database at every start logs an error for the database that is already there.
    quiet: (line) => /ERROR: {2}database "[\w]+" already exists|STATEMENT: {2}CREATE DATABASE/.test(line),
  });
  const temporal = add({
    name: 'temporal',
    command: binaries.server,
    args: temporalArgs,
    // Only what the server needs: the database password never reaches the other processes.
    env: { PATH: process.env.PATH, [SQL_PASSWORD_ENV]: password },
    cwd: layout.temporalConfigDir,
    stopSignal: 'SIGTERM',
    critical: true,
    ready: async (s) => {
      const connection = await connectWhenReady(address, { namespace: 'temporal-system', alive: () => s.alive(), what: 'the Temporal server', timeoutMs: 120_000 });
      await connection.close();
    },
    // Its config loading at every start; while it stops on purpose, the warnings of services
    // losing each other mean nothing.
    quiet: (line, stopping) => /Loading config/.test(line) || (stopping && !/"level":"(error|fatal)"/.test(line)),
  });
  const ui = add({
    name: 'ui',
    command: binaries.ui,
    args: uiArgs,
    env: { PATH: process.env.PATH },
    cwd: layout.uiConfigDir,
    stopSignal: 'SIGTERM',
    critical: true,
    ready: (s) => waitForHttp(`http://127.0.0.1:${o.uiPort}/`, s),
    // Its config loading, and an access log line for every successful request.
    quiet: (line) => /Loading config/.test(line) || /^\{"time":.*"status":[123]\d\d,/.test(line),
  });
  const fakeApi = externalApi
    ? undefined
    : add({
        name: 'fake-api',
        ...nodeTsx('fake-shipping-api/main.ts', ['--port', String(o.fakeApiPort), '--tracking-step-ms', String(o.trackingStepMs)]),
        env: { ...process.env, SHIPPING_API_KEY: apiKey, SHIPPING_API_TOKEN: apiToken },
        cwd: REPO_ROOT,
        stopSignal: 'SIGTERM',
        critical: true,
        ready: async (s) => {
          apiUrl = (await s.waitForLine(/Fake shipping API listening on (\S+)/, 60_000))[1]!;
        },
      });
  const workers = Array.from({ length: o.workers }, (_, i) =>
    add({
      name: `worker-${i + 1}`,
      ...nodeTsx('worker/main.ts'),
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: address,
        TEMPORAL_NAMESPACE: NAMESPACE,
        TEMPORAL_TASK_QUEUE: taskQueue,
        SHIPPING_API_BASE_URL: apiUrl,
        SHIPPING_API_KEY: apiKey,
        SHIPPING_API_TOKEN: apiToken,
        TRACKING_POLL_INTERVAL: pollInterval,
      },
      cwd: REPO_ROOT,
      // The worker drains on SIGINT/SIGTERM and exits 0.
      stopSignal: 'SIGTERM',
      critical: false,
      ready: async (s) => {
        await s.waitForLine(/"msg":"worker started"/, 120_000);
      },
    }),
  );

  const status = (): ClusterStatus => ({
    pid: process.pid,
    startedAt: new Date(began).toISOString(),
    dataDir: layout.dataDir,
    temporalAddress: address,
    namespace: NAMESPACE,
    taskQueue,
    webUi: `http://localhost:${o.uiPort}`,
    shippingApi: apiUrl,
    postgres: `127.0.0.1:${o.pgPort}`,
    versions: { temporalServer: TEMPORAL_SERVER_VERSION, ui: TEMPORAL_UI_VERSION, postgres: pg.version },
    services: services.map((s) => s.status()),
  });
  // One action at a time: a restart must not interleave with a stop of the same service.
  let actions = Promise.resolve();
  control = await startControlServer(layout.controlSocket, {
    status,
    service: (name, action: ServiceAction) => {
      const run = async () => {
        const service = services.find((s) => s.name === name);
        if (!service) throw new Error(`No service ${name} (services: ${services.map((s) => s.name).join(', ')})`);
        if (shuttingDown) throw new Error('The cluster is stopping');
        if (action !== 'start') {
          say(`${action === 'restart' ? 'Restarting' : 'Stopping'} ${name}`);
          await service.stop();
        }
        if (action !== 'stop') {
          if (service.alive()) throw new Error(`${name} is already ${service.state}`);
          await service.start();
          say(`${name} is running (pid ${service.pid})`);
        }
        writeState();
        return service.status();
      };
      const result = actions.then(run);
      actions = result.then(
        () => undefined,
        () => undefined,
      );
      return result;
    },
    down: () => void shutdown(0, 'Stopping (npm run cluster -- down).'),
  });

  /** Everything in order, each waiting for the one before to serve. */
  async function startAll(): Promise<void> {
    const startService = async (s: Service) => {
      await s.start();
      writeState();
    };
    say(`Starting PostgreSQL ${pg.version} on 127.0.0.1:${o.pgPort}${runAs ? ` (as the ${runAs.user} user)` : ''}`);
    await startService(postgres);
    phase('postgres start');
    const databases = await setupSchemas(binaries.sqlTool, o.pgPort, password);
    say(`Schema of ${databases.join(' and ')} at the server's version (temporal-sql-tool)`);
    phase('schema');
    say(`Starting the Temporal server ${TEMPORAL_SERVER_VERSION} on ${address} (ports ${o.temporalPort}-${o.temporalPort + TEMPORAL_PORT_BLOCK - 1})`);
    await startService(temporal);
    phase('temporal start');
    const connection = await Connection.connect({ address });
    try {
      const ns = await setUpNamespace(connection, layout.dataDir);
      if (ns.created) say(`Registered namespace ${NAMESPACE} (retention ${NAMESPACE_RETENTION_DAYS} days)`);
      if (ns.attributes.length > 0) say(`Registered search attributes: ${ns.attributes.join(', ')}`);
    } finally {
      await connection.close();
    }
    phase('namespace');
    say(`Starting the Web UI ${TEMPORAL_UI_VERSION} on http://localhost:${o.uiPort}`);
    await startService(ui);
    phase('ui start');
    if (fakeApi) {
      await startService(fakeApi);
      for (const w of workers) w.spec.env.SHIPPING_API_BASE_URL = apiUrl;
    }
    say(`Starting ${workers.length} workers on task queue ${taskQueue}`);
    // Together: each bundles the workflow code at start, which is most of their start-up time.
    await Promise.all(workers.map(startService));
    phase('workers start');
  }

  try {
    await startAll();
  } catch (err) {
    await shutdown(1, `Start-up failed: ${(err as Error).message}`);
  }
  const total = (Date.now() - began) / 1000;
  const line = '─'.repeat(72);
  process.stdout.write(
    [
      '',
      line,
      paint(1, ` Temporal cluster is running (up in ${total.toFixed(1)} s)`),
      `   ${phases.map(([n, s]) => `${n} ${s.toFixed(1)} s`).join(', ')}`,
      '',
      `   Temporal address  ${address}  (namespace ${NAMESPACE}, task queue ${taskQueue})`,
      `   Web UI            http://localhost:${o.uiPort}`,
      `   PostgreSQL        127.0.0.1:${o.pgPort}  (user ${'temporal'}, password in ${layout.passwordFile})`,
      `   Shipping API      ${apiUrl}${externalApi ? '' : `  (fake; tracking advances every ${o.trackingStepMs / 1000} s)`}`,
      `   Workers           ${workers.map((w) => `${w.name} (pid ${w.pid})`).join(', ')}`,
      `   Data              ${layout.dataDir}`,
      '',
      ' In another terminal:',
      `   export TEMPORAL_ADDRESS=${address} SHIPPING_API_BASE_URL=${apiUrl} SHIPPING_API_KEY=${apiKey === DEV_API_KEY ? apiKey : '<your key>'} SHIPPING_API_TOKEN=${apiToken === DEV_API_TOKEN ? apiToken : '<your token>'}`,
      '   npm run import -- examples/orders.ndjson',
      `   npm run cluster -- status${o.dataDir === DEFAULTS.dataDir ? '' : ` --data-dir ${o.dataDir}`}`,
      '',
      ' Ctrl-C (or npm run cluster -- down) stops everything.',
      line,
      '',
    ].join('\n'),
  );
}

// ---------------------------------------------------------------- status, down, service actions

function printStatus(s: ClusterStatus): void {
  const rows = s.services.map((v) => [v.name, v.state, v.pid === null ? '-' : String(v.pid), v.since ?? '-', String(v.restarts), v.lastExit ?? '-']);
  const header = ['SERVICE', 'STATE', 'PID', 'SINCE', 'RESTARTS', 'LAST EXIT'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  process.stdout.write(
    [
      `Cluster pid ${s.pid}, up since ${s.startedAt}, data ${s.dataDir}`,
      `  Temporal ${s.versions.temporalServer}  ${s.temporalAddress}  (namespace ${s.namespace}, task queue ${s.taskQueue})`,
      `  Web UI ${s.versions.ui}    ${s.webUi}`,
      `  PostgreSQL ${s.versions.postgres}  ${s.postgres}`,
      `  Shipping API   ${s.shippingApi}`,
      '',
      fmt(header),
      ...rows.map(fmt),
      '',
    ].join('\n'),
  );
}

async function down(layout: ClusterLayout): Promise<void> {
  const status = await fetchStatus(layout.controlSocket).catch(() => undefined);
  if (status) {
    await controlRequest(layout.controlSocket, 'POST', '/down');
    // Done when the process is gone (it removes the socket just before exiting).
    const deadline = Date.now() + 120_000;
    while (processCommand(status.pid) !== undefined) {
      if (Date.now() > deadline) throw new Error(`The cluster (pid ${status.pid}) did not stop within 120 s`);
      await delay(200);
    }
    say(`Stopped the cluster (pid ${status.pid}).`);
    return;
  }
  const leftovers = await stopLeftovers(layout);
  say(leftovers.length > 0 ? `No cluster was running; stopped what one left: ${leftovers.join(', ')}` : 'No cluster is running.');
}

async function main(): Promise<number> {
  const { command, target, options, help } = parseCommandLine(process.argv.slice(2));
  if (help) {
    process.stdout.write(HELP);
    return 0;
  }
  const layout = clusterLayout(options.dataDir);
  switch (command) {
    case 'up':
      await up(options);
      return -1; // keeps running until a signal or down
    case 'status': {
      const status = await fetchStatus(layout.controlSocket);
      if (!status) {
        if (options.json) process.stdout.write(`${JSON.stringify({ running: false })}\n`);
        else process.stdout.write(`No cluster is running (data dir ${layout.dataDir}).\n`);
        return EXIT_NOT_RUNNING;
      }
      if (options.json) process.stdout.write(`${JSON.stringify({ running: true, ...status }, null, 2)}\n`);
      else printStatus(status);
      return 0;
    }
    case 'down':
      await down(layout);
      return 0;
    case 'binaries': {
      const found = await findClusterBinaries({ log: (msg) => process.stderr.write(`${msg}\n`) });
      process.stdout.write(`${Object.values(found).join('\n')}\n`);
      return 0;
    }
    default: {
      const result = await serviceAction(layout.controlSocket, target!, command as ServiceAction);
      say(`${result.name}: ${result.state}${result.pid ? ` (pid ${result.pid})` : ''}`);
      return 0;
    }
  }
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof UsageError || (err as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      process.stderr.write(`${(err as Error).message}\n\nnpm run cluster -- --help lists the options.\n`);
      process.exit(2);
    }
    process.stderr.write(`${paint(31, '[cluster]')} ${err instanceof Error ? err.message : String(err)}\n`);
    // Whatever started is killed by the exit handler.
    process.exit(1);
  },
);
