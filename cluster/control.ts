/**
 * How `npm run cluster -- status|down|restart|stop|start` reach the running `npm run cluster`:
 * plain HTTP over a Unix socket in the data directory (no port to pick, and only who can enter
 * the directory can use it).
 *
 *   GET  /status                   -> ClusterStatus
 *   POST /services/<name>/<action> -> ServiceStatus after the action (restart, stop, start)
 *   POST /down                     -> 202, then the cluster stops
 */
import fs from 'node:fs';
import http from 'node:http';
import { z } from 'zod';
import type { ServiceStatus } from './services';

export const SERVICE_ACTIONS = ['restart', 'stop', 'start'] as const;
export type ServiceAction = (typeof SERVICE_ACTIONS)[number];

export interface ClusterStatus {
  pid: number;
  startedAt: string;
  dataDir: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  webUi: string;
  shippingApi: string;
  postgres: string;
  versions: { temporalServer: string; ui: string; postgres: string };
  services: ServiceStatus[];
}

const ServiceStatusSchema = z.object({
  name: z.string(),
  state: z.enum(['stopped', 'starting', 'running', 'stopping', 'exited']),
  pid: z.number().nullable(),
  since: z.string().nullable(),
  restarts: z.number(),
  lastExit: z.string().nullable(),
  critical: z.boolean(),
});
export const ClusterStatusSchema = z.object({
  pid: z.number(),
  startedAt: z.string(),
  dataDir: z.string(),
  temporalAddress: z.string(),
  namespace: z.string(),
  taskQueue: z.string(),
  webUi: z.string(),
  shippingApi: z.string(),
  postgres: z.string(),
  versions: z.object({ temporalServer: z.string(), ui: z.string(), postgres: z.string() }),
  services: z.array(ServiceStatusSchema),
});
const ErrorBody = z.object({ error: z.string() });

export interface ControlHandlers {
  status(): ClusterStatus;
  service(name: string, action: ServiceAction): Promise<ServiceStatus>;
  down(): void;
}

export function startControlServer(socketPath: string, handlers: ControlHandlers): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://cluster');
    const action = /^\/services\/([\w-]+)\/(\w+)$/.exec(url.pathname);
    if (req.method === 'GET' && url.pathname === '/status') return send(200, handlers.status());
    if (req.method === 'POST' && url.pathname === '/down') {
      send(202, { stopping: true });
      return handlers.down();
    }
    if (req.method === 'POST' && action && (SERVICE_ACTIONS as readonly string[]).includes(action[2]!)) {
      handlers.service(action[1]!, action[2] as ServiceAction).then(
        (status) => send(200, status),
        (err: unknown) => send(409, { error: (err as Error).message }),
      );
      return;
    }
    send(404, { error: `no ${req.method} ${url.pathname}` });
  });
  // A socket file left by a cluster that was killed would make listen fail with EADDRINUSE.
  fs.rmSync(socketPath, { force: true });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      fs.chmodSync(socketPath, 0o600);
      resolve(server);
    });
  });
}

/** One request to the control socket; undefined when no cluster answers there. */
export function controlRequest(
  socketPath: string,
  method: 'GET' | 'POST',
  urlPath: string,
  timeoutMs = 120_000,
): Promise<{ status: number; body: unknown } | undefined> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method, path: urlPath, timeout: timeoutMs }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (data += d));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) as unknown });
        } catch (err) {
          reject(new Error(`cluster control answered ${res.statusCode} with no JSON: ${(err as Error).message}`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`cluster control did not answer ${method} ${urlPath} within ${timeoutMs / 1000} s`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') resolve(undefined);
      else reject(err);
    });
    req.end();
  });
}

export async function fetchStatus(socketPath: string): Promise<ClusterStatus | undefined> {
  const answer = await controlRequest(socketPath, 'GET', '/status', 10_000);
  return answer ? ClusterStatusSchema.parse(answer.body) : undefined;
}

export async function serviceAction(socketPath: string, name: string, action: ServiceAction): Promise<ServiceStatus> {
  const answer = await controlRequest(socketPath, 'POST', `/services/${encodeURIComponent(name)}/${action}`);
  if (!answer) throw new Error(`No cluster is running with control socket ${socketPath}`);
  if (answer.status !== 200) throw new Error(ErrorBody.safeParse(answer.body).data?.error ?? `control answered ${answer.status}`);
  return ServiceStatusSchema.parse(answer.body);
}
