/**
 * Shop sync: what telling the shop costs per shipment (history, workflow tasks, actions) against
 * the same shipments for a shop without a connector, and how a shop catches up after an outage:
 * delivery lag once it is back and events per second, against a plain script that POSTs the same
 * events straight to the same receiver (the ceiling of the HTTP path), in the same run.
 *
 * The outage is time-scaled: `--outage` seconds of downtime with the connector's maxBackoff
 * scaled by the same factor as one hour is to the outage (60 s and 5 s stand for 1 h and 5 min).
 */
import { inProcessWorker } from './in-process-worker';
import { randomBytes } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi } from '../fake-shipping-api/server';
import { startShopReceiver } from '../shop-receiver/server';
import { DEFAULT_MAX_BACKOFF, loadShopConnectors } from '../platforms/connectors';
import { makeShipmentEvent, type ShipmentEvent } from '../domain/events';
import { closeWebhookDispatcher, deliverWebhook } from '../platforms/webhook/write-back';
import { getWorkflowBundle, installQuietRuntime } from '../test/helpers/temporal-env';
import { parseDuration } from '../config/settings';
import { stateQuery, type ShipmentOutcome } from '../workflow-definitions/shipment';
import { oneShipment } from './history';
import { benchOrder } from './orders';
import { BENCH_ACCOUNTS, median, sleep, type DevServer } from './stack';

const HOUR_MS = 3_600_000;

export interface ShopSyncCostRow {
  shop: 'with connector' | 'no connector';
  shipments: number;
  eventsPerShipment: number;
  workflowTasksPerShipment: number;
  actionsPerShipment: number;
  shopEventsPerShipment: number;
}

export interface ShopSyncOutageRow {
  shipments: number;
  events: number;
  outageSeconds: number;
  /** What the outage and maxBackoff stand for: outage × scale = 1 h. */
  scale: number;
  maxBackoffSeconds: number;
  /** From the shop coming back to the last event of an order arriving: p50 and max over orders. */
  lagP50Seconds: number;
  lagMaxSeconds: number;
  /** The same, times the scale: the lag after a real one-hour outage with the default maxBackoff. */
  scaledLagMaxMinutes: number;
  /** Events per second from the first to the last arrival after the shop came back (the backoff wait before the first is in the lag). */
  catchUpEventsPerSecond: number;
  /** The plain script: the same events POSTed straight to the receiver, each order in sequence. */
  plainScriptEventsPerSecond: number;
  duplicates: number;
  gapsOrOutOfOrder: number;
  missing: number;
}

export async function shopSyncScenario(
  server: DevServer,
  opts: { shipments: number; costShipments: number; outageSeconds: number },
  log: (m: string) => void,
): Promise<{ cost: ShopSyncCostRow[]; outage: ShopSyncOutageRow }> {
  installQuietRuntime();
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const receiver = await startShopReceiver({ secrets: [secret] });
  const fake = await startFakeShippingApi({ port: 0, trackingStepPolls: 1, accounts: BENCH_ACCOUNTS });
  const scale = HOUR_MS / (opts.outageSeconds * 1000);
  const maxBackoffMs = Math.max(1000, Math.round(parseDuration(DEFAULT_MAX_BACKOFF)! / scale));
  const shopConnectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: `${maxBackoffMs}ms`,
      bench: { type: 'webhook', url: receiver.webhookUrl('bench'), secrets: [secret] },
    }),
  });
  const connection = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-shop-sync-${Date.now()}`;
  const worker = await inProcessWorker({
    connection,
    taskQueue,
    apiBaseUrl: fake.baseUrl,
    pollIntervalMs: 10,
    shopConnectors,
    workflowBundle: await getWorkflowBundle(),
  });
  const stamp = Date.now();
  try {
    return await worker.runUntil(async () => {
      // 1. Cost per shipment: the same deliveries with and without a connector.
      const cost: ShopSyncCostRow[] = [];
      for (const [label, shop] of [
        ['with connector', 'bench'],
        ['no connector', 'bench-no-connector'],
      ] as const) {
        const measured = await Promise.all(
          Array.from({ length: opts.costShipments }, (_, i) =>
            oneShipment(server, taskQueue, { ...benchOrder(`C-${shop}-${i}-${stamp}`), shop }),
          ),
        );
        const emitted = await Promise.all(
          measured.map(
            async (m) => ((await server.client.workflow.getHandle(m.workflowId).result()) as ShipmentOutcome).shopSync?.emitted ?? 0,
          ),
        );
        cost.push({
          shop: label,
          shipments: opts.costShipments,
          eventsPerShipment: median(measured.map((m) => m.events)),
          workflowTasksPerShipment: median(measured.map((m) => m.workflowTasks)),
          actionsPerShipment: median(measured.map((m) => m.actions)),
          shopEventsPerShipment: median(emitted),
        });
        log(`shop-sync cost, ${label}: ${cost.at(-1)!.eventsPerShipment} history events per shipment`);
      }

      // 2. Outage: the shop is down while every shipment runs its course, then comes back.
      receiver.reset();
      await receiver.setFaults({ down: true });
      const wentDown = Date.now();
      const handles = await Promise.all(
        Array.from({ length: opts.shipments }, async (_, i) => {
          const started = await startShipment(server.client, taskQueue, benchOrder(`O-${i}-${stamp}`));
          return server.client.workflow.getHandle(started.workflowId);
        }),
      );
      const emitted = new Map<string, number>();
      for (const handle of handles) {
        for (;;) {
          const state = await handle.query(stateQuery);
          if (state.outcome !== null) {
            emitted.set(state.orderId, state.shopSync?.emitted ?? 0);
            break;
          }
          await sleep(200);
        }
      }
      log(
        `shop-sync outage: all ${opts.shipments} shipments ended while the shop was down, ${Math.round((Date.now() - wentDown) / 1000)} s in`,
      );
      await sleep(Math.max(0, wentDown + opts.outageSeconds * 1000 - Date.now()));
      await receiver.setFaults({ down: false });
      const cameBack = Date.now();
      const total = [...emitted.values()].reduce((a, b) => a + b, 0);
      await Promise.all(handles.map((h) => h.result()));
      const orders = receiver.state().orders;
      const arrivals = receiver.state().events.map((e) => Date.parse(e.receivedAt));
      const lags = orders.map((o) => (Date.parse(o.lastReceivedAt) - cameBack) / 1000);
      const first = Math.min(...arrivals);
      const last = Math.max(...arrivals);

      // The plain script: the same number of events per order, POSTed in sequence per order.
      receiver.reset();
      const plainStarted = Date.now();
      await Promise.all(
        [...emitted.entries()].map(async ([orderId, n]) => {
          for (let sequence = 1; sequence <= n; sequence++) {
            const event: ShipmentEvent = makeShipmentEvent({
              type: 'tracking.updated',
              sequence,
              occurredAt: new Date().toISOString(),
              shop: 'bench',
              orderId: `plain-${orderId}`,
              data: { tag: 'InTransit', subtag: null, subtagMessage: null, trackingNumber: null, lastCheckpoint: null },
            });
            const result = await deliverWebhook({ url: receiver.webhookUrl('bench'), secrets: [secret], event });
            if (result.kind !== 'delivered') throw new Error(`plain script: ${JSON.stringify(result)}`);
          }
        }),
      );
      const plainSeconds = (Date.now() - plainStarted) / 1000;

      const outage: ShopSyncOutageRow = {
        shipments: opts.shipments,
        events: total,
        outageSeconds: opts.outageSeconds,
        scale,
        maxBackoffSeconds: maxBackoffMs / 1000,
        lagP50Seconds: round(median(lags)),
        lagMaxSeconds: round(Math.max(...lags)),
        scaledLagMaxMinutes: round((Math.max(...lags) * scale) / 60),
        catchUpEventsPerSecond: round(total / Math.max(0.001, (last - first) / 1000)),
        plainScriptEventsPerSecond: round(total / plainSeconds),
        duplicates: orders.reduce((a, o) => a + o.duplicates, 0),
        gapsOrOutOfOrder: orders.filter((o) => o.gap || o.outOfOrder).length,
        missing: total - arrivals.length,
      };
      log(`shop-sync outage: lag p50 ${outage.lagP50Seconds} s, max ${outage.lagMaxSeconds} s; ${outage.catchUpEventsPerSecond} events/s`);
      return { cost, outage };
    });
  } finally {
    await connection.close();
    await fake.close();
    await receiver.close();
    await closeWebhookDispatcher();
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
