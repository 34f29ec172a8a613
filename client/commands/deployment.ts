/** `npm run cli -- deployment <action>`: rollouts by Worker Deployment version (docs/production.md, "Rolling out a new build"). */
import { ConfigError } from '../../config/settings';
import { defaultBuildId, deploymentNameOf, isBuildId } from '../../config/deployment';
import {
  deleteVersion,
  describeDeployment,
  openOnBuild,
  PINNED_TYPES,
  setCurrentVersion,
  setRampingVersion,
  shipmentsOnBuild,
  type DeploymentView,
} from '../../worker-deployment/deployments';
import {
  CliError,
  connectTemporal,
  EXIT,
  parseCommandArgs,
  positiveInt,
  println,
  table,
  usageError,
  type ExitCode,
  type Io,
} from '../cli-support';

export const DEPLOYMENT_HELP = `Usage: npm run cli -- deployment status [--json]
       npm run cli -- deployment shipments <buildId> [--limit <n>] [--json]
       npm run cli -- deployment promote <buildId> [--ramp <percent>]
       npm run cli -- deployment retire <buildId>
       npm run cli -- deployment build-id

Versioned workers (WORKER_VERSIONING=on) run as one build of the Worker Deployment
WORKER_DEPLOYMENT_NAME. New shipments start on the current build; a shipment finishes on the
build it started on (pinned), so an old build's workers run until it has drained.

  status     Each build: current, ramping or draining, and its open workflows by type;
             a build has drained when no shipment and no pull is open on it (tracking
             pollers and account pacers move to the current build at their next task)
  shipments  The open shipments on a build: how many in each phase, the oldest first
  promote    Make a build current (new shipments start there), or with --ramp send
             that percentage of new shipments to it first
  retire     Remove a build that has drained; refused while a shipment or pull runs on
             it or it is current or ramping (stop its workers first: the server keeps a build with
             pollers)
  build-id   The build id a worker of this checkout reports (package version and a hash
             of its workflow bundle), when WORKER_BUILD_ID does not set one

Options:
  --deployment-name <name>  default WORKER_DEPLOYMENT_NAME, else shipping-sync
  --ramp <percent>          promote: 1 to 100
  --limit <n>               shipments: how many of the oldest to list (default 20)
  --json                    one JSON document on stdout
  -h, --help                Show this help

Exit codes: 0 done; 1 retire refused (still in use); 2 usage or configuration error;
4 no such deployment or build; 5 Temporal unreachable.
`;

const ACTIONS = ['status', 'shipments', 'promote', 'retire', 'build-id'] as const;
type Action = (typeof ACTIONS)[number];

export async function deploymentCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    'deployment-name': { type: 'string' },
    ramp: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(DEPLOYMENT_HELP);
    return EXIT.ok;
  }
  const [action, buildId, ...extra] = positionals as [Action | undefined, string | undefined, ...string[]];
  if (!action || !ACTIONS.includes(action))
    throw usageError(`deployment needs an action: ${ACTIONS.join(', ')}. See: npm run cli -- deployment --help`);
  const needsBuild = action === 'shipments' || action === 'promote' || action === 'retire';
  if (extra.length > 0 || needsBuild !== (buildId !== undefined))
    throw usageError(`deployment ${action} takes ${needsBuild ? 'one build id' : 'no argument'}`);
  if (buildId !== undefined && !isBuildId(buildId)) throw usageError(`not a build id: ${JSON.stringify(buildId)}`);
  if (action === 'build-id') {
    // Loaded here only: the bundler (the SDK's worker package and webpack) is a second and a half
    // of every other command's start.
    const { bundleFromSource } = await import('../../worker-deployment/workflow-bundle');
    println(io.stdout, defaultBuildId((await bundleFromSource()).code));
    return EXIT.ok;
  }
  const name = values['deployment-name'] ?? nameFromEnv(io.env);
  const ramp = values.ramp === undefined ? undefined : positiveInt('ramp', values.ramp, 100, 100);
  const limit = positiveInt('limit', values.limit, 20);
  const session = await connectTemporal(io.env);
  try {
    const view = await describeDeployment(session.client, name);
    if (!view) throw new CliError(`no deployment ${name}: no versioned worker of it has polled yet (WORKER_VERSIONING=on)`, EXIT.notFound);
    if (action === 'status') return await status(session.client, view, values.json, io);
    if (!view.versions.some((v) => v.buildId === buildId))
      throw new CliError(
        `deployment ${name} has no build ${buildId}; its builds: ${view.versions.map((v) => v.buildId).join(', ')}`,
        EXIT.notFound,
      );
    const identity = `shipments deployment ${action}`;
    if (action === 'shipments') {
      const shipments = await shipmentsOnBuild(session.client, name, buildId!, limit);
      if (values.json) println(io.stdout, JSON.stringify({ deployment: name, buildId, ...shipments }));
      else {
        println(io.stdout, `${shipments.total} open shipment(s) on ${name} build ${buildId}`);
        for (const [phase, n] of Object.entries(shipments.byStatus)) println(io.stdout, `  ${phase}: ${n}`);
        if (shipments.oldest.length > 0)
          println(
            io.stdout,
            `\n${table([['WORKFLOW ID', 'PHASE', 'STARTED'], ...shipments.oldest.map((s) => [s.workflowId, s.status ?? '', s.startedAt])])}`,
          );
      }
      return EXIT.ok;
    }
    if (action === 'promote') {
      await untilQueuesPolled(() =>
        ramp !== undefined && ramp < 100
          ? setRampingVersion(session.client, name, buildId!, ramp, identity)
          : setCurrentVersion(session.client, name, buildId!, identity),
      );
      println(
        io.stdout,
        ramp !== undefined && ramp < 100
          ? `${name}: ${ramp}% of new workflows go to build ${buildId}`
          : `${name}: build ${buildId} is current`,
      );
      return EXIT.ok;
    }
    return await retire(session.client, view, buildId!, identity, io);
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(err.message);
    throw err;
  } finally {
    await session.close();
  }
}

/** How long a promotion waits for the new build's workers to poll every queue the current build's do. */
const QUEUES_WAIT_MS = 30_000;

/**
 * The server refuses a build that does not (yet) poll a task queue the current one polls: those
 * queues would be left without versioned workers. A worker just started registers its queues
 * over a few seconds: asked again meanwhile, then the refusal says what to do.
 */
async function untilQueuesPolled(promote: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + QUEUES_WAIT_MS;
  for (;;) {
    try {
      return await promote();
    } catch (err) {
      const missing = err instanceof Error && err.message.includes('missing active task queues');
      if (!missing) throw err;
      if (Date.now() > deadline)
        throw new CliError(
          `${err.message}\nThe new build's workers do not poll every task queue the current build's do (the live ` +
            "shipments' or the shop pulls' queue): start them with the same SHOP_CONNECTORS, or wait until they poll.",
          EXIT.rejected,
        );
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

function nameFromEnv(env: Io['env']): string {
  try {
    return deploymentNameOf(env);
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(err.message);
    throw err;
  }
}

async function status(client: Parameters<typeof openOnBuild>[0], view: DeploymentView, json: boolean, io: Io): Promise<ExitCode> {
  const builds = [];
  for (const v of view.versions) builds.push({ ...v, open: await openOnBuild(client, view.name, v.buildId) });
  if (json) {
    println(io.stdout, JSON.stringify({ deployment: view.name, current: view.current, ramping: view.ramping, builds }));
    return EXIT.ok;
  }
  println(
    io.stdout,
    `deployment ${view.name}: current ${view.current ?? '(none: unversioned workers)'}${view.ramping ? `, ramping ${view.ramping.buildId} at ${view.ramping.percent}%` : ''}`,
  );
  const rows = builds.map((b) => [
    b.buildId,
    b.status,
    b.drainage ?? '',
    String(b.open.shipmentWorkflow),
    String(b.open.trackingPollerWorkflow),
    String(b.open.shippingAccountWorkflow),
    String(b.open.shopPullWorkflow),
  ]);
  println(io.stdout, table([['BUILD', 'STATUS', 'DRAINAGE', 'SHIPMENTS', 'POLLERS', 'ACCOUNTS', 'PULLS'], ...rows]));
  return EXIT.ok;
}

async function retire(
  client: Parameters<typeof openOnBuild>[0],
  view: DeploymentView,
  buildId: string,
  identity: string,
  io: Io,
): Promise<ExitCode> {
  if (view.current === buildId || view.ramping?.buildId === buildId)
    throw new CliError(
      `build ${buildId} is ${view.current === buildId ? 'current' : 'ramping'}: promote another build first`,
      EXIT.rejected,
    );
  const open = await openOnBuild(client, view.name, buildId);
  const running = Object.entries(open).filter(([type, n]) => n > 0 && PINNED_TYPES.includes(type as (typeof PINNED_TYPES)[number]));
  if (running.length > 0)
    throw new CliError(
      `build ${buildId} still runs ${running.map(([type, n]) => `${n} ${type}`).join(', ')}: keep its workers until it drains (see: npm run cli -- deployment shipments ${buildId})`,
      EXIT.rejected,
    );
  try {
    await deleteVersion(client, view.name, buildId, identity);
  } catch (err) {
    throw new CliError(
      `build ${buildId} has drained, but the server keeps it: ${err instanceof Error ? err.message : String(err)} (stop its workers; the server forgets their pollers after a few minutes)`,
      EXIT.rejected,
    );
  }
  println(io.stdout, `${view.name}: build ${buildId} retired`);
  return EXIT.ok;
}
