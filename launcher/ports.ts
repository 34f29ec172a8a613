/** Checking, before anything starts, that the ports a launcher will listen on are free. */
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

export interface PortCheck {
  port: number;
  what: string;
  flag: string;
}

/** Throws `error(problem)` for the first port in `checks` that is not free (in order). */
export async function assertPortsFree(
  checks: PortCheck[],
  opts: { inUseHint?: string; error?: (message: string) => Error } = {},
): Promise<void> {
  for (const { port, what, flag } of checks) {
    const problem = await portProblem(port, what, flag, opts.inUseHint);
    if (problem) throw (opts.error ?? ((m: string) => new Error(m)))(problem);
  }
}
