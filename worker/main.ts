/**
 * The long-lived worker process (`npm run worker`). Configuration comes from the environment
 * (see config/settings.ts); SIGINT/SIGTERM drain in-flight tasks and exit.
 */
import { NativeConnection, Runtime } from '@temporalio/worker';
import { ConfigError, loadWorkerSettings, WORKER_ENV_VARIABLES } from '../config/settings';
import { dataConverterFor } from '../codec/data-converter';
import { ShippingApiClient } from '../shipping-api/client';
import { createShipmentWorker } from './create-worker';
import { createLogger, PinoTemporalLogger } from './logger';

const HELP = `Usage: npm run worker

Runs the shipment worker: one durable workflow per shop order (label, order, tracking).
Configured by environment variables (required: SHIPPING_API_BASE_URL, SHIPPING_API_KEY,
SHIPPING_API_TOKEN); durations take 500ms, 20s, 5m, 3h, 7d:

${WORKER_ENV_VARIABLES.map((v) => `  ${v}`).join('\n')}

See README.md, "Worker configuration", for defaults and meanings.`;

async function main(): Promise<number> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  let settings;
  try {
    settings = loadWorkerSettings();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`${err.message}\n\nRun with --help for the list of settings.`);
      return 2;
    }
    throw err;
  }

  const logger = createLogger(settings.logLevel);
  Runtime.install({
    logger: new PinoTemporalLogger(logger),
    telemetryOptions: {
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      ...(settings.metricsBindAddress ? { metrics: { prometheus: { bindAddress: settings.metricsBindAddress } } } : {}),
    },
  });

  const connection = await NativeConnection.connect({ address: settings.temporal.address });
  const api = new ShippingApiClient(settings.shippingApi);
  const worker = await createShipmentWorker({
    connection,
    namespace: settings.temporal.namespace,
    taskQueue: settings.temporal.taskQueue,
    shippingApi: api,
    tracking: settings.tracking,
    workflowBundle: settings.workflowBundlePath ? { codePath: settings.workflowBundlePath } : undefined,
    maxActivitiesPerSecond: settings.maxActivitiesPerSecond,
    maxTaskQueueActivitiesPerSecond: settings.maxTaskQueueActivitiesPerSecond,
    maxCachedWorkflows: settings.maxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: settings.maxConcurrentWorkflowTaskExecutions,
    maxConcurrentActivityTaskExecutions: settings.maxConcurrentActivityTaskExecutions,
    dataConverter: dataConverterFor(settings.payloadEncryption),
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => logger.info({ signal }, 'shutting down: finishing in-flight tasks'));
  }
  logger.info(
    {
      temporal: settings.temporal,
      shippingApi: new URL(settings.shippingApi.baseUrl).origin,
      tracking: settings.tracking,
      cache: settings.maxCachedWorkflows,
      prebuiltBundle: Boolean(settings.workflowBundlePath),
      // The key id only: key material is never logged.
      payloadEncryption: settings.payloadEncryption ? { activeKeyId: settings.payloadEncryption.activeKeyId } : 'off',
    },
    'worker started',
  );
  try {
    await worker.run(); // resolves after a graceful shutdown (the Runtime handles the signals)
  } finally {
    await api.close();
    await connection.close();
  }
  logger.info('worker stopped');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error('worker failed:', err);
    process.exit(1);
  },
);
