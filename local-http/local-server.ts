/**
 * What the local servers' command lines share (the fake shipping API, the reference shop
 * receiver, the codec server): a CLI that stops on a signal. Their HTTP plumbing is beside it
 * (index.ts); the launchers' port check is launcher/ports.ts.
 */

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
