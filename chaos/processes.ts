/**
 * Child processes of a chaos run: each writes its output to a log file (appended across
 * restarts, so the credential check sees every generation), and every one ever started is in
 * one registry, so a signal or the hard deadline can kill them all.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { connectWhenReady } from '../dev-server/temporal-ready';
import { TypedSearchAttributes } from '@temporalio/common';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/definitions';

const live = new Set<ChildProcess>();

/** SIGKILLs every child process still alive (signal handlers, hard deadline, finally). */
export function killAllChildren(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** A process that can be killed and started again with the same command, env and log file. */
export class ManagedProcess {
  private child: ChildProcess | null = null;
  private exit: Promise<void> = Promise.resolve();
  private readonly log: WriteStream;
  starts = 0;
  kills = 0;
  /** Exit code of the last generation that exited by itself (not killed by us). */
  lastExitCode: number | null = null;

  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: string[],
    private readonly env: NodeJS.ProcessEnv,
    readonly logFile: string,
    private readonly cwd: string,
  ) {
    this.log = createWriteStream(logFile, { flags: 'a' });
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    this.starts += 1;
    this.log.write(`--- ${this.name} start #${this.starts} at ${new Date().toISOString()}\n`);
    const child = spawn(this.command, this.args, { cwd: this.cwd, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child);
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    this.exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        live.delete(child);
        if (signal === null) this.lastExitCode = code;
        resolve();
      });
      child.once('error', () => resolve());
    });
    this.child = child;
  }

  /** Waits for the current generation to exit by itself; false if `ms` passed first. */
  async waitForExit(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (!this.running) return true;
    let timedOut = false;
    await Promise.race([this.exit, sleep(ms, signal).then(() => (timedOut = true))]);
    return !timedOut && !this.running;
  }

  async kill(): Promise<void> {
    if (!this.running) return;
    this.kills += 1;
    this.log.write(`--- ${this.name} SIGKILL at ${new Date().toISOString()}\n`);
    this.child!.kill('SIGKILL');
    await this.exit;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.running) {
      this.child!.kill('SIGTERM');
      const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
      await this.exit;
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.stop(5_000);
    await new Promise<void>((resolve) => this.log.end(() => resolve()));
  }
}

/** The Temporal dev server on a fixed port and SQLite file, so it can be restarted on both. */
export class DevServer {
  readonly address: string;
  readonly process: ManagedProcess;

  constructor(cli: string, port: number, dbFile: string, logFile: string, cwd: string) {
    this.address = `127.0.0.1:${port}`;
    const args = [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--db-filename',
      dbFile,
      '--log-level',
      'warn',
      ...SEARCH_ATTRIBUTE_KEYS.flatMap((key) => ['--search-attribute', `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`]),
    ];
    this.process = new ManagedProcess('temporal dev server', cli, args, process.env, logFile, cwd);
  }

  /** Starts it and waits until its frontend answers. */
  async start(timeoutMs = 60_000): Promise<void> {
    this.process.start();
    const what = `the Temporal dev server (log: ${this.process.logFile})`;
    const connection = await connectWhenReady(this.address, { namespace: 'default', alive: () => this.process.running, what, timeoutMs });
    await connection.close();
  }

  /** A graceful stop (SIGTERM), so the SQLite file is consistent for the restart. */
  async stop(): Promise<void> {
    await this.process.stop(15_000);
  }
}
