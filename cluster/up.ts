/**
 * `npm run cluster [-- up]`: the start-up in the order it happens, each step a function of its
 * own. Runs until a signal or `npm run cluster -- down`.
 */
import path from 'node:path';
import fs from 'node:fs';
import { ensureDevKeyFile } from '../dev-server/dev-key';
import { credentialExports } from '../launcher/defaults';
import { assertPortsFree } from '../launcher/ports';
import { findClusterBinaries } from './binaries';
import { DEFAULTS, out, UsageError, type Options } from './cli';
import { Cluster, PhaseTimer } from './cluster';
import { clusterLayout, NAMESPACE, TEMPORAL_PORT_BLOCK, writeServerConfigs, type ClusterLayout } from './config';
import { fetchStatus } from './control';
import { stopLeftovers } from './leftovers';
import { PG_USER, findPostgres, initPostgres, installPostgres, postgresPassword, postgresRunAs } from './postgres';
import type { ClusterSetup } from './service-specs';

export async function up(o: Options): Promise<void> {
  const timer = new PhaseTimer();
  const layout = await claimDataDir(o.dataDir);
  useClusterKey(layout.dataDir);
  await checkPorts(o);
  const setup = await prepare(o, layout, timer);
  const cluster = new Cluster(o, layout, setup, timer);
  await cluster.serveControl();
  await cluster.startAll();
  printBanner(cluster);
}

/** One cluster per data directory; what a killed one left running is stopped first. */
async function claimDataDir(dataDir: string): Promise<ClusterLayout> {
  const layout = clusterLayout(dataDir);
  fs.mkdirSync(layout.dataDir, { recursive: true });
  if (await fetchStatus(layout.controlSocket).catch(() => undefined)) {
    throw new UsageError(`A cluster is already running with data dir ${layout.dataDir} (npm run cluster -- status).`);
  }
  const leftovers = await stopLeftovers(layout);
  if (leftovers.length > 0) out.warn(`Stopped what a previous cluster left running: ${leftovers.join(', ')}`);
  return layout;
}

/**
 * Without keys of the shell's own (and not told PAYLOAD_ENCRYPTION=off), the data dir's: made on
 * the first start, kept beside the database it opens; the workers inherit it.
 */
function useClusterKey(dataDir: string): void {
  const env = process.env;
  if (env.PAYLOAD_ENCRYPTION_KEYS || env.PAYLOAD_ENCRYPTION_KEYS_FILE || env.PAYLOAD_ENCRYPTION === 'off') return;
  const { file, created } = ensureDevKeyFile(dataDir, 'npm run cluster');
  if (created) out.say(`Made a payload encryption key: ${file} (0600; delete it only together with the rest of ${dataDir})`);
  env.PAYLOAD_ENCRYPTION_KEYS_FILE = file;
}

async function checkPorts(o: Options): Promise<void> {
  const block = `Temporal server, block ${o.temporalPort}-${o.temporalPort + TEMPORAL_PORT_BLOCK - 1}`;
  await assertPortsFree(
    [
      { port: o.pgPort, what: 'PostgreSQL', flag: '--pg-port' },
      ...Array.from({ length: TEMPORAL_PORT_BLOCK }, (_, i) => ({ port: o.temporalPort + i, what: block, flag: '--temporal-port' })),
      { port: o.uiPort, what: 'Web UI', flag: '--ui-port' },
      ...(process.env.SHIPPING_API_BASE_URL ? [] : [{ port: o.fakeApiPort, what: 'fake shipping API', flag: '--fake-api-port' }]),
    ],
    { error: (m) => new UsageError(m) },
  );
}

/** The programs (installed or built if missing), PostgreSQL's data directory and the servers' configs. */
async function prepare(o: Options, layout: ClusterLayout, timer: PhaseTimer): Promise<ClusterSetup> {
  const pg = findPostgres() ?? installPostgres(out.say);
  timer.phase('postgres package');
  const binaries = await findClusterBinaries({ log: out.say });
  timer.phase('temporal binaries');
  const runAs = postgresRunAs();
  const password = postgresPassword(layout.passwordFile);
  if (initPostgres(pg, layout.pgDir, password, runAs)) out.say(`Created a PostgreSQL ${pg.version} cluster in ${layout.pgDir}`);
  timer.phase('initdb');
  const configs = writeServerConfigs(layout, {
    temporalPort: o.temporalPort,
    pgPort: o.pgPort,
    uiPort: o.uiPort,
    logLevel: o.temporalLogLevel,
  });
  return { pg, binaries, runAs, password, ...configs };
}

function printBanner(c: Cluster): void {
  const { o, layout, timer } = c;
  const total = (Date.now() - timer.began) / 1000;
  out.banner(`Temporal cluster is running (up in ${total.toFixed(1)} s)`, [
    `   ${timer.phases.map(([n, s]) => `${n} ${s.toFixed(1)} s`).join(', ')}`,
    '',
    `   Temporal address  ${c.address}  (namespace ${NAMESPACE}, task queue ${c.settings.taskQueue})`,
    `   Web UI            http://localhost:${o.uiPort}`,
    `   PostgreSQL        127.0.0.1:${o.pgPort}  (user ${PG_USER}, password in ${layout.passwordFile})`,
    `   Shipping API      ${c.apiUrl}${c.externalApi ? '' : `  (fake; tracking advances every ${o.trackingStepMs / 1000} s)`}`,
    `   Workers           ${c.workers.map((w) => `${w.name} (pid ${w.pid})`).join(', ')}`,
    `   Data              ${layout.dataDir}`,
    '',
    ' In another terminal:',
    `   export TEMPORAL_ADDRESS=${c.address} SHIPPING_API_BASE_URL=${c.apiUrl} ${[...credentialExports(c.settings), payloadExport()].join(' ')}`,
    '   npm run import -- examples/orders.ndjson',
    `   npm run cluster -- status${o.dataDir === DEFAULTS.dataDir ? '' : ` --data-dir ${o.dataDir}`}`,
    '',
    ' Ctrl-C (or npm run cluster -- down) stops everything.',
  ]);
}

/** The workers' keys (the shell's or the data dir's), or in clear when told: the import and CLI must do the same (they refuse otherwise). */
function payloadExport(): string {
  if (process.env.PAYLOAD_ENCRYPTION_KEYS_FILE)
    return `PAYLOAD_ENCRYPTION_KEYS_FILE=${path.resolve(process.env.PAYLOAD_ENCRYPTION_KEYS_FILE)}`;
  return process.env.PAYLOAD_ENCRYPTION_KEYS ? 'PAYLOAD_ENCRYPTION_KEYS=<the same keys as here>' : 'PAYLOAD_ENCRYPTION=off';
}
