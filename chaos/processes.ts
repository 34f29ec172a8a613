/**
 * Child processes of a chaos run: each writes its output to a log file (appended across
 * restarts, so the credential check sees every generation). They are launcher/child.ts
 * children, so a signal or the hard deadline can kill them all (killAllChildren).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { connectWhenReady } from '../dev-server/temporal-ready';
import { Child } from '../launcher/child';
import { searchAttributeArgs } from '../launcher/temporal';

export { killAllChildren } from '../launcher/child';

/** A process that can be killed and started again with the same command, env and log file. */
export class ManagedProcess extends Child {
  private readonly log: WriteStream;
  kills = 0;

  constructor(
    name: string,
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    readonly logFile: string,
    cwd: string,
  ) {
    const log = createWriteStream(logFile, { flags: 'a' });
    // Not detached: a chaos run's children die with its process group.
    super({ name, command, args, env, cwd, detached: false, log });
    this.log = log;
  }

  override start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    this.log.write(`--- ${this.name} start #${this.starts + 1} at ${new Date().toISOString()}\n`);
    super.start();
  }

  override async kill(): Promise<void> {
    if (!this.running) return;
    this.kills += 1;
    this.log.write(`--- ${this.name} SIGKILL at ${new Date().toISOString()}\n`);
    await super.kill();
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async terminate(graceMs = 10_000): Promise<void> {
    await this.stop({ signal: 'SIGTERM', graceMs });
  }

  async close(): Promise<void> {
    await this.terminate(5_000);
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
      ...['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port)],
      ...['--db-filename', dbFile, '--log-level', 'warn'],
      ...searchAttributeArgs(),
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
    await this.process.terminate(15_000);
  }
}
