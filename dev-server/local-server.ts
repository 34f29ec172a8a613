/**
 * Plumbing shared by the local servers' command lines and the launchers (`npm run dev`,
 * `npm run cluster`): a CLI that stops on a signal, and a check that a port is free. The
 * servers' HTTP plumbing is in ../local-http.
 */
import net from 'node:net';

/**
 * Why `port` cannot be listened on at 127.0.0.1 (`in use` names `flag`, how to choose another),
 * or null when it is free.
 */
export function portProblem(port: number, what: string, flag: string, inUseHint = ''): Promise<string | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      resolve(
        err.code === 'EADDRINUSE'
          ? `Port ${port} (${what}) is already in use${inUseHint}; choose another with ${flag}.`
          : `Cannot listen on port ${port} (${what}): ${err.message}`,
      ),
    );
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(null)));
  });
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
