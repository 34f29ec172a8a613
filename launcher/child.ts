/**
 * A child process of a launcher (`npm run dev`, `npm run cluster`, the chaos run): started,
 * and restarted, with the same command; its output as lines (and/or raw into a log file); a
 * graceful stop that turns into SIGKILL after a bound. Every live one is in one registry, so
 * a last-resort exit handler or a hard deadline can kill them all.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { WriteStream } from 'node:fs';
import readline from 'node:readline';
import { within } from './delay';

export interface ChildExit {
  /** "exit code 1", "killed by SIGKILL" or "could not be started: <error>". */
  why: string;
  /** stop() or kill() asked for it. */
  expected: boolean;
  spawnFailed: boolean;
}

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Run as this user (PostgreSQL refuses to run as root). */
  runAs?: { uid: number; gid: number };
  /**
   * Its own process group: a terminal's Ctrl-C reaches only the launcher, which stops the
   * children in order, and a child that does not stop is killed with all it started.
   */
  detached: boolean;
  /** Each output line, after the waitForLine listeners. */
  output?: (line: string, stderr: boolean) => void;
  /** Raw output is appended here too (the chaos run's log files, across restarts). */
  log?: WriteStream;
  onExit?: (exit: ChildExit) => void;
}

export interface StopOptions {
  signal: NodeJS.Signals;
  /** How long it may take before it is SIGKILLed. */
  graceMs: number;
  /** Signal the whole process group (npm -> sh -> node), not just the process. */
  toGroup?: boolean;
  /** Called when the grace ran out, just before SIGKILL. */
  onTimeout?: () => void;
  /** How long to wait for the exit after SIGKILL; by default until it comes. */
  killWaitMs?: number;
}

const live = new Set<Child>();

/** SIGKILLs every child still running (exit handlers, second Ctrl-C, hard deadlines). */
export function killAllChildren(): void {
  for (const child of live) child.killNow();
}

export class Child {
  private proc: ChildProcess | undefined;
  private exit: Promise<void> = Promise.resolve();
  private finished = true;
  private expecting = false;
  private readonly listeners = new Set<(line: string) => void>();
  starts = 0;
  lastExit: string | undefined;
  /** Exit code of the last run that ended without a signal. */
  lastExitCode: number | null = null;

  constructor(readonly spec: ChildSpec) {}

  get name(): string {
    return this.spec.name;
  }

  get running(): boolean {
    return !this.finished;
  }

  get pid(): number | undefined {
    return this.running ? this.proc?.pid : undefined;
  }

  /** Resolves when the current run has exited. */
  get exited(): Promise<void> {
    return this.exit;
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    const { command, args, env, cwd, runAs, detached } = this.spec;
    this.starts += 1;
    this.expecting = false;
    this.finished = false;
    const proc = spawn(command, args, {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached,
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    });
    this.proc = proc;
    live.add(this);
    this.exit = new Promise<void>((resolve) => {
      const finish = (why: string, spawnFailed: boolean) => {
        if (this.proc !== proc || this.finished) return;
        this.finished = true;
        this.lastExit = why;
        live.delete(this);
        resolve();
        this.spec.onExit?.({ why, expected: this.expecting, spawnFailed });
      };
      proc.on('exit', (code, signal) => {
        if (signal === null) this.lastExitCode = code;
        finish(signal ? `killed by ${signal}` : `exit code ${code}`, false);
      });
      proc.on('error', (err) => finish(`could not be started: ${err.message}`, true));
    });
    for (const [stream, stderr] of [
      [proc.stdout, false],
      [proc.stderr, true],
    ] as const) {
      if (this.spec.log) stream.pipe(this.spec.log, { end: false });
      readline.createInterface({ input: stream }).on('line', (line) => {
        for (const listener of this.listeners) listener(line);
        this.spec.output?.(line, stderr);
      });
    }
  }

  /** The first output line matching `pattern`, or undefined after `timeoutMs`; rejects if it exits unasked first. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray | undefined> {
    return new Promise((resolve, reject) => {
      const off = () => this.listeners.delete(listener);
      const timer = setTimeout(() => (off(), resolve(undefined)), timeoutMs);
      const listener = (line: string) => {
        const match = pattern.exec(line);
        if (!match) return;
        clearTimeout(timer);
        off();
        resolve(match);
      };
      this.listeners.add(listener);
      void this.exit.then(() => {
        if (this.expecting) return;
        clearTimeout(timer);
        off();
        reject(new Error(`${this.name} exited during startup (${this.lastExit})`));
      });
    });
  }

  /** `o.signal`, then SIGKILL (to the group when detached) if it has not exited within `o.graceMs`. */
  async stop(o: StopOptions): Promise<void> {
    if (!this.running) return;
    this.expecting = true;
    this.signal(o.signal, o.toGroup ?? false);
    if (await within(this.exit, o.graceMs)) return;
    o.onTimeout?.();
    this.killNow();
    if (o.killWaitMs === undefined) await this.exit;
    else await within(this.exit, o.killWaitMs);
  }

  /** SIGKILL now and wait for the exit. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.killNow();
    await this.exit;
  }

  /** SIGKILL without waiting: the whole process group when detached, so nothing it started outlives it. */
  killNow(): void {
    if (!this.running) return;
    this.expecting = true;
    this.signal('SIGKILL', this.spec.detached);
  }

  signal(signal: NodeJS.Signals, toGroup = false): void {
    const pid = this.proc?.pid;
    if (!this.running || pid === undefined) return;
    if (toGroup) {
      try {
        process.kill(-pid, signal);
        return;
      } catch {
        /* no such group: the process alone */
      }
    }
    try {
      this.proc!.kill(signal);
    } catch {
      /* already gone */
    }
  }
}
