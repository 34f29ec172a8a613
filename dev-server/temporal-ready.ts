/**
 * Waiting for a Temporal server this project started (`npm run dev`, `npm run cluster`, the
 * chaos run): one place for "connect once its frontend answers".
 */
import { Connection } from '@temporalio/client';

/**
 * Connects to `address` once the frontend answers `describeNamespace(namespace)`, which needs
 * the persistence layer, not merely the port. Fails at once when `alive()` turns false.
 */
export async function connectWhenReady(
  address: string,
  opts: { namespace: string; alive: () => boolean; what: string; timeoutMs: number },
): Promise<Connection> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    if (!opts.alive()) throw new Error(`${opts.what} exited during startup`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: opts.namespace });
        return connection;
      } catch (err) {
        await connection.close();
        throw err;
      }
    } catch (err) {
      lastError = (err as Error).message;
      await new Promise<void>((resolve) => setTimeout(resolve, 500).unref());
    }
  }
  throw new Error(`${opts.what} did not answer on ${address} within ${opts.timeoutMs / 1000} s (${lastError})`);
}
