/**
 * Plumbing shared by the local servers (the fake shipping API, the reference shop receiver, the
 * codec server): injected delays that closing ends at once, and a CLI that stops on a signal.
 * The launchers' port check is in launcher/ports.ts.
 */

/** Delays that `releaseAll()` ends early, so closing a server never waits for a slow fault. */
export function cancellableDelays() {
  const pending = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  return {
    delay(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const entry = {
          timer: setTimeout(() => {
            pending.delete(entry);
            resolve();
          }, ms),
          resolve,
        };
        pending.add(entry);
      });
    },
    releaseAll(): void {
      for (const entry of pending) {
        clearTimeout(entry.timer);
        entry.resolve();
      }
      pending.clear();
    },
  };
}

/** SIGINT/SIGTERM close the server and exit 0; a second signal exits at once with 1. */
export function closeOnSignals(name: string, close: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      process.stderr.write(`Received ${signal} again, exiting now.\n`);
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`Received ${signal}, shutting down.\n`);
    void close().then(
      () => process.exit(0),
      (e: unknown) => {
        process.stderr.write(`${name}: error while closing: ${(e as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
