/** Wires a Temporal worker for shipments: workflow code, activities and their API client. */
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import { createActivities } from '../activities';
import { ShippingApiClient, type ShippingApiClientOptions } from '../shipping-api/client';
import { DEFAULT_TRACKING_POLICY, type TrackingPolicy } from '../workflows/definitions';

export interface ShipmentWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Options to build the client from, or a client the caller owns. */
  shippingApi: ShippingApiClientOptions | ShippingApiClient;
  /** The worker's tracking policy; unset fields take the defaults. */
  tracking?: Partial<TrackingPolicy>;
  /** A prebuilt bundle (tests, production); otherwise the workflows are bundled from source. */
  workflowBundle?: WorkflowBundleOption;
  maxActivitiesPerSecond?: number;
  maxTaskQueueActivitiesPerSecond?: number;
  identity?: string;
}

export async function createShipmentWorker(options: ShipmentWorkerOptions): Promise<Worker> {
  const api = options.shippingApi instanceof ShippingApiClient ? options.shippingApi : new ShippingApiClient(options.shippingApi);
  const tracking: TrackingPolicy = { ...DEFAULT_TRACKING_POLICY, ...options.tracking };
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: createActivities(api, tracking),
    workflowBundle: options.workflowBundle ?? (await bundleFromSource()),
    // The native layer rejects keys that are present but undefined: pass only what is set.
    ...definedOnly({
      maxActivitiesPerSecond: options.maxActivitiesPerSecond,
      maxTaskQueueActivitiesPerSecond: options.maxTaskQueueActivitiesPerSecond,
      identity: options.identity,
    }),
  });
}

function definedOnly<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Bundles the workflows at start (development); webpack's module listing is kept out of the logs. */
function bundleFromSource(): Promise<WorkflowBundleOption> {
  const runtimeLogger = Runtime.instance().logger;
  return bundleWorkflowCode({
    workflowsPath: path.join(__dirname, '..', 'workflows'),
    logger: new DefaultLogger('WARN', (entry) => runtimeLogger.log(entry.level, entry.message, entry.meta)),
  });
}
