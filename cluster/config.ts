/**
 * What `npm run cluster` writes for the Temporal server and the UI server, regenerated on every
 * start from the flags (the data directory keeps only state). The database password is not in
 * any file the server reads: the config is a template (`# enable-template`, rendered by the
 * server) that takes it from the server's environment.
 */
import fs from 'node:fs';
import path from 'node:path';
import { priorityDynamicConfigYaml } from '../dev-server/server-priority';
import { PG_USER } from './postgres';

export const NAMESPACE = 'default';
/** How long closed workflows stay visible; the dev server keeps them 1 day. */
export const NAMESPACE_RETENTION_DAYS = 7;
/** Fixed at the first start: a cluster's shard count cannot change afterwards. */
const HISTORY_SHARDS = 4;
export const SQL_PASSWORD_ENV = 'TEMPORAL_SQL_PASSWORD';
export const TEMPORAL_DATABASE = 'temporal';
export const VISIBILITY_DATABASE = 'temporal_visibility';

/**
 * The server's ports, a block of 10 from the frontend's: gRPC of frontend, history, matching,
 * worker; the frontend's HTTP API; the four membership ports; Prometheus metrics.
 */
export function temporalPorts(frontend: number) {
  return {
    frontend,
    history: frontend + 1,
    matching: frontend + 2,
    worker: frontend + 3,
    frontendHttp: frontend + 4,
    membership: { frontend: frontend + 5, history: frontend + 6, matching: frontend + 7, worker: frontend + 8 },
    metrics: frontend + 9,
  };
}
export const TEMPORAL_PORT_BLOCK = 10;

export interface ClusterLayout {
  dataDir: string;
  pgDir: string;
  passwordFile: string;
  temporalConfigDir: string;
  uiConfigDir: string;
  /** The `--env` both servers get: they read `<config dir>/<env>.yaml`. */
  configEnv: string;
  stateFile: string;
  controlSocket: string;
}

export function clusterLayout(dataDir: string): ClusterLayout {
  return {
    dataDir,
    pgDir: path.join(dataDir, 'pg'),
    passwordFile: path.join(dataDir, 'pg-password'),
    temporalConfigDir: path.join(dataDir, 'temporal'),
    uiConfigDir: path.join(dataDir, 'ui'),
    configEnv: 'cluster',
    stateFile: path.join(dataDir, 'cluster.json'),
    controlSocket: path.join(dataDir, 'control.sock'),
  };
}

function datastore(database: string, pgPort: number, maxConns: number): string {
  return `      sql:
        pluginName: postgres12
        databaseName: ${database}
        connectAddr: "127.0.0.1:${pgPort}"
        connectProtocol: tcp
        user: ${PG_USER}
        password: '{{ env "${SQL_PASSWORD_ENV}" }}'
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
}

export function temporalServerConfig(opts: { temporalPort: number; pgPort: number; dynamicConfigFile: string; logLevel: string }): string {
  const p = temporalPorts(opts.temporalPort);
  const service = (grpc: number, membership: number, http?: number) =>
    `    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${http ? `\n      httpPort: ${http}` : ''}`;
  return `# enable-template
# Written by npm run cluster (cluster/config.ts) at every start: change the generator, not this file.
log:
  stdout: true
  level: ${opts.logLevel}

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: ${HISTORY_SHARDS}
  datastores:
    postgres-default:
${datastore(TEMPORAL_DATABASE, opts.pgPort, 20)}
    postgres-visibility:
${datastore(VISIBILITY_DATABASE, opts.pgPort, 10)}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: "127.0.0.1:${p.metrics}"

services:
  frontend:
${service(p.frontend, p.membership.frontend, p.frontendHttp)}
  history:
${service(p.history, p.membership.history)}
  matching:
${service(p.matching, p.membership.matching)}
  worker:
${service(p.worker, p.membership.worker)}

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:${p.frontend}"
      httpAddress: "127.0.0.1:${p.frontendHttp}"

dcRedirectionPolicy:
  policy: noop

dynamicConfigClient:
  filepath: ${JSON.stringify(opts.dynamicConfigFile)}
  pollInterval: 10s
`;
}

/** Server defaults (the cluster runs as a production server would), but task queue priority on. */
export function temporalDynamicConfig(): string {
  return `# Written by npm run cluster (cluster/config.ts) at every start. Server defaults, but:
# task queue priority on (live orders ahead of a backlog: dev-server/server-priority.ts).
${priorityDynamicConfigYaml()}`;
}

export function uiServerConfig(opts: { temporalPort: number; uiPort: number }): string {
  return `# Written by npm run cluster (cluster/config.ts) at every start.
temporalGrpcAddress: "127.0.0.1:${opts.temporalPort}"
host: 127.0.0.1
port: ${opts.uiPort}
enableUi: true
defaultNamespace: ${NAMESPACE}
notifyOnNewVersion: false
cors:
  cookieInsecure: true
  allowOrigins:
    - "http://localhost:${opts.uiPort}"
    - "http://127.0.0.1:${opts.uiPort}"
`;
}

/** Writes both configs; returns the arguments each server is started with. */
export function writeServerConfigs(
  layout: ClusterLayout,
  opts: { temporalPort: number; pgPort: number; uiPort: number; logLevel: string },
): { temporalArgs: string[]; uiArgs: string[] } {
  fs.mkdirSync(layout.temporalConfigDir, { recursive: true });
  fs.mkdirSync(layout.uiConfigDir, { recursive: true });
  const dynamicConfigFile = path.join(layout.temporalConfigDir, 'dynamicconfig.yaml');
  fs.writeFileSync(dynamicConfigFile, temporalDynamicConfig());
  fs.writeFileSync(path.join(layout.temporalConfigDir, `${layout.configEnv}.yaml`), temporalServerConfig({ ...opts, dynamicConfigFile }));
  fs.writeFileSync(path.join(layout.uiConfigDir, `${layout.configEnv}.yaml`), uiServerConfig(opts));
  // Both read <root>/<config>/<env>.yaml; an absolute --config would be joined onto --root.
  return {
    temporalArgs: ['--root', layout.temporalConfigDir, '--config', '.', '--env', layout.configEnv, '--allow-no-auth', 'start'],
    uiArgs: ['--root', layout.uiConfigDir, '--config', '.', '--env', layout.configEnv, 'start'],
  };
}
