/**
 * The worker's HTTP endpoints for an orchestrator (WORKER_HEALTH_PORT):
 *
 * - `/livez`: 200 while the process answers (its event loop is not stuck);
 * - `/readyz`: 200 only while every worker of the process (shipments, and where they run, live
 *   shipments and shop pulls) is RUNNING (polling its task queue) and Temporal answers a cheap
 *   call right now; 503 while one is starting (connecting, bundling), draining or stopped, naming
 *   it, and when the connection is lost (the SDK keeps such a worker RUNNING while its polls retry);
 * - `/metrics`: the project's counters (counters.ts) in the Prometheus text format.
 *
 * Started before the worker connects, so a probe gets an answer (503) during start-up.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { NativeConnection, State as WorkerState, Worker } from '@temporalio/worker';

/** How long /readyz waits for Temporal before calling it unreachable (give the probe a longer timeout, e.g. 2 s). */
export const TEMPORAL_CHECK_TIMEOUT_MS = 1000;

export interface Readiness {
  ready: boolean;
  /** The worker's state, or `starting` before it exists. */
  state: WorkerState | 'starting';
  temporal: 'reachable' | 'unreachable' | 'unknown';
  reason?: string;
}

type Watched = Pick<Worker, 'getState'>;

/** What /readyz looks at: the workers' states and their connection, once they exist. */
export class WorkerReadiness {
  private workers?: Array<[name: string, worker: Watched]>;
  private connection?: NativeConnection;
  private inFlight?: Promise<Readiness>;

  /** One worker, or the process's workers by name (a pull worker that stopped makes the process unready too). */
  watch(workers: Watched | Record<string, Watched | undefined>, connection: NativeConnection): void {
    const named = 'getState' in workers ? { shipments: workers as Watched } : workers;
    this.workers = Object.entries(named).filter((entry): entry is [string, Watched] => entry[1] !== undefined);
    this.connection = connection;
  }

  /** Concurrent probes share one call to Temporal. */
  check(): Promise<Readiness> {
    this.inFlight ??= this.evaluate().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async evaluate(): Promise<Readiness> {
    const { workers, connection } = this;
    if (!workers || !connection) return { ready: false, state: 'starting', temporal: 'unknown', reason: 'worker starting' };
    for (const [name, worker] of workers) {
      const state = worker.getState();
      if (state !== 'RUNNING') {
        const which = workers.length > 1 ? `${name} worker` : 'worker';
        return { ready: false, state, temporal: 'unknown', reason: `${which} ${state.toLowerCase()}` };
      }
    }
    const state = 'RUNNING';
    // GetSystemInfo needs no namespace permission and is what SDK clients call to connect. The
    // native client does not always honour the deadline while it reconnects: the race bounds it.
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        connection.withDeadline(Date.now() + TEMPORAL_CHECK_TIMEOUT_MS, () => connection.workflowService.getSystemInfo({})),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${TEMPORAL_CHECK_TIMEOUT_MS} ms`)), TEMPORAL_CHECK_TIMEOUT_MS);
        }),
      ]);
    } catch (err) {
      return { ready: false, state, temporal: 'unreachable', reason: `Temporal unreachable: ${(err as Error).message}` };
    } finally {
      clearTimeout(timer);
    }
    return { ready: true, state, temporal: 'reachable' };
  }
}

export interface HealthServerOptions {
  host: string;
  /** 0 picks a free port (tests); the chosen one is on the result. */
  port: number;
  readiness: WorkerReadiness;
  registry: Registry;
  logger: Logger;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer({ host, port, readiness, registry, logger }: HealthServerOptions): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    handle(req, res, readiness, registry).catch((err: unknown) => {
      logger.error({ err, path: req.url }, 'health endpoint failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  logger.info({ host, port: bound, paths: ['/livez', '/readyz', '/metrics'] }, 'health and metrics endpoints listening');
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, readiness: WorkerReadiness, registry: Registry): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://health').pathname;
  if (!['/livez', '/readyz', '/metrics'].includes(path))
    return send(res, 404, 'text/plain', 'not found: use /livez, /readyz or /metrics\n');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(res, 405, 'text/plain', 'method not allowed\n');
  }
  if (path === '/livez') return send(res, 200, 'application/json', '{"live":true}\n');
  if (path === '/readyz') {
    const result = await readiness.check();
    return send(res, result.ready ? 200 : 503, 'application/json', `${JSON.stringify(result)}\n`);
  }
  return send(res, 200, registry.contentType, await registry.metrics());
}

function send(res: http.ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
