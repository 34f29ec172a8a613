/**
 * A bounded chaos run: our path (the real import, two real worker processes, a real Temporal dev
 * server on a SQLite file) and a plain script side by side, each against its own in-process fake
 * shipping API with the same faults, while workers and script are SIGKILLed every few seconds
 * and the server is restarted once. Then the checks of ./checks.ts on what the fakes saw.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { localServerEnv } from '../config/temporal-connection';
import { freePort } from '../dev-server/free-port';
import { findTemporalCli } from '../dev-server/temporal-cli';
import { mulberry32 } from '../fake-shipping-api/faults';
import { startFakeShippingApi, type FakeAccount, type FakeRequest, type FakeShippingApi, type Faults } from '../fake-shipping-api/server';
import { SA, shipmentWorkflowId, stateQuery, type ShipmentInput } from '../workflows/definitions';
import {
  accountWideViolations,
  checkLabels,
  credentialLeaks,
  failuresOf,
  formatTable,
  logVolume,
  retryAfterViolations,
  type PathResult,
  type ShipmentCounts,
} from './checks';
import { DevServer, ManagedProcess, sleep } from './processes';

const ROOT = path.join(__dirname, '..');
const TASK_QUEUE = 'chaos';
const SHOP = 'chaos';

export interface ChaosOptions {
  orders: number;
  seed: number;
  /** How long the faults and kills last. */
  durationMs: number;
  /** Hard limit of the whole run, start-up and checks included. */
  deadlineMs: number;
  /** Kill a worker (and, separately, the plain script) every minKillMs..maxKillMs. */
  minKillMs: number;
  maxKillMs: number;
  /** Length of one tracking stage of the fakes: a label is delivered after 4 of them. */
  trackingStepMs: number;
  /** Progress lines (stderr in the CLI). */
  log: (line: string) => void;
  /** Aborts the run early (signals): it still checks what it has and stops everything. */
  signal?: AbortSignal;
}

export const DEFAULT_OPTIONS: Omit<ChaosOptions, 'log'> = {
  orders: 300,
  seed: 1,
  durationMs: 240_000,
  deadlineMs: 570_000,
  minKillMs: 5_000,
  maxKillMs: 10_000,
  trackingStepMs: 2_000,
};

/** The faults both fakes get for the chaos phase. */
export const CHAOS_FAULTS: Partial<Faults> = {
  rateLimitedRate: 0.1,
  rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 5 },
  serverErrorRate: 0.1,
  hangRate: 0.02,
  lostAnswerRate: 0.03,
  malformedRate: 0.02,
};

const NO_FAULTS: Partial<Faults> = { rateLimitedRate: 0, serverErrorRate: 0, hangRate: 0, lostAnswerRate: 0, malformedRate: 0 };

export interface ChaosReport {
  ours: PathResult;
  plain: PathResult;
  /** What our path failed (empty = exit code 0). */
  failures: string[];
  table: string;
  events: {
    workerKills: number;
    scriptKills: number;
    scriptStarts: number;
    scriptFinished: boolean;
    serverRestarts: number;
    serverDownMs: number | null;
    /** When the restart began (ISO). */
    serverRestartAt: string | null;
    importRuns: Array<{ exitCode: number | null; counts: unknown }>;
    settledAfterFaultsMs: number | null;
  };
  stats: { ours: ReturnType<FakeShippingApi['stats']>; plain: ReturnType<FakeShippingApi['stats']> };
  /** The fakes' request logs, for the test to check the checks against. */
  logs: { ours: FakeRequest[]; plain: FakeRequest[] };
  elapsedMs: number;
  workDir: string;
}

/** Every rejectEvery-th order goes to postal code 00000: the courier rejects it. */
export function chaosOrders(count: number): { orders: ShipmentInput[]; rejected: string[] } {
  const template = JSON.parse(readFileSync(path.join(ROOT, 'examples', 'orders.ndjson'), 'utf8').split('\n')[0]!) as ShipmentInput;
  const rejectEvery = 50;
  const orders: ShipmentInput[] = [];
  const rejected: string[] = [];
  for (let i = 1; i <= count; i += 1) {
    const orderId = `C-${String(i).padStart(4, '0')}`;
    const reject = i % rejectEvery === 7 % rejectEvery || (count < rejectEvery && i === Math.min(count, 3));
    const req = template.labelRequest;
    const shipTo = req.shipment.shipTo!;
    orders.push({
      shop: SHOP,
      orderId,
      labelRequest: {
        ...req,
        shipment: reject ? { ...req.shipment, shipTo: { ...shipTo, address: { ...shipTo.address!, postalCode: '00000' } } } : req.shipment,
        order: { ...req.order, customerOrderNumber: orderId },
      },
    });
    if (reject) rejected.push(orderId);
  }
  return { orders, rejected };
}

function account(name: string): FakeAccount {
  // Random per run, so finding one in a log can only mean it leaked.
  return { name, apiKey: `${name}-key-${randomBytes(12).toString('hex')}`, apiToken: `${name}-token-${randomBytes(12).toString('hex')}` };
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const deadline = started + o.deadlineMs;
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
  const log = (line: string) => o.log(`[chaos ${elapsed()}] ${line}`);
  const random = mulberry32(o.seed);
  const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));

  const workDir = mkdtempSync(path.join(os.tmpdir(), 'chaos-'));
  const file = (name: string) => path.join(workDir, name);
  const { orders, rejected } = chaosOrders(o.orders);
  writeFileSync(file('orders.ndjson'), orders.map((x) => JSON.stringify(x)).join('\n') + '\n');
  const orderNumbers = orders.map((x) => x.orderId);
  log(`${o.orders} orders (${rejected.length} the courier rejects), seed ${o.seed}, faults for ${o.durationMs / 1000}s, work dir ${workDir}`);

  const ourAccount = account('worker');
  const plainAccount = account('script');
  const fakes: FakeShippingApi[] = [];
  const processes: ManagedProcess[] = [];
  let server: DevServer | undefined;
  let connection: Connection | undefined;
  const stopping = new AbortController();
  const onAbort = () => stopping.abort();
  o.signal?.addEventListener('abort', onAbort);
  const events: ChaosReport['events'] = {
    workerKills: 0,
    scriptKills: 0,
    scriptStarts: 0,
    scriptFinished: false,
    serverRestarts: 0,
    serverDownMs: null,
    serverRestartAt: null,
    importRuns: [],
    settledAfterFaultsMs: null,
  };

  try {
    const fakeOptions = { trackingStepMs: o.trackingStepMs, requestLogSize: 1_000_000, faults: CHAOS_FAULTS };
    const ourFake = await startFakeShippingApi({ ...fakeOptions, accounts: [ourAccount], seed: o.seed });
    fakes.push(ourFake);
    const plainFake = await startFakeShippingApi({ ...fakeOptions, accounts: [plainAccount], seed: o.seed + 1 });
    fakes.push(plainFake);

    const cli = await findTemporalCli({ build: true, log: (m) => log(`temporal cli: ${m}`) });
    if (!cli) throw new Error('no Temporal CLI found or built (set TEMPORAL_CLI_PATH; see README "The Temporal CLI")');
    const port = await freePort();
    server = new DevServer(cli, port, file('temporal.db'), file('temporal.log'), ROOT);
    const bundle = file('workflow-bundle.js');
    await Promise.all([
      server.start(),
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'worker/build-bundle.ts', bundle], { cwd: ROOT }),
    ]);
    log(`Temporal dev server on ${server.address} (db ${file('temporal.db')}), workflow bundle built`);
    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: 'default' });

    const temporalEnv = {
      ...localServerEnv(process.env),
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
    };
    const apiEnv = { SHIPPING_API_BASE_URL: ourFake.baseUrl, SHIPPING_API_KEY: ourAccount.apiKey, SHIPPING_API_TOKEN: ourAccount.apiToken };
    const workers = [1, 2].map(
      (n) =>
        new ManagedProcess(
          `worker ${n}`,
          process.execPath,
          ['--import', 'tsx', 'worker/main.ts'],
          {
            ...temporalEnv,
            ...apiEnv,
            WORKFLOW_BUNDLE_PATH: bundle,
            TRACKING_POLL_INTERVAL: '1s',
            SHIPPING_API_TIMEOUT: '3s',
            LOG_LEVEL: 'info',
          },
          file(`worker-${n}.log`),
          ROOT,
        ),
    );
    const script = new ManagedProcess(
      'plain script',
      process.execPath,
      ['--import', 'tsx', 'chaos/plain-script.ts', '--input', file('orders.ndjson')],
      { PATH: process.env.PATH, SHIPPING_API_BASE_URL: plainFake.baseUrl, SHIPPING_API_KEY: plainAccount.apiKey, SHIPPING_API_TOKEN: plainAccount.apiToken },
      file('plain-script.log'),
      ROOT,
    );
    processes.push(...workers, script);
    for (const w of workers) w.start();
    script.start();

    const chaosStart = Date.now();
    const chaosEnd = chaosStart + o.durationMs;
    const inChaos = () => Date.now() < chaosEnd && Date.now() < deadline && !stopping.signal.aborted;

    const importing = (async () => {
      for (let run = 1; !stopping.signal.aborted && Date.now() < deadline - 60_000; run += 1) {
        const result = await runImport(file('orders.ndjson'), { ...temporalEnv, ...apiEnv }, file('import.log'));
        events.importRuns.push(result);
        log(`import run ${run}: exit ${result.exitCode} ${JSON.stringify(result.counts)}`);
        if (result.exitCode === 0) return;
        await sleep(2_000, stopping.signal);
      }
    })();

    const killWorkers = (async () => {
      while (inChaos()) {
        await sleep(between(o.minKillMs, o.maxKillMs), stopping.signal);
        if (!inChaos()) break;
        const victim = workers[between(0, workers.length - 1)]!;
        await victim.kill();
        events.workerKills += 1;
        victim.start();
        log(`SIGKILL ${victim.name}, restarted`);
      }
    })();

    const killScript = (async () => {
      while (inChaos()) {
        await sleep(between(o.minKillMs, o.maxKillMs), stopping.signal);
        if (!inChaos() || !script.running) break;
        await script.kill();
        events.scriptKills += 1;
        script.start();
        log('SIGKILL plain script, restarted (it starts over from the input file)');
      }
    })();

    const restartServer = (async () => {
      await sleep(o.durationMs / 2, stopping.signal);
      if (!inChaos()) return;
      const down = Date.now();
      events.serverRestartAt = new Date(down).toISOString();
      log('restarting the Temporal dev server (same port, same db file)');
      await server!.stop();
      await server!.start();
      events.serverRestarts += 1;
      events.serverDownMs = Date.now() - down;
      log(`Temporal dev server back after ${events.serverDownMs} ms`);
    })();

    await Promise.all([killWorkers, killScript, restartServer]);
    for (const fake of fakes) fake.setFaults(NO_FAULTS);
    const faultsOff = Date.now();
    log(`faults and kills stopped (${events.workerKills} worker kills, ${events.scriptKills} script kills); waiting for the shipments to settle`);
    for (const w of workers) if (!w.running) w.start();
    await importing;

    // Settle: every shipment completed or waiting for an operator, and the script through.
    const settleUntil = deadline - 45_000;
    let counts: ShipmentCounts | null = null;
    while (Date.now() < settleUntil && !stopping.signal.aborted) {
      counts = await shipmentCounts(client, orderNumbers, { quick: true });
      if (counts.stuck === 0 && !script.running) {
        events.settledAfterFaultsMs = Date.now() - faultsOff;
        break;
      }
      log(`settling: ${counts.finished} finished, ${counts.waiting} waiting, ${counts.stuck} not yet; plain script ${script.running ? 'running' : 'done'}`);
      await sleep(5_000, stopping.signal);
    }
    events.scriptFinished = !script.running && script.lastExitCode === 0;
    events.scriptStarts = script.starts;
    counts = await shipmentCounts(client, orderNumbers, { quick: false });
    log(`shipments: ${counts.finished} finished, ${counts.waiting} waiting, ${counts.stuck} stuck`);

    for (const p of processes) await p.close();
    const outputs = ['worker-1.log', 'worker-2.log', 'import.log'].map((name) => ({ name, text: readFileSync(file(name), 'utf8') }));
    // The histories too: a secret in a workflow input or result would sit in the SQLite file.
    for (const name of ['temporal.db', 'temporal.db-wal']) {
      if (existsSync(file(name))) outputs.push({ name, text: readFileSync(file(name)).toString('latin1') });
    }
    const scriptOutput = [{ name: 'plain-script.log', text: readFileSync(file('plain-script.log'), 'utf8') }];

    const workerLogs = logVolume(outputs.filter((o) => o.name.startsWith('worker-')).map((o) => o.text));
    const pathResult = (
      name: string,
      fake: FakeShippingApi,
      acct: FakeAccount,
      shipments: ShipmentCounts | null,
      texts: typeof outputs,
      logs: PathResult['logs'] = null,
    ): PathResult => {
      const requests = fake.requestLog();
      return {
        path: name,
        labels: checkLabels(orderNumbers, fake.labels(), requests, acct.name),
        retryAfter: retryAfterViolations(requests),
        accountWide: accountWideViolations(requests),
        shipments,
        leaks: credentialLeaks(texts, [acct.apiKey, acct.apiToken]),
        logs,
      };
    };
    // Kept with CHAOS_KEEP_WORK_DIR=1: the evidence behind every count.
    writeFileSync(file('requests-ours.ndjson'), ourFake.requestLog().map((r) => JSON.stringify(r)).join('\n') + '\n');
    writeFileSync(file('requests-plain.ndjson'), plainFake.requestLog().map((r) => JSON.stringify(r)).join('\n') + '\n');
    const ours = pathResult('ours (import + 2 workers, Temporal)', ourFake, ourAccount, counts, outputs, workerLogs);
    const plain = pathResult('plain script (SDK-style)', plainFake, plainAccount, null, scriptOutput);
    return {
      ours,
      plain,
      failures: failuresOf(ours),
      table: formatTable([ours, plain]),
      events,
      stats: { ours: ourFake.stats(), plain: plainFake.stats() },
      logs: { ours: ourFake.requestLog(), plain: plainFake.requestLog() },
      elapsedMs: Date.now() - started,
      workDir,
    };
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    stopping.abort();
    for (const p of processes) await p.close().catch(() => undefined);
    await connection?.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    await server?.process.close().catch(() => undefined);
    for (const fake of fakes) await fake.close();
    if (process.env.CHAOS_KEEP_WORK_DIR !== '1') rmSync(workDir, { recursive: true, force: true });
  }
}

/**
 * Finished = workflow completed; waiting = running in awaiting_correction (the `state` query);
 * stuck = anything else (still in another phase, failed, terminated, never started).
 */
async function shipmentCounts(client: Client, orderIds: readonly string[], o: { quick: boolean }): Promise<ShipmentCounts> {
  const counts: ShipmentCounts = { finished: 0, waiting: 0, stuck: 0, stuckOrders: [] };
  const queue = [...orderIds];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let orderId = queue.shift(); orderId !== undefined; orderId = queue.shift()) {
        const handle = client.workflow.getHandle(shipmentWorkflowId({ shop: SHOP, orderId }));
        let verdict: 'finished' | 'waiting' | 'stuck' = 'stuck';
        try {
          const description = await handle.describe();
          if (description.status.name === 'COMPLETED') verdict = 'finished';
          else if (description.status.name === 'RUNNING') {
            // While settling, the search attribute is enough; the final count asks the workflow itself.
            const phase = o.quick ? description.typedSearchAttributes.get(SA.status) : (await handle.query(stateQuery)).phase;
            if (phase === 'awaiting_correction') verdict = 'waiting';
          }
        } catch {
          verdict = 'stuck'; // not found, or not answering
        }
        if (verdict === 'finished') counts.finished += 1;
        else if (verdict === 'waiting') counts.waiting += 1;
        else {
          counts.stuck += 1;
          counts.stuckOrders.push(orderId);
        }
      }
    }),
  );
  counts.stuckOrders.sort();
  return counts;
}

/** One run of the real import CLI; its output goes to the log file (checked for credentials). */
async function runImport(file: string, env: NodeJS.ProcessEnv, logFile: string): Promise<{ exitCode: number | null; counts: unknown }> {
  const exec = promisify(execFile);
  let stdout = '';
  let stderr = '';
  let exitCode: number | null = 0;
  try {
    ({ stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', 'client/import/main.ts', file, '--json', '--skip-preflight'], {
      cwd: ROOT,
      env,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 120_000,
    }));
  } catch (e) {
    const failed = e as { code?: number | string; stdout?: string; stderr?: string };
    exitCode = typeof failed.code === 'number' ? failed.code : null;
    stdout = failed.stdout ?? '';
    stderr = failed.stderr ?? '';
  }
  writeFileSync(logFile, `--- import at ${new Date().toISOString()} exit ${exitCode}\n${stdout}\n${stderr}\n`, { flag: 'a' });
  let counts: unknown = null;
  try {
    counts = (JSON.parse(stdout) as { counts: unknown }).counts;
  } catch {
    counts = null;
  }
  return { exitCode, counts };
}

