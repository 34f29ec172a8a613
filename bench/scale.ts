/**
 * Many open shipments: import N orders through the import CLI (each path its own version of
 * the worker and the import) into a worker process, time until
 * every one is in tracking, then hold them there (the fake never registers the parcels) and
 * measure worker and server memory and the CPU each tracking poll costs. Each path gets its own
 * fresh dev server, so server figures are its own.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { startFakeShippingApi } from '../fake-shipping-api/server';
import { parseDuration } from '../config/settings';
import { cachedDist } from '../test/helpers/compiled';
import { allocatorInMaps, jemallocPreload, type Allocator } from '../worker/allocator';
import { baselineDir, PER_SHIPMENT_TRACKING_COMMIT } from './baseline';
import { heapProfileNodeOptions, profileHeap, workflowCache, type HeapProfile } from './heap-profile';
import { benchOrder } from './orders';
import { BENCH_ACCOUNTS, benchProcessEnv, cpuMs, ROOT, rssMb, runImport, sleep, startDevServer, startWorkerProcess } from './stack';

const WEEK_MS = 7 * 24 * 3600 * 1000;

/** The fleet's pollers (this tree), the per-shipment tracking activity before them, the timer loop before that. */
export type ScalePath = 'fleet pollers' | 'per-shipment activity' | 'timer loop';

const SOURCE: Record<ScalePath, () => string> = {
  'fleet pollers': () => ROOT,
  'per-shipment activity': () => baselineDir(PER_SHIPMENT_TRACKING_COMMIT),
  'timer loop': () => baselineDir(),
};

export interface ScaleRow {
  path: ScalePath;
  shipments: number;
  reachedTracking: number;
  secondsToTracking: number;
  shipmentsPerSecond: number;
  workerRssMb: number;
  workerPeakRssMb: number;
  serverRssMb: number;
  serverPeakRssMb: number;
  pollsInWindow: number;
  workerCpuMsPerPoll: number;
  serverCpuMsPerPoll: number;
  /** A fresh worker after the old one was SIGKILLed with every shipment waiting: its first 30 s. */
  restartedWorkerCpuMsPerPoll: number;
  restartedWorkerPolls: number;
  /** Its RSS then: a worker with every shipment waiting and an empty cache. */
  restartedWorkerRssMb: number;
  /** CPU from the first import to the last shipment in tracking, per shipment. */
  workerCpuMsPerShipment: number;
  serverCpuMsPerShipment: number;
  /** The C allocator the measured worker ran on (its memory map). */
  allocator: Allocator;
  /** How the measured worker started: as `npm start` runs it, as `npm run worker` does, or the baseline's tree through tsx. */
  started: 'npm start' | 'npm run worker' | 'baseline';
  /** The first worker's workflow cache over the import and the window: tasks that replayed (not cached), evictions to make room. */
  cacheMisses: number;
  forcedEvictions: number;
  /** What holds the worker's memory at the end of the window (before the SIGKILL). */
  heap?: HeapProfile;
}

export interface ScaleOptions {
  path: ScaleRow['path'];
  shipments: number;
  pollInterval: string;
  windowSeconds: number;
  /** Extra flags for the import CLI (e.g. --max-backlog 0 for the old behaviour). */
  importFlags: string[];
  /** Extra settings for the worker (e.g. WORKER_MAX_CACHED_WORKFLOWS). */
  workerEnv: Record<string, string>;
  /** This tree's worker as `npm start` runs it (compiled, bundle prebuilt) or as `npm run worker` does (tsx, bundle at start). */
  workerStart: 'npm-start' | 'npm-run-worker';
  log: (m: string) => void;
}

export async function scaleScenario(o: ScaleOptions): Promise<ScaleRow> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-scale-'));
  const server = await startDevServer();
  const fake = await startFakeShippingApi({
    port: 0,
    trackingStepMs: WEEK_MS, // never registered: every shipment stays waiting in tracking
    accounts: BENCH_ACCOUNTS,
    requestLogSize: 4 * o.shipments + 200_000,
  });
  const sourceDir = SOURCE[o.path]();
  const taskQueue = `bench-scale-${Date.now()}`;
  // This tree's worker with its defaults, as `npm start` runs it (compiled, its workflow bundle
  // built beforehand) or as `npm run worker` does (tsx, the bundle made at start); jemalloc
  // preloaded where installed, encrypted payloads, logs at info: only the poll interval is the
  // bench's (a window of second polls needs it). The baselines' older trees run as they were
  // always measured: through tsx, in clear, at warn, with a prebuilt bundle.
  const defaults = o.path === 'fleet pollers';
  const compiled = defaults && o.workerStart === 'npm-start' ? await compiledWorker(tmp) : undefined;
  const asDeployed: Record<string, string> = defaults
    ? {
        PAYLOAD_ENCRYPTION_KEYS: `bench=${randomBytes(32).toString('base64')}`,
        LOG_LEVEL: 'info',
        ...(compiled ? { WORKFLOW_BUNDLE_PATH: compiled.bundlePath } : {}),
        ...jemallocPreload(process.env),
      }
    : { WORKFLOW_BUNDLE_PATH: await baselineBundle(sourceDir, tmp) };
  const env = { ...benchProcessEnv(server, taskQueue, fake.baseUrl), ...(defaults ? asDeployed : {}) };
  const workerEnv = { ...env, ...asDeployed, TRACKING_POLL_INTERVAL: o.pollInterval };
  // The first worker answers the heap profile's signals and serves the SDK's metrics (its cache size).
  const diagnostics = path.join(tmp, 'diagnostics');
  const metricsAddress = `127.0.0.1:${await freePort()}`;
  let worker = startWorkerProcess(
    sourceDir,
    {
      ...workerEnv,
      ...o.workerEnv,
      NODE_OPTIONS: [heapProfileNodeOptions(diagnostics), o.workerEnv.NODE_OPTIONS].filter(Boolean).join(' '),
      METRICS_BIND_ADDRESS: metricsAddress,
    },
    undefined,
    compiled?.nodeArgs,
  );
  let workerPeak = 0;
  const sampler = setInterval(() => {
    try {
      // A killed worker's status has no VmRSS (NaN): only the first worker's figures count.
      const { rss } = rssMb(worker.pid);
      if (Number.isFinite(rss)) workerPeak = Math.max(workerPeak, rss);
    } catch {
      // exited
    }
  }, 1000);
  try {
    const file = path.join(tmp, 'orders.ndjson');
    const stamp = Date.now();
    writeFileSync(file, Array.from({ length: o.shipments }, (_, i) => JSON.stringify(benchOrder(`S-${stamp}-${i}`))).join('\n') + '\n');

    const t0 = Date.now();
    const cpu0 = { worker: cpuMs(worker.pid), server: cpuMs(server.pid) };
    // Each path with its own import: the baseline's has no backpressure.
    const importing = runImport(sourceDir, file, env, o.path === 'timer loop' ? [] : o.importFlags);
    const tracked = new Set<string>();
    let firstTrackedAt: number | undefined;
    let seen = 0;
    const deadline = t0 + Math.max(600_000, o.shipments * 200);
    let lastReport = 0;
    while (tracked.size < o.shipments && Date.now() < deadline) {
      await sleep(500);
      const log = fake.requestLog();
      for (let i = seen; i < log.length; i++) {
        if (log[i]!.endpoint !== 'GET /tracking' || !log[i]!.id) continue;
        firstTrackedAt ??= log[i]!.at;
        tracked.add(log[i]!.id!);
      }
      seen = log.length;
      if (Date.now() - lastReport > 30_000) {
        lastReport = Date.now();
        o.log(
          `scale: ${o.path}: ${tracked.size}/${o.shipments} in tracking after ${Math.round((Date.now() - t0) / 1000)} s, worker RSS ${Math.round(rssMb(worker.pid).rss)} MB`,
        );
      }
    }
    const secondsToTracking = (Date.now() - t0) / 1000;
    const importCpu = { worker: cpuMs(worker.pid) - cpu0.worker, server: cpuMs(server.pid) - cpu0.server };
    await importing;

    // The measurement window: every shipment is waiting, and second polls have begun (one poll
    // interval after the first shipment entered tracking), so both paths are measured polling.
    const secondPollsFrom = (firstTrackedAt ?? Date.now()) + (parseDuration(o.pollInterval) ?? 0);
    if (secondPollsFrom > Date.now()) {
      // A small run reaches tracking long before its first shipments are polled again.
      o.log(
        `scale: ${o.path}: ${tracked.size}/${o.shipments} in tracking; waiting ${Math.round((secondPollsFrom - Date.now()) / 1000)} s for second polls (one --poll-interval)`,
      );
      await sleep(secondPollsFrom - Date.now());
    }
    const before = { worker: cpuMs(worker.pid), server: cpuMs(server.pid), requests: fake.requestLog().length };
    await sleep(o.windowSeconds * 1000);
    const window = fake.requestLog().slice(before.requests);
    const polls = window.filter((r) => r.endpoint === 'GET /tracking').length;
    const workerCpu = cpuMs(worker.pid) - before.worker;
    const serverCpu = cpuMs(server.pid) - before.server;
    const w = rssMb(worker.pid);
    const allocator = allocatorInMaps(readFileSync(`/proc/${worker.pid}/maps`, 'utf8'));
    const s = rssMb(server.pid);
    // The kernel's high-water mark, before the heap profile (a snapshot takes memory of its own).
    const peak = Math.max(workerPeak, w.rss, w.peak);
    clearInterval(sampler);
    const cache = await workflowCache(metricsAddress);
    const heap = await profileHeap(worker.pid, diagnostics, cache.size).catch((err: unknown) => {
      o.log(`scale: ${o.path}: no heap profile: ${String(err)}`);
      return undefined;
    });

    // A crash and a fresh worker with every shipment waiting: it must not replay them all.
    worker.child.kill('SIGKILL');
    await worker.stop();
    worker = startWorkerProcess(sourceDir, { ...workerEnv, ...o.workerEnv }, undefined, compiled?.nodeArgs);
    await sleep(5_000); // start-up (loading the bundle) is not what this measures
    const restartBefore = { cpu: cpuMs(worker.pid), requests: fake.requestLog().length };
    await sleep(30_000);
    const restartPolls = fake
      .requestLog()
      .slice(restartBefore.requests)
      .filter((r) => r.endpoint === 'GET /tracking').length;
    const restartCpu = cpuMs(worker.pid) - restartBefore.cpu;
    const restartRss = rssMb(worker.pid).rss;
    const row: ScaleRow = {
      path: o.path,
      shipments: o.shipments,
      reachedTracking: tracked.size,
      secondsToTracking: round(secondsToTracking),
      shipmentsPerSecond: round(tracked.size / secondsToTracking),
      workerRssMb: Math.round(w.rss),
      workerPeakRssMb: Math.round(peak),
      serverRssMb: Math.round(s.rss),
      serverPeakRssMb: Math.round(s.peak),
      pollsInWindow: polls,
      workerCpuMsPerPoll: polls ? round(workerCpu / polls) : NaN,
      serverCpuMsPerPoll: polls ? round(serverCpu / polls) : NaN,
      restartedWorkerCpuMsPerPoll: restartPolls ? round(restartCpu / restartPolls) : NaN,
      restartedWorkerPolls: restartPolls,
      restartedWorkerRssMb: Math.round(restartRss),
      workerCpuMsPerShipment: round(importCpu.worker / Math.max(1, tracked.size)),
      serverCpuMsPerShipment: round(importCpu.server / Math.max(1, tracked.size)),
      allocator,
      started: !defaults ? 'baseline' : compiled ? 'npm start' : 'npm run worker',
      cacheMisses: cache.misses,
      forcedEvictions: cache.forcedEvictions,
      ...(heap ? { heap } : {}),
    };
    o.log(`scale: ${o.path}: ${JSON.stringify(row)}`);
    return row;
  } finally {
    clearInterval(sampler);
    await worker.stop();
    await fake.close();
    await server.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const round = (n: number) => Math.round(n * 100) / 100;

/** This tree compiled as `npm run build` compiles it, and its workflow bundle made by the compiled build script. */
async function compiledWorker(tmp: string): Promise<{ nodeArgs: string[]; bundlePath: string }> {
  const dist = await cachedDist();
  const bundlePath = path.join(tmp, 'tree-workflow-bundle.js');
  await promisify(execFile)(process.execPath, [path.join(dist, 'worker', 'build-bundle.js'), bundlePath], { cwd: ROOT });
  return { nodeArgs: [path.join(dist, 'worker', 'main.js')], bundlePath };
}

/** A baseline's older tree, bundled here: it predates a build script of its own. */
async function baselineBundle(sourceDir: string, tmp: string): Promise<string> {
  const bundlePath = path.join(tmp, 'workflow-bundle.js');
  const bundle = await bundleWorkflowCode({ workflowsPath: path.join(sourceDir, 'workflows'), logger: new DefaultLogger('WARN') });
  writeFileSync(bundlePath, bundle.code);
  return bundlePath;
}
