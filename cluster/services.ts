/**
 * The cluster's processes and their supervision. Each runs detached (its own process group), so a
 * terminal's Ctrl-C reaches only `npm run cluster`, which stops them in reverse start order:
 * workers drain while Temporal and PostgreSQL are still there. Infrastructure that dies on its own
 * stops the whole cluster; a worker that dies is reported and stays down (the others carry on, as
 * they would in production), until `npm run cluster -- start <worker>`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import type { RunAs } from './postgres';

const STOP_TIMEOUT_MS = 20_000;

export type ServiceState = 'stopped' | 'starting' | 'running' | 'stopping' | 'exited';

export interface ServiceSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  runAs?: RunAs;
  /** PostgreSQL: SIGINT is its fast shutdown (SIGTERM would wait for every client to leave). */
  stopSignal: NodeJS.Signals;
  /** An unexpected exit stops the cluster (PostgreSQL, Temporal, the UI, the fake API). */
  critical: boolean;
  /** Resolves once the service serves; `service.alive()` tells if it died meanwhile. */
  ready: (service: Service) => Promise<void>;
  /** Output lines not worth printing (`stopping`: the service is being stopped on purpose). */
  quiet?: (line: string, stopping: boolean) => boolean;
}

export interface ServiceStatus {
  name: string;
  state: ServiceState;
  pid: number | null;
  since: string | null;
  restarts: number;
  lastExit: string | null;
  critical: boolean;
}

export class Service {
  private proc: ChildProcess | undefined;
  private exitedPromise: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<(line: string) => void>();
  private expectingExit = false;
  state: ServiceState = 'stopped';
  since: Date | undefined;
  starts = 0;
  lastExit: string | undefined;

  constructor(
    readonly spec: ServiceSpec,
    private readonly out: (service: string, line: string, stderr: boolean) => void,
    private readonly onUnexpectedExit: (service: Service, why: string) => void,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  get pid(): number | undefined {
    return this.alive() ? this.proc?.pid : undefined;
  }

  alive(): boolean {
    return this.state === 'starting' || this.state === 'running' || this.state === 'stopping';
  }

  /** Calls `listener` with each output line until the returned function is called. */
  onLine(listener: (line: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves with the first output line matching `pattern`; rejects if the process exits first. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`${this.name} did not print ${pattern} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      const off = this.onLine((line) => {
        const match = pattern.exec(line);
        if (match) {
          clearTimeout(timer);
          off();
          resolve(match);
        }
      });
      void this.exitedPromise.then(() => {
        if (this.state !== 'exited') return;
        clearTimeout(timer);
        off();
        reject(new Error(`${this.name} exited during startup (${this.lastExit})`));
      });
    });
  }

  async start(): Promise<void> {
    if (this.alive()) throw new Error(`${this.name} is already ${this.state}`);
    const { command, args, env, cwd, runAs } = this.spec;
    this.state = 'starting';
    this.expectingExit = false;
    this.since = new Date();
    this.starts += 1;
    const proc = spawn(command, args, {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    });
    this.proc = proc;
    this.exitedPromise = new Promise<void>((resolve) => {
      let done = false;
      const finish = (why: string) => {
        if (done) return;
        done = true;
        this.lastExit = why;
        const expected = this.expectingExit;
        this.state = expected ? 'stopped' : 'exited';
        this.since = new Date();
        resolve();
        if (!expected) this.onUnexpectedExit(this, why);
      };
      proc.on('exit', (code, signal) => finish(signal ? `killed by ${signal}` : `exit code ${code}`));
      proc.on('error', (err) => finish(`could not be started: ${err.message}`));
    });
    for (const [stream, isErr] of [
      [proc.stdout, false],
      [proc.stderr, true],
    ] as const) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        for (const listener of this.listeners) listener(line);
        if (!this.spec.quiet?.(line, this.state === 'stopping')) this.out(this.name, line, isErr);
      });
    }
    await this.spec.ready(this);
    if (this.state === 'starting') this.state = 'running';
  }

  /** Stops it with its stop signal; after STOP_TIMEOUT_MS kills its process group. */
  async stop(): Promise<void> {
    if (!this.alive() || !this.proc) return;
    this.expectingExit = true;
    this.state = 'stopping';
    this.signal(this.spec.stopSignal);
    const stopped = await Promise.race([
      this.exitedPromise.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), STOP_TIMEOUT_MS).unref()),
    ]);
    if (!stopped) {
      this.out(this.name, `did not stop within ${STOP_TIMEOUT_MS / 1000} s; killing it`, true);
      this.killGroup();
      await this.exitedPromise;
    }
  }

  signal(signal: NodeJS.Signals): void {
    try {
      this.proc?.kill(signal);
    } catch {
      /* gone already */
    }
  }

  /** Last resort: the whole process group, so nothing it started outlives it. */
  killGroup(): void {
    if (!this.proc?.pid || !this.alive()) return;
    this.expectingExit = true;
    try {
      process.kill(-this.proc.pid, 'SIGKILL');
    } catch {
      this.signal('SIGKILL');
    }
  }

  status(): ServiceStatus {
    return {
      name: this.name,
      state: this.state,
      pid: this.pid ?? null,
      since: this.since?.toISOString() ?? null,
      restarts: Math.max(0, this.starts - 1),
      lastExit: this.lastExit ?? null,
      critical: this.spec.critical,
    };
  }
}
