/**
 * `npm run cluster` — a Temporal cluster as production runs it, on this machine as plain
 * processes: PostgreSQL (Debian's package, a private instance), the Temporal server with its
 * schema set up by its own SQL tool, the Web UI server, the fake shipping API and several workers
 * on one task queue (./up.ts). `status`, `down`, `restart|stop|start <service>` talk to a running one.
 */
import { delay } from '../launcher/delay';
import { findClusterBinaries } from './binaries';
import { HELP, out, parseCommandLine, UsageError } from './cli';
import { clusterLayout, type ClusterLayout } from './config';
import { controlRequest, fetchStatus, serviceAction, type ClusterStatus, type ServiceAction } from './control';
import { processCommand, stopLeftovers } from './leftovers';
import { up } from './up';

/** `npm run cluster -- status` exits with this when no cluster runs (as LSB init scripts do). */
const EXIT_NOT_RUNNING = 3;

// ---------------------------------------------------------------- status, down, service actions

function printStatus(s: ClusterStatus): void {
  const rows = s.services.map((v) => [
    v.name,
    v.state,
    v.pid === null ? '-' : String(v.pid),
    v.since ?? '-',
    String(v.restarts),
    v.lastExit ?? '-',
  ]);
  const header = ['SERVICE', 'STATE', 'PID', 'SINCE', 'RESTARTS', 'LAST EXIT'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write(
    [
      `Cluster pid ${s.pid}, up since ${s.startedAt}, data ${s.dataDir}`,
      `  Temporal ${s.versions.temporalServer}  ${s.temporalAddress}  (namespace ${s.namespace}, task queue ${s.taskQueue})`,
      `  Web UI ${s.versions.ui}    ${s.webUi}`,
      `  PostgreSQL ${s.versions.postgres}  ${s.postgres}`,
      `  Shipping API   ${s.shippingApi}`,
      '',
      fmt(header),
      ...rows.map(fmt),
      '',
    ].join('\n'),
  );
}

async function down(layout: ClusterLayout): Promise<void> {
  const status = await fetchStatus(layout.controlSocket).catch(() => undefined);
  if (status) {
    await controlRequest(layout.controlSocket, 'POST', '/down');
    // Done when the process is gone (it removes the socket just before exiting).
    const deadline = Date.now() + 120_000;
    while (processCommand(status.pid) !== undefined) {
      if (Date.now() > deadline) throw new Error(`The cluster (pid ${status.pid}) did not stop within 120 s`);
      await delay(200);
    }
    out.say(`Stopped the cluster (pid ${status.pid}).`);
    return;
  }
  const leftovers = await stopLeftovers(layout);
  out.say(leftovers.length > 0 ? `No cluster was running; stopped what one left: ${leftovers.join(', ')}` : 'No cluster is running.');
}

async function main(): Promise<number> {
  const { command, target, options, help } = parseCommandLine(process.argv.slice(2));
  if (help) {
    process.stdout.write(HELP);
    return 0;
  }
  const layout = clusterLayout(options.dataDir);
  switch (command) {
    case 'up':
      await up(options);
      return -1; // keeps running until a signal or down
    case 'status': {
      const status = await fetchStatus(layout.controlSocket);
      if (!status) {
        if (options.json) process.stdout.write(`${JSON.stringify({ running: false })}\n`);
        else process.stdout.write(`No cluster is running (data dir ${layout.dataDir}).\n`);
        return EXIT_NOT_RUNNING;
      }
      if (options.json) process.stdout.write(`${JSON.stringify({ running: true, ...status }, null, 2)}\n`);
      else printStatus(status);
      return 0;
    }
    case 'down':
      await down(layout);
      return 0;
    case 'binaries': {
      const found = await findClusterBinaries({ log: (msg) => process.stderr.write(`${msg}\n`) });
      process.stdout.write(`${Object.values(found).join('\n')}\n`);
      return 0;
    }
    default: {
      const result = await serviceAction(layout.controlSocket, target!, command as ServiceAction);
      out.say(`${result.name}: ${result.state}${result.pid ? ` (pid ${result.pid})` : ''}`);
      return 0;
    }
  }
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof UsageError || (err as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      process.stderr.write(`${(err as Error).message}\n\nnpm run cluster -- --help lists the options.\n`);
      process.exit(2);
    }
    process.stderr.write(`${out.paint(31, '[cluster]')} ${err instanceof Error ? err.message : String(err)}\n`);
    // Whatever started is killed by the exit handler.
    process.exit(1);
  },
);
