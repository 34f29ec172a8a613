/**
 * Shop sync on a real Temporal dev server: the shipment workflow tells the shop every change
 * through signed webhooks over loopback, to the reference receiver (shop-receiver/) or to a
 * plain capturing server verified with the standardwebhooks package.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { startShopReceiver, type ShopReceiver } from '../shop-receiver/server';
import { registry } from '../metrics/counters';
import { loadShopConnectors } from '../platforms/connectors';
import { shipmentEventId, ShipmentEvent } from '../domain/events';
import { redeliverShopEventsUpdate, SA, stateQuery, type ShipmentOutcome } from '../workflow-definitions/shipment';
import { type ShipmentInput } from '../domain/shipment';
import { runCli } from './helpers/cli';
import { saveFixture } from './helpers/fixtures';
import { startHarness, type Harness } from './helpers/harness';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const SECRET = secret();
const NEXT_SECRET = secret();
const OTHER_SECRET = secret();

interface Captured {
  raw: Buffer;
  headers: IncomingHttpHeaders;
}

let env: TestWorkflowEnvironment;
let receiver: ShopReceiver;
let capture: { server: Server; url: string; requests: Captured[] };
let h: Harness;
let stepwise: Harness;

beforeAll(async () => {
  env = await createTestEnv();
  receiver = await startShopReceiver({ secrets: [SECRET] });
  const requests: Captured[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ raw: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  capture = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, requests };

  const shops = {
    maxBackoff: '1s',
    acme: { type: 'webhook', url: receiver.webhookUrl('acme'), secrets: [SECRET] },
    // During a rotation: every event is signed with the old and the new secret.
    rotating: { type: 'webhook', url: capture.url, secrets: [SECRET, NEXT_SECRET] },
    moved: { type: 'webhook', url: receiver.webhookUrl('moved'), secrets: [SECRET] },
  };
  const shopConnectors = loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(shops) });
  h = await startHarness({ env, shopConnectors });
  // Tracking moves one stage per poll, whatever the timing: a known number of changes.
  stepwise = await startHarness({ env, shopConnectors, fake: { trackingStepPolls: 1 } });
});
afterAll(async () => {
  await h?.stop();
  await stepwise?.stop();
  await receiver?.close();
  await new Promise((resolve) => capture?.server.close(resolve));
  await env?.teardown();
});

async function start(input: ShipmentInput, on: Harness = h): Promise<WorkflowHandle> {
  const started = await startShipment(on.env.client, on.taskQueue, input);
  return on.env.client.workflow.getHandle(started.workflowId);
}

function withLabelUrl(input: ShipmentInput, labelUrl: string): ShipmentInput {
  return { ...input, labelRequest: { ...input.labelRequest, courierOptions: { 'fake-integration': { sourceCode: 'WEB', labelUrl } } } };
}

function receivedFor(orderId: string): ShipmentEvent[] {
  return receiver
    .state()
    .events.filter((e) => e.event.orderId === orderId)
    .map((e) => e.event);
}

async function shopDeliveries(result: string): Promise<number> {
  const series = (await registry.getSingleMetric('shop_deliveries_total')!.get()).values;
  return series.filter((v) => v.labels.result === result).reduce((sum, v) => sum + v.value, 0);
}

function orderView(orderId: string) {
  return receiver.state().orders.find((o) => o.orderId === orderId);
}

/** The guarantees a shop relies on: 1..n in order, none missing, each once, ids derived. */
function expectCompleteAndInOrder(orderId: string, outcome: ShipmentOutcome): ShipmentEvent[] {
  const events = receivedFor(orderId);
  const view = orderView(orderId)!;
  const n = outcome.shopSync!.emitted;
  expect(view.received).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  expect(view.missing).toEqual([]);
  expect(view.gap).toBe(false);
  expect(view.outOfOrder).toBe(false);
  expect(new Set(events.map((e) => e.id)).size).toBe(n);
  for (const e of events) expect(e.id).toBe(shipmentEventId(e));
  expect(outcome.shopSync).toMatchObject({ status: 'up_to_date', delivered: n, failure: null });
  return events;
}

describe('shop sync', () => {
  it('tells the shop every change once and in order: label, tracking changes, completion', async () => {
    const deliveredBefore = await shopDeliveries('delivered');
    const handle = await start(withLabelUrl(order('acme', 'SS-1'), 'https://labels.example/SS-1.pdf'), stepwise);
    const outcome = (await handle.result()) as ShipmentOutcome;
    // The worker's counter (metrics/) saw each acknowledged event.
    expect((await shopDeliveries('delivered')) - deliveredBefore).toBe(outcome.shopSync!.emitted);
    expect(outcome.outcome).toBe('delivered');

    const events = expectCompleteAndInOrder('SS-1', outcome);
    expect(events[0]).toMatchObject({
      type: 'label.created',
      sequence: 1,
      data: { labelId: outcome.labelId, revision: 1, labelUrl: 'https://labels.example/SS-1.pdf', customerOrderNumber: 'SS-1' },
    });
    expect(events.at(-1)).toMatchObject({
      type: 'shipment.completed',
      data: { outcome: 'delivered', tag: 'Delivered', trackingNumber: outcome.trackingNumber },
    });
    const updates = events.filter((e) => e.type === 'tracking.updated');
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.at(-1)!.data).toMatchObject({ tag: 'Delivered', trackingNumber: outcome.trackingNumber });
    // Only changes of tag or subtag (or a first tracking number) are events, not every checkpoint.
    for (let i = 1; i < updates.length; i++) {
      const [a, b] = [updates[i - 1]!.data, updates[i]!.data] as const;
      expect(a.tag !== b.tag || a.subtag !== b.subtag || (a.trackingNumber === null && b.trackingNumber !== null)).toBe(true);
    }
    expect(orderView('SS-1')).toMatchObject({ tag: 'Delivered', outcome: 'delivered', labelUrl: 'https://labels.example/SS-1.pdf' });
    // A tracking change and the outcome are told inside the task that applied them (their bodies
    // come from recorded inputs): only the label's event waits for the regular activity.
    const history = (await handle.fetchHistory()).events ?? [];
    const regular = history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverShopEvents');
    expect(regular.length, 'deliveries by the regular activity').toBe(1);
    for (const update of updates) expect(update.occurredAt).not.toBe(events[0]!.occurredAt);
    // The cost target of a shipment with a shop (issue 30): ≤ 60 events, ≤ 15 workflow tasks.
    expect(history.length).toBeLessThanOrEqual(60);
    expect(history.filter((e) => e.workflowTaskCompletedEventAttributes).length).toBeLessThanOrEqual(15);
    await saveFixture(handle, 'shop-sync-delivered');
    await saveFixture(handle, 'shop-sync-tracking-told-in-its-task');
    // The happy path writes no shop search attribute.
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(SA.shopSync)).toBeUndefined();
  });

  it('signs every event so the standardwebhooks package verifies it with either secret of a rotation, and not with another', async () => {
    const handle = await start(order('rotating', 'SS-2'));
    const outcome = (await handle.result()) as ShipmentOutcome;
    const mine = capture.requests.filter((r) => JSON.parse(r.raw.toString()).orderId === 'SS-2');
    expect(mine).toHaveLength(outcome.shopSync!.emitted);
    for (const { raw, headers } of mine) {
      const h3 = {
        'webhook-id': String(headers['webhook-id']),
        'webhook-timestamp': String(headers['webhook-timestamp']),
        'webhook-signature': String(headers['webhook-signature']),
      };
      for (const valid of [SECRET, NEXT_SECRET]) {
        const payload = new Webhook(valid).verify(raw.toString('utf8'), h3) as ShipmentEvent;
        expect(ShipmentEvent.parse(payload).id).toBe(h3['webhook-id']);
      }
      expect(() => new Webhook(OTHER_SECRET).verify(raw.toString('utf8'), h3)).toThrow(WebhookVerificationError);
      // Tampering with the body breaks the signature too.
      expect(() => new Webhook(SECRET).verify(raw.toString('utf8').replace('"sequence":', '"sequence": '), h3)).toThrow(
        WebhookVerificationError,
      );
    }
  });

  it('a shop down for the whole label and tracking phase gets every event in order once it is back, and did not hold the shipment up', async () => {
    await receiver.setFaults({ down: true });
    try {
      const handle = await start(order('acme', 'SS-3'));
      // The shipment runs its whole course while the shop refuses connections.
      const state = await waitFor(
        async () => {
          const s = await handle.query(stateQuery);
          return s.outcome === 'delivered' ? s : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: 'the shipment to reach Delivered while the shop is down' },
      );
      expect(state.labelId).not.toBeNull();
      expect(state.shopSync).toMatchObject({ status: 'delivering', delivered: 0 });
      expect(state.shopSync!.pending.map((e) => e.sequence)).toEqual(Array.from({ length: state.shopSync!.emitted }, (_, i) => i + 1));
      expect(receivedFor('SS-3')).toEqual([]);
      // ...and waits for the shop before it completes.
      expect((await handle.describe()).status.name).toBe('RUNNING');
    } finally {
      await receiver.setFaults({ down: false });
    }
    const handle = h.env.client.workflow.getHandle('shipment-acme-SS-3');
    const outcome = (await handle.result()) as ShipmentOutcome;
    const events = expectCompleteAndInOrder('SS-3', outcome);
    expect(events.map((e) => e.type)[0]).toBe('label.created');
    await saveFixture(handle, 'shop-sync-outage-catch-up');
    expect(events.at(-1)!.type).toBe('shipment.completed');
  });

  it('pending events and their numbering survive continue-as-new while the shop is down', async () => {
    await receiver.setFaults({ down: true });
    let handle: WorkflowHandle;
    try {
      handle = await start(order('acme', 'SS-9', {}, { historyEventLimit: 10 }), stepwise);
      const state = await waitFor(
        async () => {
          const s = await handle.query(stateQuery);
          return s.outcome === 'delivered' ? s : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: 'the shipment to reach Delivered while the shop is down' },
      );
      expect(state.continuedAsNew).toBeGreaterThanOrEqual(1);
      expect(state.shopSync!.pending.map((e) => e.sequence)).toEqual(Array.from({ length: state.shopSync!.emitted }, (_, i) => i + 1));
    } finally {
      await receiver.setFaults({ down: false });
    }
    const outcome = (await handle.result()) as ShipmentOutcome;
    const events = expectCompleteAndInOrder('SS-9', outcome);
    expect(events.map((e) => e.type)).toEqual([
      'label.created',
      ...events.slice(1, -1).map(() => 'tracking.updated'),
      'shipment.completed',
    ]);
    await saveFixture(handle, 'shop-sync-continued-as-new');
  });

  it("waits the shop's Retry-After after a 429 and then delivers", async () => {
    await receiver.setFaults({ failNext: [{ status: 429, retryAfter: '2' }] });
    const handle = await start(order('acme', 'SS-4'));
    const outcome = (await handle.result()) as ShipmentOutcome;
    expectCompleteAndInOrder('SS-4', outcome);
    // Event 1 goes to the delivery activity (it is first sent once its task is recorded): the
    // 429 ends its first attempt, and the server starts the next one after exactly Retry-After.
    const history = (await handle.fetchHistory()).events ?? [];
    const scheduled = history.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverShopEvents')!;
    const started = history.find(
      (e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduled.eventId?.toString(),
    )!;
    expect(started.activityTaskStartedEventAttributes?.attempt).toBe(2);
    const ms = (e: typeof started) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
    expect(ms(started) - ms(scheduled)).toBeGreaterThanOrEqual(2_000);
    await saveFixture(handle, 'shop-sync-retry-after');
  });

  it('a refused event (4xx) stops delivery in order, shows in state and search attribute, and an operator redelivers it', async () => {
    await receiver.setFaults({ failNext: [{ status: 422 }] });
    const handle = await start(order('acme', 'SS-5'));
    const state = await waitFor(
      async () => {
        const s = await handle.query(stateQuery);
        return s.shopSync?.status === 'failed' && s.outcome !== null ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'delivery to fail and the shipment to end' },
    );
    expect(state.shopSync!.failure).toMatchObject({ sequence: 1, status: 422 });
    expect(state.shopSync!.delivered).toBe(0);
    expect(receivedFor('SS-5')).toEqual([]); // nothing after the refused event jumped the queue
    await waitFor(async () => ((await handle.describe()).typedSearchAttributes.get(SA.shopSync) === 'failed' ? true : undefined), {
      timeoutMs: 10_000,
      what: 'ShipmentShopSync=failed',
    });

    const redelivered = await handle.executeUpdate(redeliverShopEventsUpdate);
    expect(redelivered).toMatchObject({ fromSequence: 1, previousStatus: 'failed' });
    const outcome = (await handle.result()) as ShipmentOutcome;
    expectCompleteAndInOrder('SS-5', outcome);
    expect((await handle.describe()).typedSearchAttributes.get(SA.shopSync)).toBe('ok');
    await saveFixture(handle, 'shop-sync-refused-redelivered');
  });

  it('a 410 stops delivery to the endpoint; status, list and redeliver on the command line take it from there', async () => {
    await receiver.setFaults({ gone: ['moved'] });
    const handle = await start(order('moved', 'SS-8'));
    await waitFor(async () => ((await handle.query(stateQuery)).shopSync?.status === 'gone' ? true : undefined), {
      timeoutMs: 20_000,
      what: 'shop sync gone',
    });
    const answers410 = receiver.state().stats.answers['410'];
    const cliEnv = { TEMPORAL_ADDRESS: h.env.address, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: h.taskQueue };

    const status = await runCli(['status', 'moved', 'SS-8'], { env: cliEnv });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/Shop sync\s+gone, 0 of \d+ event\(s\) delivered, \d+ pending from sequence 1/);
    expect(status.stdout).toContain('410 Gone');
    expect(status.stdout).toContain('npm run cli -- redeliver moved SS-8');
    const listed = await waitFor(
      async () => {
        const run = await runCli(['list', '--shop-sync', 'gone', '--json'], { env: cliEnv });
        return run.stdout.includes('"SS-8"') ? run : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 500, what: 'list --shop-sync gone to show SS-8' },
    );
    expect(listed.code).toBe(0);
    // Events after the 410 are not sent: the endpoint is gone until an operator says otherwise.
    await waitFor(async () => ((await handle.query(stateQuery)).outcome !== null ? true : undefined), { timeoutMs: 20_000 });
    expect(receiver.state().stats.answers['410']).toBe(answers410);

    await receiver.setFaults({ gone: false });
    const redeliver = await runCli(['redeliver', 'moved', 'SS-8'], { env: cliEnv });
    expect(redeliver.stderr).toBe('');
    expect(redeliver.stdout).toMatch(/Redelivering \d+ event\(s\) from sequence 1 to shop moved \(shop sync was gone\)/);
    expect(redeliver.stdout).toMatch(/Delivered: the shop has all \d+ event\(s\)/);
    expect(redeliver.code).toBe(0);
    expectCompleteAndInOrder('SS-8', (await handle.result()) as ShipmentOutcome);

    const again = await runCli(['redeliver', 'moved', 'SS-8'], { env: cliEnv });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('has already ended');
    await saveFixture(handle, 'shop-sync-gone-redelivered');
  });

  it('refuses a redeliver when nothing waits for one', async () => {
    const handle = await start(order('acme', 'SS-6', { marker: 'STALL' }));
    await waitFor(async () => ((await handle.query(stateQuery)).shopSync?.status === 'up_to_date' ? true : undefined), {
      timeoutMs: 20_000,
    });
    const refused = await handle.executeUpdate(redeliverShopEventsUpdate).then(
      () => null,
      (e: Error & { cause?: Error }) => e,
    );
    // A stalled parcel may still bring a checkpoint: its event makes the sync `delivering` for a moment.
    expect(refused?.cause?.message).toMatch(/nothing to redeliver: shop sync is (up_to_date|delivering)$/);
    await handle.terminate('test done');
  });

  it('a shop without a connector is skipped, and the state says so', async () => {
    const handle = await start(order('no-such-shop', 'SS-7'));
    const outcome = (await handle.result()) as ShipmentOutcome;
    expect(outcome.outcome).toBe('delivered');
    expect(outcome.shopSync).toMatchObject({ status: 'no_connector', delivered: 0 });
    expect(outcome.shopSync!.emitted).toBeGreaterThanOrEqual(3);
    const history = (await handle.fetchHistory()).events ?? [];
    expect(history.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverShopEvents')).toBe(false);
    await saveFixture(handle, 'shop-sync-no-connector');
  });
});
