/**
 * The shop delivery activity against the reference shop receiver over loopback, in the SDK's
 * mock activity context: when a retried delivery's next attempt is due.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createShopDeliveryActivities, type DeliverShopEventsInput } from '../activities/shop-delivery';
import { loadShopConnectors } from '../platforms/connectors';
import { startShopReceiver, type ShopReceiver } from '../shop-receiver/server';
import type { ShopEventDraft } from '../domain/shipment';
import { installQuietRuntime } from './helpers/temporal-env';

const SECRET = `whsec_${Buffer.from('shop-delivery-activity-test-key!').toString('base64')}`;
let receiver: ShopReceiver;
let activities: ReturnType<typeof createShopDeliveryActivities>;
/** A shop that answers with these statuses, in order, one per request. */
const answers: number[] = [];
let scripted: Server;

beforeAll(async () => {
  installQuietRuntime();
  receiver = await startShopReceiver({ secrets: [SECRET] });
  scripted = createServer((req, res) => {
    req.resume().on('end', () => res.writeHead(answers.shift() ?? 599).end());
  });
  await new Promise<void>((resolve) => scripted.listen(0, '127.0.0.1', resolve));
  const scriptedUrl = `http://127.0.0.1:${(scripted.address() as AddressInfo).port}/hooks`;
  const connectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: '20s',
      acme: { type: 'webhook', url: receiver.webhookUrl('acme'), secrets: [SECRET] },
      scripted: { type: 'webhook', url: scriptedUrl, secrets: [SECRET] },
      // Nothing listens there: a call would fail at once.
      site: { type: 'woocommerce', url: 'http://127.0.0.1:9', consumerKey: 'ck_x', consumerSecret: 'cs_x', timeout: '4s' },
    }),
  });
  activities = createShopDeliveryActivities(connectors);
});
afterAll(async () => {
  await receiver?.close();
  await new Promise((resolve) => scripted?.close(resolve));
});

const completed = (sequence: number): ShopEventDraft => ({
  sequence,
  occurredAt: '2026-11-21T10:00:00.000Z',
  type: 'shipment.completed',
  data: { outcome: 'delivered', reason: null, tag: 'Delivered', trackingNumber: 'JD0001' },
});

/** One regular (not local) attempt of the delivery, with what it recorded in its heartbeat. */
async function attempt(attemptNumber: number, heartbeatDetails: unknown, input: DeliverShopEventsInput, scheduledTimestampMs = Date.now()) {
  const env = new MockActivityEnvironment(
    { attempt: attemptNumber, heartbeatDetails, heartbeatTimeoutMs: 10_000, scheduledTimestampMs },
    { logger: new DefaultLogger('WARN') },
  );
  let recorded: unknown = heartbeatDetails;
  env.on('heartbeat', (d: unknown) => (recorded = d));
  const failure = await env.run(activities.deliverShopEvents, input).then(
    () => undefined,
    (e: ApplicationFailure) => e,
  );
  return { failure, recorded: recorded as { delivered: number; failuresInARow?: number } };
}

it("backs off by the shop's failures in a row, not by attempts lost with a worker or spent on 429s", async () => {
  const input = { shop: 'acme', orderId: `SD-${Date.now()}`, events: [completed(1)] };
  await receiver.setFaults({ failNext: [{ status: 500 }] });
  const first = await attempt(1, undefined, input);
  expect(first.failure).toMatchObject({ type: 'ShopUnavailable', nextRetryDelay: 1_000 });
  expect(first.recorded).toEqual({ delivered: 0, failuresInARow: 1 });

  // Attempts 2..6 were lost with their workers or answered 429: attempt 7 is the shop's second
  // failure, so 2 s, where the attempt number alone would have meant a minute.
  await receiver.setFaults({ failNext: [{ status: 502 }] });
  const seventh = await attempt(7, first.recorded, input);
  expect(seventh.failure).toMatchObject({ nextRetryDelay: 2_000 });
  expect(seventh.recorded).toEqual({ delivered: 0, failuresInARow: 2 });

  // A 429 waits its Retry-After and leaves the streak as it was, without a heartbeat.
  await receiver.setFaults({ failNext: [{ status: 429, retryAfter: '3' }] });
  const busy = await attempt(8, seventh.recorded, input);
  expect(busy.failure).toMatchObject({ type: 'ShopBusy', nextRetryDelay: 3_000 });
  expect(busy.recorded).toBe(seventh.recorded);

  // A long outage ends at the connector's maxBackoff (20 s: 1, 2, 4, 8, 16, 20): the failure
  // that reaches it is the last one recorded, so the rest of an outage sends no heartbeats.
  await receiver.setFaults({ failNext: [{ status: 500 }, { status: 500 }] });
  const sixth = await attempt(40, { delivered: 0, failuresInARow: 5 }, input);
  expect(sixth.failure).toMatchObject({ nextRetryDelay: 20_000 });
  expect(sixth.recorded).toEqual({ delivered: 0, failuresInARow: 6 });
  const late = await attempt(41, sixth.recorded, input);
  expect(late.failure).toMatchObject({ nextRetryDelay: 20_000 });
  expect(late.recorded).toBe(sixth.recorded);
});

it('an event acknowledged in the failing attempt ends the streak', async () => {
  // Event 1 is acknowledged, event 2 meets a 500: the streak of 4 before it starts again at 1.
  answers.push(204, 500);
  const input = { shop: 'scripted', orderId: `SD-${Date.now()}`, events: [completed(1), completed(2)] };
  const { failure, recorded } = await attempt(5, { delivered: 0, failuresInARow: 4 }, input);
  expect(failure).toMatchObject({ type: 'ShopUnavailable', message: expect.stringContaining('event 2'), nextRetryDelay: 1_000 });
  expect(recorded).toEqual({ delivered: 1, failuresInARow: 1 });
  expect(answers).toEqual([]);
});

it('a Retry-After the first attempt was given holds the regular attempt on any worker: it waits it out without calling', async () => {
  answers.push(204);
  const input = { shop: 'scripted', orderId: `SD-${Date.now()}`, events: [completed(1)], notBefore: Date.now() + 5_000 };
  const { failure } = await attempt(1, undefined, input);
  expect(failure).toMatchObject({ type: 'ShopBusy' });
  expect(failure!.nextRetryDelay).toBeGreaterThan(4_000);
  expect(answers).toEqual([204]); // nothing was sent
  answers.length = 0;
});

it('after a first attempt cut off, a platform delivery reads nothing before the connector timeout has passed since it was scheduled', async () => {
  const rejected: ShopEventDraft = {
    sequence: 1,
    occurredAt: '2026-11-21T10:00:00.000Z',
    type: 'label.rejected',
    data: { revision: 1, kind: 'courier_error', courierCode: null, courierMessage: null, message: 'no', awaitingCorrection: true },
  };
  const input = { shop: 'site', orderId: `SD-${Date.now()}`, events: [rejected], platformOrderId: '1001', afterCutOffAttempt: true };
  const settling = await attempt(1, undefined, input);
  expect(settling.failure).toMatchObject({ type: 'EarlierWriteSettling' });
  expect(settling.failure!.nextRetryDelay).toBeGreaterThan(3_000);
  // Once the timeout has passed, it calls (here: a site that is not there).
  const later = await attempt(2, undefined, input, Date.now() - 5_000);
  expect(later.failure).toMatchObject({ type: 'ShopUnavailable' });
});
