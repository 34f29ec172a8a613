/**
 * How `npm run dev` and `npm run cluster` end: on a signal or a child's death, stop everything
 * (the caller's order), clean up, say so and exit. A second Ctrl-C kills everything at once.
 */
import { killAllChildren } from './child';
import type { LauncherConsole } from './console';

export interface Supervision {
  out: LauncherConsole;
  /** Stops every child, in reverse start order (workers drain while their servers are still up). */
  stopAll(): Promise<void>;
  /** Last steps before exiting (the cluster's control socket and state file). */
  cleanup?(): void;
}

export class Supervisor {
  stopping = false;
  private firstSignalAt = 0;

  constructor(private readonly s: Supervision) {}

  /** Stops everything and exits with `code`; `reason` is said (0) or warned (otherwise) first. */
  async shutdown(code: number, reason?: string): Promise<never> {
    if (this.stopping) return new Promise<never>(() => undefined); // the first call exits
    this.stopping = true;
    if (reason) (code === 0 ? this.s.out.say : this.s.out.warn)(reason);
    await this.s.stopAll();
    this.s.cleanup?.();
    if (code === 0) this.s.out.say('All stopped.');
    process.exit(code);
  }

  /** SIGINT, SIGTERM and SIGHUP stop everything; exiting any other way still kills every child. */
  handleSignals(): void {
    process.on('exit', killAllChildren);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.on(signal, () => {
        if (this.firstSignalAt > 0) {
          // tsx (under npm run) may relay the same Ctrl-C again a moment later: not a second press.
          if (Date.now() - this.firstSignalAt < 1_000) return;
          this.s.out.warn('Second interrupt: killing everything now.');
          killAllChildren();
          process.exit(130);
        }
        this.firstSignalAt = Date.now();
        if (signal === 'SIGINT') process.stdout.write('\n');
        void this.shutdown(0, `Got ${signal}; stopping (Ctrl-C again to kill).`);
      });
    }
  }
}
