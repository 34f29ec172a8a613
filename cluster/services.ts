/**
 * The cluster's processes and their supervision. Each runs detached (its own process group), so a
 * terminal's Ctrl-C reaches only `npm run cluster`, which stops them in reverse start order:
 * workers drain while Temporal and PostgreSQL are still there. Infrastructure that dies on its own
 * stops the whole cluster; a worker that dies is reported and stays down (the others carry on, as
 * they would in production), until `npm run cluster -- start <worker>`.
 */
import { Child } from '../launcher/child';
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
  private readonly child: Child;
  state: ServiceState = 'stopped';
  since: Date | undefined;

  constructor(
    readonly spec: ServiceSpec,
    private readonly out: (service: string, line: string, stderr: boolean) => void,
    private readonly onUnexpectedExit: (service: Service, why: string) => void,
  ) {
    this.child = new Child({
      name: spec.name,
      command: spec.command,
      args: spec.args,
      env: spec.env, // the same object: main sets the workers' API URL once the fake API serves
      cwd: spec.cwd,
      runAs: spec.runAs,
      detached: true,
      output: (line, stderr) => {
        if (!this.spec.quiet?.(line, this.state === 'stopping')) this.out(this.name, line, stderr);
      },
      onExit: ({ why, expected }) => {
        this.state = expected ? 'stopped' : 'exited';
        this.since = new Date();
        if (!expected) this.onUnexpectedExit(this, why);
      },
    });
  }

  get name(): string {
    return this.spec.name;
  }

  get pid(): number | undefined {
    return this.alive() ? this.child.pid : undefined;
  }

  get lastExit(): string | undefined {
    return this.child.lastExit;
  }

  alive(): boolean {
    return this.state === 'starting' || this.state === 'running' || this.state === 'stopping';
  }

  /** Resolves with the first output line matching `pattern`; rejects if the process exits first. */
  async waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    const match = await this.child.waitForLine(pattern, timeoutMs);
    if (!match) throw new Error(`${this.name} did not print ${pattern} within ${timeoutMs / 1000} s`);
    return match;
  }

  async start(): Promise<void> {
    if (this.alive()) throw new Error(`${this.name} is already ${this.state}`);
    this.state = 'starting';
    this.since = new Date();
    this.child.start();
    await this.spec.ready(this);
    if (this.state === 'starting') this.state = 'running';
  }

  /** Stops it with its stop signal; after STOP_TIMEOUT_MS kills its process group. */
  async stop(): Promise<void> {
    if (!this.alive()) return;
    this.state = 'stopping';
    await this.child.stop({
      signal: this.spec.stopSignal,
      graceMs: STOP_TIMEOUT_MS,
      onTimeout: () => this.out(this.name, `did not stop within ${STOP_TIMEOUT_MS / 1000} s; killing it`, true),
    });
  }

  status(): ServiceStatus {
    return {
      name: this.name,
      state: this.state,
      pid: this.pid ?? null,
      since: this.since?.toISOString() ?? null,
      restarts: Math.max(0, this.child.starts - 1),
      lastExit: this.lastExit ?? null,
      critical: this.spec.critical,
    };
  }
}
