/**
 * One integration harness: a real Temporal dev server, the local fake shipping API over
 * loopback, and an in-process shipment worker on its own task queue.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { startFakeShippingApi, type FakeShippingApi, type FakeShippingApiOptions } from '../../fake-shipping-api/server';
import { createPullWorker, createShipmentWorker } from '../../worker/create-worker';
import { importShops } from '../../shop-import/schedule';
import type { ShippingApiClientOptions } from '../../shipping-api/client';
import type { ShopConnectors } from '../../platforms/connectors';
import type { TrackingPolicy } from '../../domain/shipment';
import { createTestEnv, getWorkflowBundle } from './temporal-env';

export const TEST_CREDENTIALS = { apiKey: 'test-key-5b1f0c', apiToken: 'test-token-9e77d2' };

/** Fast cadence for tests: the fake advances tracking every 150 ms, the worker polls every 200 ms in every stage. */
export const FAST_TRACKING: Partial<TrackingPolicy> = { pollIntervalMs: 200, pollIntervalsMs: {}, correctionTimeoutMs: 60_000 };
export const FAKE_TRACKING_STEP_MS = 150;

export interface Harness {
  env: TestWorkflowEnvironment;
  fake: FakeShippingApi;
  taskQueue: string;
  worker: Worker;
  shippingEnv: Record<string, string>;
  stop(): Promise<void>;
}

export async function startHarness(
  opts: {
    fake?: FakeShippingApiOptions;
    tracking?: Partial<TrackingPolicy>;
    env?: TestWorkflowEnvironment;
    shopConnectors?: ShopConnectors;
  } = {},
): Promise<Harness> {
  const env = opts.env ?? (await createTestEnv());
  const fake = await startFakeShippingApi({
    port: 0,
    trackingStepMs: FAKE_TRACKING_STEP_MS,
    accounts: [{ name: 'main', ...TEST_CREDENTIALS }],
    ...opts.fake,
  });
  const { taskQueue, worker, stop } = await runWorker(
    env,
    { baseUrl: fake.baseUrl, ...TEST_CREDENTIALS },
    opts.tracking,
    opts.shopConnectors,
  );
  return {
    env,
    fake,
    taskQueue,
    worker,
    shippingEnv: {
      SHIPPING_API_BASE_URL: fake.baseUrl,
      SHIPPING_API_KEY: TEST_CREDENTIALS.apiKey,
      SHIPPING_API_TOKEN: TEST_CREDENTIALS.apiToken,
    },
    async stop() {
      await stop();
      await fake.close();
      if (!opts.env) await env.teardown();
    },
  };
}

async function runWorker(
  env: TestWorkflowEnvironment,
  shippingApi: ShippingApiClientOptions,
  tracking?: Partial<TrackingPolicy>,
  shopConnectors?: ShopConnectors,
) {
  const taskQueue = `shipments-${randomUUID()}`;
  const worker = await createShipmentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    shippingApi,
    tracking: { ...FAST_TRACKING, ...tracking },
    shopConnectors,
    workflowBundle: await getWorkflowBundle(),
  });
  // Shops that import get the pulls' worker too, as in the worker process.
  const pulls =
    shopConnectors && importShops(shopConnectors).length > 0
      ? await createPullWorker({
          connection: env.nativeConnection,
          namespace: 'default',
          taskQueue,
          shopConnectors,
          workflowBundle: await getWorkflowBundle(),
        })
      : undefined;
  const running = Promise.all([worker.run(), pulls?.run()]);
  return {
    taskQueue,
    worker,
    async stop() {
      worker.shutdown();
      pulls?.shutdown();
      await running;
    },
  };
}

/** A second worker on its own task queue against the same fake, e.g. with other credentials. */
export function extraWorker(h: Harness, credentials: { apiKey: string; apiToken: string }) {
  return runWorker(h.env, { baseUrl: h.fake.baseUrl, ...credentials });
}
