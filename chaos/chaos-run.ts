/**
 * One chaos run's steps, in the order runChaos (./run.ts) takes them: the fakes, Temporal,
 * the processes, the chaos itself, the settling, and the evidence read back for the checks.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { inClear } from '../config/settings';
import { localServerEnv } from '../config/temporal-connection';
import { freePort } from '../dev-server/free-port';
import { findTemporalCli } from '../dev-server/temporal-cli';
import { mulberry32 } from '../fake-shipping-api/faults';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { delay } from '../launcher/delay';
import { nodeTsx } from '../launcher/defaults';
import type { ShipmentCounts } from './checks';
import { account, chaosOrders, ROOT } from './orders';
import { DevServer, ManagedProcess } from './processes';
import { chaosReport, noEvents } from './report';
import { CHAOS_FAULTS, NO_FAULTS, ONLY_429S } from './faults';
import type { ChaosOptions } from './options';
import type { ChaosReport } from './report';
import { runImport, shipmentCounts } from './temporal-side';

const TASK_QUEUE = 'chaos';

export class ChaosRun {
  readonly started = Date.now();
  readonly deadline: number;
  readonly workDir = mkdtempSync(path.join(os.tmpdir(), 'chaos-'));
  readonly orderNumbers: string[];
  readonly ourAccount = account('worker');
  readonly plainAccount = account('script');
  readonly events = noEvents();
  private readonly random: () => number;
  private readonly stopping = new AbortController();
  private readonly onAbort = () => this.stopping.abort();
  private readonly fakes: FakeShippingApi[] = [];
  private readonly processes: ManagedProcess[] = [];
  private ourFake!: FakeShippingApi;
  private plainFake!: FakeShippingApi;
  private server: DevServer | undefined;
  private connection: Connection | undefined;
  private client!: Client;
  private env!: { temporal: NodeJS.ProcessEnv; api: NodeJS.ProcessEnv };
  private workers: ManagedProcess[] = [];
  private script!: ManagedProcess;
  private chaosEnd = 0;
  private faultsOff = 0;

  constructor(private readonly o: ChaosOptions) {
    this.deadline = this.started + o.deadlineMs;
    this.random = mulberry32(o.seed);
    const { orders, rejected } = chaosOrders(o.orders);
    writeFileSync(this.file('orders.ndjson'), orders.map((x) => JSON.stringify(x)).join('\n') + '\n');
    this.orderNumbers = orders.map((x) => x.orderId);
    this.log(
      `${o.orders} orders (${rejected.length} the courier rejects), seed ${o.seed}, faults for ${o.durationMs / 1000}s, work dir ${this.workDir}`,
    );
    o.signal?.addEventListener('abort', this.onAbort);
  }

  file(name: string): string {
    return path.join(this.workDir, name);
  }

  log(line: string): void {
    this.o.log(`[chaos ${((Date.now() - this.started) / 1000).toFixed(1)}s] ${line}`);
  }

  private between(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  /** One fake shipping API per path, with the same faults (seeded apart). */
  async startFakes(): Promise<void> {
    const fakeOptions = { trackingStepMs: this.o.trackingStepMs, requestLogSize: 1_000_000, faults: CHAOS_FAULTS };
    this.ourFake = await startFakeShippingApi({ ...fakeOptions, accounts: [this.ourAccount], seed: this.o.seed });
    this.fakes.push(this.ourFake);
    this.plainFake = await startFakeShippingApi({ ...fakeOptions, accounts: [this.plainAccount], seed: this.o.seed + 1 });
    this.fakes.push(this.plainFake);
  }

  /** A dev server on a SQLite file (so it can be restarted on it), and the workers' bundle beside it. */
  async startTemporal(): Promise<void> {
    const cli = await findTemporalCli({ build: true, log: (m) => this.log(`temporal cli: ${m}`) });
    if (!cli) throw new Error('no Temporal CLI found or built (set TEMPORAL_CLI_PATH; see docs/testing.md, "The Temporal CLI")');
    const server = new DevServer(cli, await freePort(), this.file('temporal.db'), this.file('temporal.log'), ROOT);
    this.server = server;
    await Promise.all([
      server.start(),
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'worker/build-bundle.ts', this.file('workflow-bundle.js')], { cwd: ROOT }),
    ]);
    this.log(`Temporal dev server on ${server.address} (db ${this.file('temporal.db')}), workflow bundle built`);
    this.connection = await Connection.connect({ address: server.address });
    this.client = new Client({ connection: this.connection, namespace: 'default' });
    this.env = {
      temporal: {
        ...localServerEnv(process.env),
        TEMPORAL_ADDRESS: server.address,
        TEMPORAL_NAMESPACE: 'default',
        TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      },
      api: {
        SHIPPING_API_BASE_URL: this.ourFake.baseUrl,
        SHIPPING_API_KEY: this.ourAccount.apiKey,
        SHIPPING_API_TOKEN: this.ourAccount.apiToken,
      },
    };
  }

  /** Our two workers and the plain script, each logging to its own file. */
  startProcesses(): void {
    // In clear on purpose, as the chaos run's import sends (temporal-side.ts): it checks durability, not the codec.
    const workerEnv = inClear({ ...this.env.temporal, ...this.env.api, WORKFLOW_BUNDLE_PATH: this.file('workflow-bundle.js') });
    const { command, args } = nodeTsx('worker/main.ts');
    this.workers = [1, 2].map(
      (n) =>
        new ManagedProcess(
          `worker ${n}`,
          command,
          args,
          { ...workerEnv, TRACKING_POLL_INTERVAL: '1s', SHIPPING_API_TIMEOUT: '3s', LOG_LEVEL: 'info' },
          this.file(`worker-${n}.log`),
          ROOT,
        ),
    );
    const { plainFake: fake, plainAccount: acct } = this;
    const plain = nodeTsx('chaos/plain-script.ts', ['--input', this.file('orders.ndjson')]);
    const plainEnv = {
      PATH: process.env.PATH,
      SHIPPING_API_BASE_URL: fake.baseUrl,
      SHIPPING_API_KEY: acct.apiKey,
      SHIPPING_API_TOKEN: acct.apiToken,
    };
    this.script = new ManagedProcess('plain script', plain.command, plain.args, plainEnv, this.file('plain-script.log'), ROOT);
    this.processes.push(...this.workers, this.script);
    for (const w of this.workers) w.start();
    this.script.start();
    this.chaosEnd = Date.now() + this.o.durationMs;
  }

  private inChaos(): boolean {
    return Date.now() < this.chaosEnd && Date.now() < this.deadline && !this.stopping.signal.aborted;
  }

  /** The real import, again until it exits 0 (a run may meet a dead worker or a restarting server). */
  async importUntilDone(): Promise<void> {
    for (let run = 1; !this.stopping.signal.aborted && Date.now() < this.deadline - 60_000; run += 1) {
      const result = await runImport(this.file('orders.ndjson'), { ...this.env.temporal, ...this.env.api }, this.file('import.log'));
      this.events.importRuns.push(result);
      this.log(`import run ${run}: exit ${result.exitCode} ${JSON.stringify(result.counts)}`);
      if (result.exitCode === 0) return;
      await delay(2_000, this.stopping.signal);
    }
  }

  /** Until the duration ends: a worker and the script SIGKILLed every few seconds, the server restarted once. */
  async injectChaos(): Promise<void> {
    await Promise.all([this.killWorkers(), this.killScript(), this.restartServer()]);
  }

  private async killWorkers(): Promise<void> {
    while (this.inChaos()) {
      await delay(this.between(this.o.minKillMs, this.o.maxKillMs), this.stopping.signal);
      if (!this.inChaos()) break;
      const victim = this.workers[this.between(0, this.workers.length - 1)]!;
      await victim.kill();
      this.events.workerKills += 1;
      victim.start();
      this.log(`SIGKILL ${victim.name}, restarted`);
    }
  }

  private async killScript(): Promise<void> {
    while (this.inChaos()) {
      await delay(this.between(this.o.minKillMs, this.o.maxKillMs), this.stopping.signal);
      if (!this.inChaos() || !this.script.running) break;
      await this.script.kill();
      this.events.scriptKills += 1;
      this.script.start();
      this.log('SIGKILL plain script, restarted (it starts over from the input file)');
    }
  }

  private async restartServer(): Promise<void> {
    await delay(this.o.durationMs / 2, this.stopping.signal);
    if (!this.inChaos()) return;
    const down = Date.now();
    this.events.serverRestartAt = new Date(down).toISOString();
    this.log('restarting the Temporal dev server (same port, same db file)');
    await this.server!.stop();
    await this.server!.start();
    this.events.serverRestarts += 1;
    this.events.serverDownMs = Date.now() - down;
    this.log(`Temporal dev server back after ${this.events.serverDownMs} ms`);
  }

  stopFaults(): void {
    for (const fake of this.fakes) fake.setFaults(this.o.keep429s ? ONLY_429S : NO_FAULTS);
    this.events.keep429s = this.o.keep429s === true;
    this.faultsOff = Date.now();
    this.log(
      `faults and kills stopped (${this.events.workerKills} worker kills, ${this.events.scriptKills} script kills)${this.o.keep429s ? ' but the random 429s' : ''}; waiting for the shipments to settle`,
    );
    for (const w of this.workers) if (!w.running) w.start();
  }

  /** Until every shipment completed or waits for an operator, and the script is through; then the final count. */
  async settle(): Promise<ShipmentCounts> {
    const settleUntil = this.deadline - 45_000;
    while (Date.now() < settleUntil && !this.stopping.signal.aborted) {
      const counts = await shipmentCounts(this.client, this.orderNumbers, { quick: true });
      if (counts.stuck === 0 && !this.script.running) {
        this.events.settledAfterFaultsMs = Date.now() - this.faultsOff;
        break;
      }
      this.log(
        `settling: ${counts.finished} finished, ${counts.waiting} waiting, ${counts.stuck} not yet; plain script ${this.script.running ? 'running' : 'done'}`,
      );
      await delay(5_000, this.stopping.signal);
    }
    this.events.scriptFinished = !this.script.running && this.script.lastExitCode === 0;
    this.events.scriptStarts = this.script.starts;
    const counts = await shipmentCounts(this.client, this.orderNumbers, { quick: false });
    this.log(`shipments: ${counts.finished} finished, ${counts.waiting} waiting, ${counts.stuck} stuck`);
    return counts;
  }

  /** Stops the processes, reads back what they wrote and what the fakes saw, and checks both paths. */
  async report(counts: ShipmentCounts): Promise<ChaosReport> {
    for (const p of this.processes) await p.close();
    const read = (name: string) => ({ name, text: readFileSync(this.file(name), 'utf8') });
    const ourOutputs = ['worker-1.log', 'worker-2.log', 'import.log'].map(read);
    // The histories too: a secret in a workflow input or result would sit in the SQLite file.
    for (const name of ['temporal.db', 'temporal.db-wal']) {
      if (existsSync(this.file(name))) ourOutputs.push({ name, text: readFileSync(this.file(name)).toString('latin1') });
    }
    // Kept with CHAOS_KEEP_WORK_DIR=1: the evidence behind every count.
    for (const [name, fake] of [
      ['requests-ours.ndjson', this.ourFake],
      ['requests-plain.ndjson', this.plainFake],
    ] as const) {
      writeFileSync(
        this.file(name),
        fake
          .requestLog()
          .map((r) => `${JSON.stringify(r)}\n`)
          .join(''),
      );
    }
    return chaosReport({
      orderNumbers: this.orderNumbers,
      ours: { fake: this.ourFake, account: this.ourAccount, shipments: counts, outputs: ourOutputs },
      plain: { fake: this.plainFake, account: this.plainAccount, shipments: null, outputs: [read('plain-script.log')] },
      events: this.events,
      started: this.started,
      workDir: this.workDir,
    });
  }

  /** Everything stopped, whatever happened; the work dir kept only with CHAOS_KEEP_WORK_DIR=1. */
  async close(): Promise<void> {
    this.o.signal?.removeEventListener('abort', this.onAbort);
    this.stopping.abort();
    for (const p of this.processes) await p.close().catch(() => undefined);
    await this.connection?.close().catch(() => undefined);
    await this.server?.stop().catch(() => undefined);
    await this.server?.process.close().catch(() => undefined);
    for (const fake of this.fakes) await fake.close();
    if (process.env.CHAOS_KEEP_WORK_DIR !== '1') rmSync(this.workDir, { recursive: true, force: true });
  }
}
