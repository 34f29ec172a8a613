/**
 * The long-lived worker process (`npm run worker`). Configuration comes from the environment
 * (see config/settings.ts); SIGINT/SIGTERM drain in-flight tasks and exit.
 */
import { NativeConnection, Runtime } from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { ConfigError, loadWorkerSettings, workerSettingsHelp } from '../config/settings';
import { dataConverterFor } from '../codec/data-converter';
import {
  describeTemporal,
  explainConnectFailure,
  loadTemporalSettings,
  TEMPORAL_CONNECTION_HELP,
  temporalTarget,
} from '../config/temporal-connection';
import { loadShippingAccounts } from '../config/shipping-accounts';
import type { Courier } from '../shipping-api/contract';
import { CredentialsError } from '../shipping-api/credentials';
import { loadShopConnectors, type ShopConnectors } from '../platforms/connectors';
import { applySchedule, importShops, pullNow, RecentSchedules, triggerShop } from '../shop-import/schedule';
import { startShopTrigger, type ShopTrigger } from '../shop-trigger';
import { shopPullScheduleId } from '../workflow-definitions/shop-pull';
import { closeWebhookDispatcher } from '../platforms/webhook/write-back';
import { openAccounts, type OpenAccounts } from './account-directory';
import { createPullWorker, createShipmentWorkers } from './create-worker';
import { liveShipmentTaskQueue } from '../domain/priority';
import { PlatformConnections } from '../platforms/connections';
import { createLogger, logDestination, PinoTemporalLogger } from '../logging/logger';
import { secretsOfEnv } from '../logging/log-error';
import { watchAttention } from '../metrics/attention-gauge';
import { TrackingReconciler } from '../tracking-poller/reconciler';
import { knownShops, registry } from '../metrics/counters';
import { payloadsInClearWatch } from '../metrics/payloads-in-clear';
import { watchCourierCodes } from '../metrics/courier-labels';
import { startHealthServer, WorkerReadiness, type HealthServer } from '../metrics/health-server';
import { loadTracingSettings, startTracingFromEnv, TRACING_HELP } from '../config/tracing';
import { deploymentSettingsHelp, loadDeploymentSettings } from '../config/deployment';
import { becomeCurrent, workflowCodeAndVersion } from './deployment-version';
import { allocatorWarning, currentAllocator } from './allocator';

/** The courier read for the metric label waits its turn under the account's pace, but not forever. */
const COURIER_READ_TIMEOUT_MS = 30_000;

const HELP = `Usage: npm run worker

Runs the shipment worker: one durable workflow per shop order (label, order, tracking).
Configured by environment variables; durations take 500ms, 20s, 5m, 3h, 7d:

${workerSettingsHelp()}

Rollouts (docs/production.md, "Rolling out a new build"):
${deploymentSettingsHelp()
  .map(([name, fallback, meaning]) => `  ${name}  ${meaning} (${fallback})`)
  .join('\n')}

Shop sync (docs/shop-sync-delivery.md): SHOP_CONNECTORS (JSON) or SHOP_CONNECTORS_FILE (a JSON file)
maps shop ids to their signed-webhook endpoint and secrets; shops without one get no events.

${TEMPORAL_CONNECTION_HELP}

${TRACING_HELP}

See docs/configuration.md and docs/production.md, "Connecting to a Temporal cluster or Temporal
Cloud", for defaults and meanings.`;

async function main(): Promise<number> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  // Both parts are read before failing, so one run names every wrong setting.
  const problems: ConfigError['problems'] = [];
  const load = <T>(read: () => T): T | undefined => {
    try {
      return read();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
      return undefined;
    }
  };
  const settings = load(() => loadWorkerSettings());
  const temporal = load(() => loadTemporalSettings());
  const shopConnectors = load(() => loadShopConnectors());
  const deployment = load(() => loadDeploymentSettings());
  // Its default account's variables were checked with the settings above: report them once.
  const accounts = settings ? load(() => loadShippingAccounts(process.env, settings.pacing)) : undefined;
  const traced = load(() => loadTracingSettings() !== undefined);
  if (!settings || !temporal || !shopConnectors || !accounts || !deployment || traced === undefined) {
    console.error(`${new ConfigError(problems).message}\n\nRun with --help for the list of settings.`);
    return 2;
  }

  const logger = createLogger(settings.logLevel, logDestination(settings.logFormat), secretsOfEnv(process.env));
  try {
    Runtime.install({
      logger: new PinoTemporalLogger(logger),
      telemetryOptions: {
        logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
        ...(settings.metricsBindAddress ? { metrics: { prometheus: { bindAddress: settings.metricsBindAddress } } } : {}),
      },
    });
  } catch (err) {
    return startupError('METRICS_BIND_ADDRESS', `cannot serve the SDK's metrics on ${settings.metricsBindAddress}`, err);
  }

  // Before the workers and their clients, which take it when they are made (tracing/).
  const tracing = await startTracingFromEnv('shipping-sync-worker');

  // Up before connecting, so probes get a 503 while the worker starts.
  const readiness = new WorkerReadiness();
  let health: HealthServer | undefined;
  if (settings.health) {
    try {
      health = await startHealthServer({ ...settings.health, readiness, registry, logger });
    } catch (err) {
      const { host, port } = settings.health;
      return startupError('WORKER_HEALTH_HOST/WORKER_HEALTH_PORT', `cannot listen on ${host}:${port}`, err);
    }
  }

  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect(temporal.connection);
  } catch (err) {
    console.error(`cannot connect to Temporal at ${temporalTarget(temporal)}: ${await explainConnectFailure(temporal, err)}`);
    return 1;
  }
  const dataConverter = dataConverterFor(
    settings.payloadEncryption,
    payloadsInClearWatch((message, meta) => logger.warn(meta, message)),
  );
  let directory: OpenAccounts;
  try {
    directory = await openAccounts(accounts, {
      temporal: { client: new Client({ connection, namespace: temporal.namespace, dataConverter }), taskQueue: temporal.taskQueue },
      log: {
        warn: (message, meta) => logger.warn(meta ?? {}, message),
        info: (message, meta) => logger.info(meta ?? {}, message),
        debug: (message, meta) => logger.debug(meta ?? {}, message),
      },
    });
  } catch (err) {
    if (!(err instanceof CredentialsError)) throw err;
    await connection.close();
    return startupError('SHIPPING_ACCOUNTS', 'cannot read the credentials', err);
  }
  // Paced like every other call: a worker restarted inside the fleet's Retry-After waits for it.
  const courierCodes = watchCourierCodes(
    () => everyCourier(directory),
    (message, meta) => logger.warn(meta, message),
  );
  const platforms = new PlatformConnections();
  const client = new Client({ connection, namespace: temporal.namespace, dataConverter });
  const pulls = importShops(shopConnectors).length > 0;
  const liveTaskQueue = liveShipmentTaskQueue(temporal.taskQueue);
  // Live shipments on a queue and slots of their own: a backlog's tasks never hold the slot a live order waits for.
  // Served where this worker's pulls start them, or while shipments started there before still run.
  const serveLive = pulls || (await runningOn(client, liveTaskQueue, logger));
  // One bundle for every worker here; a versioned worker's build id comes from its code.
  const { code, version } = await workflowCodeAndVersion(deployment, settings.workflowBundlePath);
  const { shipments: worker, live: liveWorker } = await createShipmentWorkers(
    {
      connection,
      namespace: temporal.namespace,
      taskQueue: temporal.taskQueue,
      accounts: directory,
      tracking: settings.tracking,
      trackingPollers: settings.trackingPollers,
      shopConnectors,
      workflowBundle: { code },
      deployment: version,
      maxActivitiesPerSecond: settings.maxActivitiesPerSecond,
      maxTaskQueueActivitiesPerSecond: settings.maxTaskQueueActivitiesPerSecond,
      maxCachedWorkflows: settings.maxCachedWorkflows,
      maxConcurrentWorkflowTaskExecutions: settings.maxConcurrentWorkflowTaskExecutions,
      maxConcurrentActivityTaskExecutions: settings.maxConcurrentActivityTaskExecutions,
      dataConverter,
      platforms,
      priorities: settings.priorities,
    },
    serveLive,
  );
  // Pulls on a queue and slots of their own: a shipment backlog never delays an order's import.
  const pullWorker = pulls
    ? await createPullWorker({
        connection,
        namespace: temporal.namespace,
        taskQueue: temporal.taskQueue,
        shopConnectors,
        workflowBundle: { code },
        deployment: version,
        dataConverter,
        platforms,
        accountOf: directory.accountOf,
        priorities: settings.priorities,
        liveTaskQueue,
      })
    : undefined;
  readiness.watch({ shipments: worker, live: liveWorker, pulls: pullWorker }, connection);
  // The alerts' figures: per configured shop, and what waits for a person (metrics/).
  knownShops(shopConnectors.shops);
  watchAttention(client, (message, meta) => logger.warn(meta, message));
  const reconciler = new TrackingReconciler({
    client,
    maxLabels: settings.trackingPollers.maxLabels,
    log: { warn: (message, meta) => logger.warn(meta, message), info: (message, meta) => logger.info(meta, message) },
  });
  reconciler.start(settings.trackingReconcileMs);
  await applyImportSchedules(client, shopConnectors, temporal.taskQueue, logger);
  let trigger: ShopTrigger | undefined;
  const schedules = new RecentSchedules();
  if (settings.shopTrigger) {
    try {
      trigger = await startShopTrigger({
        ...settings.shopTrigger,
        shops: (shop) => triggerShop(shopConnectors, shop),
        // A pull of its own at once, not the schedule's run behind the running pull.
        trigger: (shop, { signal, ...wanted }) =>
          client.withAbortSignal(signal, async () => void (await pullNow(client, shop, schedules, wanted))),
        logger,
      });
    } catch (err) {
      const { host, port } = settings.shopTrigger;
      return startupError('SHOP_TRIGGER_HOST/SHOP_TRIGGER_PORT', `cannot listen on ${host}:${port}`, err);
    }
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => logger.info({ signal }, 'shutting down: finishing in-flight tasks'));
  }
  for (const warning of shopConnectors.warnings) logger.warn(warning);
  logger.info(
    {
      temporal: describeTemporal(temporal),
      shippingAccounts: accounts.names.map((name) => ({
        name,
        api: new URL(accounts.get(name)!.baseUrl).origin,
        auth: accounts.get(name)!.auth,
      })),
      tracking: settings.tracking,
      pacing: settings.pacing,
      shopsWithConnector: shopConnectors.shops,
      cache: settings.maxCachedWorkflows,
      // jemalloc (the Dockerfile's, `npm start`'s and `npm run worker`'s when installed) holds far less after a peak.
      allocator: currentAllocator(),
      prebuiltBundle: Boolean(settings.workflowBundlePath),
      deployment: version ?? 'unversioned',
      // The key id only: key material is never logged.
      payloadEncryption: settings.payloadEncryption ? { activeKeyId: settings.payloadEncryption.activeKeyId } : 'off',
      // Not the endpoint: its URL or headers may hold a collector's credentials.
      tracing: traced ? 'otlp' : 'off',
    },
    'worker started',
  );
  const allocatorAdvice = allocatorWarning(currentAllocator(), process.platform);
  if (allocatorAdvice) logger.warn({ allocator: 'system' }, allocatorAdvice);
  const stopping = new AbortController();
  try {
    // Both resolve after a graceful shutdown (the Runtime handles the signals for every worker).
    const running = Promise.all([worker.run(), liveWorker?.run(), pullWorker?.run()]).finally(() => stopping.abort());
    running.catch(() => undefined); // awaited below; not unhandled while the promotion runs
    if (deployment.versioning && version) await becomeCurrent(client, deployment, version, logger, stopping.signal);
    await running;
  } finally {
    courierCodes.close();
    await reconciler.stop();
    await trigger?.close();
    await health?.close();
    await directory.close();
    await closeWebhookDispatcher();
    await connection.close();
    // Sends the spans still batched.
    await tracing?.shutdown();
  }
  logger.info('worker stopped');
  return 0;
}

/**
 * Each shop with import settings gets its pull schedule (created, or brought to the settings).
 * A failure is logged, not fatal: the worker still runs the shipments, and the next start tries again.
 */
async function applyImportSchedules(
  client: Client,
  connectors: ShopConnectors,
  taskQueue: string,
  logger: ReturnType<typeof createLogger>,
): Promise<void> {
  for (const connector of importShops(connectors)) {
    try {
      const outcome = await applySchedule(client, connector, taskQueue);
      logger.info({ shop: connector.shop, schedule: shopPullScheduleId(connector.shop), outcome }, 'shop pull schedule applied');
    } catch (err) {
      logger.warn(
        { shop: connector.shop, err: err instanceof Error ? err.message : String(err) },
        'could not apply the shop pull schedule',
      );
    }
  }
}

/** Whether shipments still run on `taskQueue`; true when visibility cannot tell (serving costs a thread, not serving strands them). */
async function runningOn(client: Client, taskQueue: string, logger: ReturnType<typeof createLogger>): Promise<boolean> {
  try {
    return (await client.workflow.count(`TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`)).count > 0;
  } catch (err) {
    logger.warn(
      { taskQueue, err: err instanceof Error ? err.message : String(err) },
      "could not count the live queue's shipments: serving it",
    );
    return true;
  }
}

/** Every account's couriers (the metric label's closed set), each read under its account's pace. */
async function everyCourier(directory: OpenAccounts): Promise<Courier[]> {
  const lists = await Promise.all(
    directory
      .clients()
      .map(({ api, pacing }) =>
        pacing.run('order', (signal) => api.listCouriers({ signal }), AbortSignal.timeout(COURIER_READ_TIMEOUT_MS)),
      ),
  );
  return lists.flat();
}

/** A setting that validated but cannot be used on this machine: one line naming it, exit 2 (as for invalid configuration). */
function startupError(variable: string, what: string, err: unknown): number {
  const reason = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
  console.error(`${new ConfigError([{ variable, message: `${what}: ${reason}` }]).message}`);
  return 2;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error('worker failed:', err);
    process.exit(1);
  },
);
