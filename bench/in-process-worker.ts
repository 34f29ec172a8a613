/**
 * A shipment worker in the bench's own process (history, latency, shop sync, shop platforms):
 * the default namespace, the fake API's bench credentials, one tracking interval in every stage.
 */
import type { NativeConnection } from '@temporalio/worker';
import { createShipmentWorker, type ShipmentWorkerOptions } from '../worker/create-worker';
import { BENCH_CREDENTIALS } from './stack';

export function inProcessWorker(
  o: { connection: NativeConnection; taskQueue: string; apiBaseUrl: string; pollIntervalMs: number } & Pick<
    ShipmentWorkerOptions,
    'workflowBundle' | 'shopConnectors' | 'handOverToPollers'
  >,
) {
  const { connection, taskQueue, apiBaseUrl, pollIntervalMs, ...rest } = o;
  return createShipmentWorker({
    connection,
    namespace: 'default',
    taskQueue,
    shippingApi: { baseUrl: apiBaseUrl, ...BENCH_CREDENTIALS },
    tracking: { pollIntervalMs, pollIntervalsMs: {} },
    ...rest,
  });
}
