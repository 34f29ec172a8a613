/** Wires a Temporal worker for shipments: workflow code, activities and their API client. */
import { liveShipmentTaskQueue, type ShipmentPriorities } from '../domain/priority';
import { priorityHeaderInterceptor } from '../activities/priority-header';
import { bundleFromSource } from '../worker-deployment/workflow-bundle';
import { Worker, type NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import type { DataConverter, WorkerDeploymentVersion } from '@temporalio/common';
import { versionedWorker } from './deployment-version';
import { createActivities } from '../activities/shipping-api';
import { singleAccount, type AccountDirectory } from '../shipping-accounts/directory';
import { retryAfterMs } from '../workflow-definitions/activity-failures';
import { AccountPacer, pacedCalls, UNPACED, type CallPacing } from '../pacing/account-pacer';
import type { PacingSettings } from '../config/settings';
import { ShippingApiError } from '../shipping-api/errors';
import type { FleetRateLimits } from '../pacing/fleet-rate-limit';
import { createShopDeliveryActivities } from '../activities/shop-delivery';
import { createShopImportActivities } from '../activities/shop-import';
import { Client } from '@temporalio/client';
import { LabelOrderCheck } from '../shop-import/label-check';
import { OrderSource } from '../platforms/order-source';
import { PlatformConnections } from '../platforms/connections';
import { loadShopConnectors, type ShopConnectors } from '../platforms/connectors';
import { LIVE_WORKER_DEFAULTS, PULL_WORKER_DEFAULTS, TRACKING_POLLER_DEFAULTS, WORKER_DEFAULTS } from '../config/settings';
import { createTrackingPollerActivities, type TrackingPollerSettings } from '../activities/tracking-poller';
import { shopPullTaskQueue } from '../workflow-definitions/shop-pull';
import { ShippingApiClient, type ShippingApiClientOptions } from '../shipping-api/client';
import type { AccountOf } from '../config/shipping-accounts';
import { DEFAULT_TRACKING_POLICY, type TrackingPolicy } from '../domain/shipment';
import { shipmentMetricsInterceptor } from '../metrics/activity-interceptor';
import { tracingActivityInterceptors, tracingClientInterceptors, tracingSinks } from '../tracing/temporal';

export interface ShipmentWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** The single account `default`: options to build the client from, or a client the caller owns. Or `accounts`. */
  shippingApi?: ShippingApiClientOptions | ShippingApiClient;
  /** Every shipping account with its client and pacer (account-directory.ts); wins over `shippingApi`. */
  accounts?: AccountDirectory;
  /** The worker's tracking policy; unset fields take the defaults. */
  tracking?: Partial<TrackingPolicy>;
  /** Which shops get shipment events, and where; default: none. */
  shopConnectors?: ShopConnectors;
  /** A prebuilt bundle (tests, production); otherwise the workflows are bundled from source. */
  workflowBundle?: WorkflowBundleOption;
  maxActivitiesPerSecond?: number;
  maxTaskQueueActivitiesPerSecond?: number;
  /** Defaults: WORKER_DEFAULTS, sized for a 2 GB worker. */
  maxCachedWorkflows?: number;
  maxConcurrentWorkflowTaskExecutions?: number;
  maxConcurrentActivityTaskExecutions?: number;
  identity?: string;
  /** The codec and failure converter from codec/data-converter.ts; unset: plain JSON payloads. */
  dataConverter?: DataConverter;
  /** How API calls share the account's rate limit. Default: adaptive, no ceiling. */
  pacing?: PacingSettings;
  /** Relays 429s to and from the rest of the fleet (worker/fleet-rate-limit.ts); unset: this worker alone. */
  fleet?: FleetRateLimits;
  /** The process's paced calls, when its caller also makes calls of its own (else made from `pacing` and `fleet`). */
  calls?: CallPacing;
  /** The platform shops' connections, shared with the pull worker (createPullWorker) of the same process. */
  platforms?: PlatformConnections;
  /** The fleet's tracking pollers: shards and span (TRACKING_POLLER_DEFAULTS unless given). */
  trackingPollers?: TrackingPollerSettings;
  /**
   * Default true: a shipment still waiting in the per-shipment tracking activity moves to the
   * pollers at its next poll. False only for a worker running workflow code from before them
   * (the benchmark's baseline, the migration test), which would schedule the next wait at once.
   */
  handOverToPollers?: boolean;
  /** Which pulled orders' shipments go ahead of a backlog (LIVE_ORDER_MAX_AGE); default: changed in the last 15 minutes. */
  priorities?: ShipmentPriorities;
  /** Where the pulls run here start live shipments (a worker polls it: `createShipmentWorkers`); unset: on `taskQueue`. */
  liveTaskQueue?: string;
  /** A live worker's: the shipments' queue beside its own, whose tracking pollers its shipments join. */
  homeTaskQueue?: string;
  /** Run as this version of a Worker Deployment (worker/deployment-version.ts); unset: unversioned. */
  deployment?: WorkerDeploymentVersion;
}

export async function createShipmentWorker(options: ShipmentWorkerOptions): Promise<Worker> {
  const tracking: TrackingPolicy = { ...DEFAULT_TRACKING_POLICY, ...options.tracking };
  const shopConnectors = options.shopConnectors ?? loadShopConnectors({});
  const accounts = options.accounts ?? (await singleAccountOf(options));
  // One connection per platform shop: the import's reads and the write-back share a Shopify store's bucket.
  const platforms = options.platforms ?? new PlatformConnections();
  // The pull starts shipments and keeps its cursor in the shop's schedule; the pollers signal shipments.
  const client = tracedClient(options);
  const home = options.homeTaskQueue ?? options.taskQueue;
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: mergeActivities(
      mergeActivities(
        mergeActivities(
          createActivities(accounts, tracking, {
            shopConnectors,
            handOverToPollers: options.handOverToPollers ?? true,
            // A pulled order is checked with its shop right before its label (import.checkBeforeLabel).
            labelCheck: new LabelOrderCheck(new OrderSource(platforms), platforms),
          }),
          createShopDeliveryActivities(shopConnectors, platforms),
        ),
        // Also here: a pull started on this queue before pulls had one of their own finishes here.
        createShopImportActivities({
          connectors: shopConnectors,
          platforms,
          client,
          taskQueue: home,
          liveTaskQueue: options.liveTaskQueue,
          accountOf: accounts.accountOf,
          priorities: options.priorities,
        }),
      ),
      createTrackingPollerActivities({ accounts, client, settings: options.trackingPollers ?? TRACKING_POLLER_DEFAULTS, taskQueue: home }),
    ),
    // The project's counters (metrics/counters.ts), from each activity's result or failure.
    // And the priority a local activity's workflow gave it (the account pacer orders calls by it).
    // Tracing (tracing/): spans of activities run in an order's trace.
    interceptors: {
      activity: [shipmentMetricsInterceptor(tracking.terminalTags), priorityHeaderInterceptor, ...tracingActivityInterceptors()],
    },
    sinks: tracingSinks(),
    workflowBundle: options.workflowBundle ?? (await bundleFromSource()),
    // Explicit rather than the SDK's heap-derived cache: a waiting shipment needs no cache slot,
    // and one woken by a change replays a history of a few dozen events.
    maxCachedWorkflows: options.maxCachedWorkflows ?? WORKER_DEFAULTS.maxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: options.maxConcurrentWorkflowTaskExecutions ?? WORKER_DEFAULTS.maxConcurrentWorkflowTaskExecutions,
    maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions ?? WORKER_DEFAULTS.maxConcurrentActivityTaskExecutions,
    // The native layer rejects keys that are present but undefined: pass only what is set.
    ...definedOnly({
      maxActivitiesPerSecond: options.maxActivitiesPerSecond,
      maxTaskQueueActivitiesPerSecond: options.maxTaskQueueActivitiesPerSecond,
      identity: options.identity,
      dataConverter: options.dataConverter,
    }),
    ...versionedWorker(options.deployment),
  });
}

export type PullWorkerOptions = Pick<
  ShipmentWorkerOptions,
  | 'connection'
  | 'namespace'
  | 'taskQueue'
  | 'shopConnectors'
  | 'workflowBundle'
  | 'identity'
  | 'dataConverter'
  | 'platforms'
  | 'priorities'
  | 'liveTaskQueue'
  | 'deployment'
> & {
  /** The account a shop's new shipments name (the accounts' `accountOf`); unset: they name none (`default`). */
  accountOf?: AccountOf;
};

/**
 * The shop pulls' worker (workflow-definitions/shop-pull.ts, `shopPullTaskQueue`): a worker of
 * its own in the same process, with its own slots, so a pull never waits for a slot or a task
 * behind the shipments' backlog. `taskQueue` is the shipments' queue, where the pulls start them.
 */
export async function createPullWorker(options: PullWorkerOptions): Promise<Worker> {
  const shopConnectors = options.shopConnectors ?? loadShopConnectors({});
  const client = tracedClient(options);
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: shopPullTaskQueue(options.taskQueue),
    activities: createShopImportActivities({
      connectors: shopConnectors,
      platforms: options.platforms ?? new PlatformConnections(),
      client,
      taskQueue: options.taskQueue,
      liveTaskQueue: options.liveTaskQueue,
      accountOf: options.accountOf,
      priorities: options.priorities,
    }),
    workflowBundle: options.workflowBundle ?? (await bundleFromSource()),
    ...PULL_WORKER_DEFAULTS,
    ...definedOnly({ identity: options.identity, dataConverter: options.dataConverter }),
    // Tracing (tracing/): the pulls' activities start each order's trace.
    interceptors: { activity: tracingActivityInterceptors() },
    sinks: tracingSinks(),
    ...versionedWorker(options.deployment),
  });
}

/**
 * The shipments' worker and, with `serveLive`, the live shipments' (domain/priority.ts
 * `liveShipmentTaskQueue`): the same activities, accounts (one pacer per account, so live calls
 * still go first in it) and platform connections, on two queues with slots of their own. The live
 * queue carries the orders a shop placed lately, which in a fleet without a backlog are most of
 * them: its worker has the same slots; its cache is smaller (a shipment waiting for tracking needs
 * no place in it). Give `createPullWorker` the same `liveTaskQueue`. Without `serveLive` (no pulls
 * here, nothing running there) the process has one workflow thread fewer.
 */
export async function createShipmentWorkers(
  options: ShipmentWorkerOptions,
  serveLive = true,
): Promise<{ shipments: Worker; live: Worker | undefined }> {
  const shared: ShipmentWorkerOptions = {
    ...options,
    accounts: options.accounts ?? (await singleAccountOf(options)),
    platforms: options.platforms ?? new PlatformConnections(),
    workflowBundle: options.workflowBundle ?? (await bundleFromSource()),
  };
  if (!serveLive) return { shipments: await createShipmentWorker(shared), live: undefined };
  const live = liveShipmentTaskQueue(options.taskQueue);
  return {
    shipments: await createShipmentWorker({ ...shared, liveTaskQueue: live }),
    live: await createShipmentWorker({
      ...shared,
      taskQueue: live,
      homeTaskQueue: options.taskQueue,
      liveTaskQueue: live,
      maxCachedWorkflows: LIVE_WORKER_DEFAULTS.maxCachedWorkflows,
    }),
  };
}

/** The account `default` from `shippingApi`, paced by `calls`, or by `pacing` and `fleet`. */
async function singleAccountOf(options: ShipmentWorkerOptions): Promise<AccountDirectory> {
  if (!options.shippingApi) throw new Error('createShipmentWorker: shippingApi or accounts is required');
  const api = options.shippingApi instanceof ShippingApiClient ? options.shippingApi : new ShippingApiClient(options.shippingApi);
  return singleAccount(api, options.calls ?? (await callPacing(options.pacing ?? { mode: 'adaptive' }, options.fleet)));
}

/**
 * The pacer of one account in this process (one per account and process: the account's limit
 * is shared by all its calls). It learns the fleet's recorded hold before it returns, so no call of a new process goes out
 * inside a Retry-After another process was given.
 */
export async function callPacing(
  settings: PacingSettings,
  fleet: FleetRateLimits | undefined,
  log?: { info(message: string, meta: Record<string, unknown>): void },
): Promise<CallPacing> {
  if (settings.mode === 'off') return UNPACED;
  const pacer = new AccountPacer({
    maxRate: settings.maxRequestsPerSecond,
    learnNoise: settings.noise !== 'off',
    fleetRelays: fleet !== undefined,
    onNoise: (share) =>
      log?.info(
        share === null ? 'shipping API: 429s no pace causes have stopped' : 'shipping API: 429s no pace causes',
        share === null ? {} : { share: Math.round(share * 1000) / 1000 },
      ),
    onFresh: (limited) => fleet?.reportFresh({ answers: 1, limited: limited ? 1 : 0 }),
    // One rate for the account, kept by the fleet; the ceiling is the account's, not this worker's.
    ...(fleet && settings.shares !== 'worker'
      ? {
          share: (report) =>
            fleet.pace({ ...report, ...(settings.maxRequestsPerSecond ? { maxRate: settings.maxRequestsPerSecond } : {}) }),
        }
      : {}),
  });
  await fleet?.subscribe((until) => pacer.recordFleetRateLimited(until));
  if (fleet) {
    pacer.seedFresh(fleet.recordedFresh());
    fleet.watchFresh(
      () => pacer.wantsFleetFresh(),
      (answers) => pacer.adoptFleetFresh(answers),
    );
  }
  return pacedCalls(
    pacer,
    {
      rateLimitOf: (err) => (err instanceof ShippingApiError && err.kind === 'rate_limited' ? { retryAfterMs: retryAfterMs(err) } : null),
      answered: (err) => err instanceof ShippingApiError && err.status !== undefined,
    },
    fleet ? (until) => fleet.publish(until) : undefined,
  );
}

/**
 * The activities' client: the pulls start shipments with it, each the root of its order's trace
 * when tracing is on (tracing/).
 */
function tracedClient(options: Pick<ShipmentWorkerOptions, 'connection' | 'namespace' | 'dataConverter'>): Client {
  const { connection, namespace, dataConverter } = options;
  return new Client({ connection, namespace, dataConverter, interceptors: tracingClientInterceptors() });
}

function definedOnly<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The worker's activities, from factories that must not share a name: a spread would let the
 * second silently replace the first, and the workflow would call code it never meant to.
 */
export function mergeActivities<A extends object, B extends object>(a: A, b: B): A & B {
  const clashes = Object.keys(b).filter((name) => Object.hasOwn(a, name));
  if (clashes.length > 0) throw new Error(`activity names defined twice: ${clashes.join(', ')}`);
  return { ...a, ...b };
}
