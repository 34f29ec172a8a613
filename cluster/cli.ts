/**
 * `npm run cluster`'s command line: its help text, its options and their checks. Bad flags are
 * a UsageError (exit 2, with a pointer to --help).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { launcherConsole } from '../launcher/console';
import { DEFAULT_FAKE_API_PORT, DEFAULT_TEMPORAL_PORT, DEFAULT_TRACKING_STEP_MS, DEMO_POLL_INTERVAL } from '../launcher/defaults';
import { REPO_ROOT } from '../dev-server/temporal-cli';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from './binaries';
import { NAMESPACE, TEMPORAL_PORT_BLOCK } from './config';
import { SERVICE_ACTIONS } from './control';

export const DEFAULTS = {
  dataDir: path.join(REPO_ROOT, '.data', 'cluster'),
  pgPort: 5433,
  temporalPort: DEFAULT_TEMPORAL_PORT,
  uiPort: 8080,
  fakeApiPort: DEFAULT_FAKE_API_PORT,
  workers: 2,
  trackingStepMs: DEFAULT_TRACKING_STEP_MS,
  temporalLogLevel: 'warn',
};

export const HELP = `Usage: npm run cluster [-- up] [options]
       npm run cluster -- status [--json] [--data-dir <dir>]
       npm run cluster -- down [--data-dir <dir>]
       npm run cluster -- restart|stop|start <service> [--data-dir <dir>]
       npm run cluster -- binaries

up (the default) runs, as processes on this machine, until Ctrl-C or SIGTERM:
  postgres   PostgreSQL from Debian's packages (apt-get install postgresql if missing, as root),
             a private instance: initdb into <data-dir>/pg, 127.0.0.1:<pg-port> only, password
             in <data-dir>/pg-password; run as the postgres user when started as root
  temporal   the Temporal server ${TEMPORAL_SERVER_VERSION} (all four services in one process) on PostgreSQL,
             schema set up and updated by temporal-sql-tool, namespace ${NAMESPACE} and this
             project's search attributes registered
  ui         the Temporal Web UI server ${TEMPORAL_UI_VERSION}
  fake-api   the fake shipping API (only if SHIPPING_API_BASE_URL is unset)
  worker-N   --workers worker processes (npm run worker) on one task queue
The Temporal binaries come from $TEMPORAL_SERVER_PATH / $TEMPORAL_SQL_TOOL_PATH /
$TEMPORAL_UI_SERVER_PATH, PATH, .tools/bin, or are built there with Go (minutes, once).
Ctrl-C stops everything, workers first. A worker that dies stays down and the others carry on;
PostgreSQL, Temporal, the UI or the fake API dying stops the cluster.

status    the running cluster's addresses and every service's state (--json: as JSON); exit 3
          when none runs
down      stops the running cluster (or what a killed one left behind)
restart|stop|start <service>
          e.g. restart temporal, stop worker-2, start worker-2 (waits until it serves)
binaries  finds or builds the three Temporal binaries and prints their paths (CI warms them so)

Options:
  --data-dir <dir>            state: PostgreSQL data, configs, control socket (default .data/cluster)
  --pg-port <n>               PostgreSQL (default ${DEFAULTS.pgPort})
  --temporal-port <n>         Temporal frontend gRPC (default ${DEFAULTS.temporalPort}); the server uses the
                              ${TEMPORAL_PORT_BLOCK} ports from there: history, matching, worker, HTTP API, membership, metrics
                              (at most 32757: the server stores membership ports as a smallint)
  --ui-port <n>               Web UI (default ${DEFAULTS.uiPort})
  --fake-api-port <n>         fake shipping API (default ${DEFAULTS.fakeApiPort})
  --workers <n>               worker processes (default ${DEFAULTS.workers})
  --tracking-step-ms <n>      fake API: time between tracking checkpoints (default ${DEFAULTS.trackingStepMs})
  --temporal-log-level <l>    debug, info, warn, error (default ${DEFAULTS.temporalLogLevel})
  --json                      status: print JSON
  -h, --help                  this text

Environment: SHIPPING_API_BASE_URL / SHIPPING_API_KEY / SHIPPING_API_TOKEN, TEMPORAL_TASK_QUEUE,
TRACKING_POLL_INTERVAL (default ${DEMO_POLL_INTERVAL} here), LOG_LEVEL go to the workers as for npm run dev;
so do PAYLOAD_ENCRYPTION_KEYS(_FILE): without them (and without PAYLOAD_ENCRYPTION=off) the workers
use a key made once in <data-dir>/payload-encryption.keys. PG_BIN_DIR picks a PostgreSQL installation.
`;

const port = z.coerce.number().int().min(1).max(65535);
const Options = z.object({
  dataDir: z.string().min(1).default(DEFAULTS.dataDir),
  pgPort: port.default(DEFAULTS.pgPort),
  // The server stores membership ports in a SQL smallint: the whole block must stay below 32768.
  temporalPort: z.coerce
    .number()
    .int()
    .min(1)
    .max(32767 - TEMPORAL_PORT_BLOCK, 'the server keeps its ports in a smallint: at most 32757')
    .default(DEFAULTS.temporalPort),
  uiPort: port.default(DEFAULTS.uiPort),
  fakeApiPort: port.default(DEFAULTS.fakeApiPort),
  workers: z.coerce.number().int().min(1).max(32).default(DEFAULTS.workers),
  trackingStepMs: z.coerce.number().int().min(0).default(DEFAULTS.trackingStepMs),
  temporalLogLevel: z.enum(['debug', 'info', 'warn', 'error']).default('warn'),
  json: z.boolean().default(false),
});
export type Options = z.infer<typeof Options>;

const FLAG_NAMES: Record<string, string> = {
  dataDir: '--data-dir',
  pgPort: '--pg-port',
  temporalPort: '--temporal-port',
  uiPort: '--ui-port',
  fakeApiPort: '--fake-api-port',
  workers: '--workers',
  trackingStepMs: '--tracking-step-ms',
  temporalLogLevel: '--temporal-log-level',
};

export class UsageError extends Error {}

export function parseCommandLine(argv: string[]): { command: string; target?: string; options: Options; help: boolean } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      'pg-port': { type: 'string' },
      'temporal-port': { type: 'string' },
      'ui-port': { type: 'string' },
      'fake-api-port': { type: 'string' },
      workers: { type: 'string' },
      'tracking-step-ms': { type: 'string' },
      'temporal-log-level': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const parsed = Options.safeParse({
    dataDir: values['data-dir'],
    pgPort: values['pg-port'],
    temporalPort: values['temporal-port'],
    uiPort: values['ui-port'],
    fakeApiPort: values['fake-api-port'],
    workers: values.workers,
    trackingStepMs: values['tracking-step-ms'],
    temporalLogLevel: values['temporal-log-level'],
    json: values.json,
  });
  if (!parsed.success) {
    throw new UsageError(parsed.error.issues.map((i) => `${FLAG_NAMES[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`).join('\n'));
  }
  const [command = 'up', target, ...rest] = positionals;
  const known = ['up', 'status', 'down', 'binaries', ...SERVICE_ACTIONS];
  if (!known.includes(command)) throw new UsageError(`Unknown command "${command}" (one of ${known.join(', ')})`);
  const wantsTarget = (SERVICE_ACTIONS as readonly string[]).includes(command);
  if (wantsTarget && !target) throw new UsageError(`${command} needs a service name, e.g. ${command} worker-1`);
  if ((!wantsTarget && target !== undefined) || rest.length > 0)
    throw new UsageError(`Unexpected argument "${wantsTarget ? rest[0] : target}"`);
  return { command, target, options: { ...parsed.data, dataDir: path.resolve(parsed.data.dataDir) }, help: values.help ?? false };
}

/** The cluster's own lines and its services' prefixed output. */
export const out = launcherConsole('cluster', { postgres: 34, temporal: 35, ui: 33, 'fake-api': 36 }, 32);
