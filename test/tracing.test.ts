/**
 * One order, one trace: with tracing on (an in-memory exporter behind the same privacy processor
 * as OTLP's), a shipment started as the import and the pulls start it makes one trace from its
 * start through its workflow, activities, the shipping API's calls and the shop's webhooks, on
 * a real dev server, a real worker and the fake shipping API over loopback. No span carries the
 * order's names, address, phone, email, a courier's message echoing them, or a secret.
 */
import { randomBytes } from 'node:crypto';
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { loadShopConnectors } from '../platforms/connectors';
import { startShopReceiver, type ShopReceiver } from '../shop-receiver/server';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { applySchedule, importShops } from '../shop-import/schedule';
import { startTracing, type Tracing } from '../tracing/setup';
import { tracingClientInterceptors } from '../tracing/temporal';
import type { ShipmentInput } from '../domain/shipment';
import { startHarness, TEST_CREDENTIALS, type Harness } from './helpers/harness';
import { saveFixture } from './helpers/fixtures';
import { order } from './helpers/orders';
import { fakeShopifyEntry } from './helpers/platforms';
import { pullNow } from './helpers/shop-pulls';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
/** The courier rejects this postal code with a message that repeats it (fake-shipping-api/catalog.ts). */
const REJECTED_POSTAL_CODE = 'ZQ 4711';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let env: TestWorkflowEnvironment;
let receiver: ShopReceiver;
let h: Harness;
let client: Client;
let shopify: FakeShopify;
/** A Shopify store whose orders the pulls import (only the test's triggers pull). */
const PULLED_SHOP = 'trace-shopify';
/** The pulled order's customer, as the store has it. */
const CUSTOMER = {
  email: 'marta.kowalczyk@example.pl',
  shippingAddress: { firstName: 'Marta', lastName: 'Kowalczyk', address1: 'Ulica Długa 44', zip: '80-831', phone: '+48 58 3012345' },
};

beforeAll(async () => {
  // Before the worker: it takes the process's tracing when it is created, as in worker/main.ts.
  tracing = await startTracing({ serviceName: 'tracing-test', exporter, batch: false });
  env = await createTestEnv();
  receiver = await startShopReceiver({ secrets: [SECRET] });
  shopify = await startFakeShopify();
  const pulled = {
    import: {
      every: '1h',
      paused: true,
      overlap: '2m',
      firstPull: '1d',
      mapping: { shippingMethods: { Standard: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } } },
    },
  };
  const shopConnectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({
      maxBackoff: '1s',
      acme: { type: 'webhook', url: receiver.webhookUrl('acme'), secrets: [SECRET] },
      [PULLED_SHOP]: fakeShopifyEntry(shopify.baseUrl, pulled),
    }),
  });
  h = await startHarness({ env, shopConnectors, fake: { rejectPostalCodes: [REJECTED_POSTAL_CODE] } });
  for (const connector of importShops(shopConnectors)) await applySchedule(env.client, connector, h.taskQueue);
  // As client/import makes it: the order's trace goes into its shipment's start.
  client = new Client({ connection: env.connection, namespace: 'default', interceptors: tracingClientInterceptors() });
});

afterAll(async () => {
  await h?.stop();
  await receiver?.close();
  await shopify?.close();
  await env?.teardown();
  await tracing?.shutdown();
});

/** Every text of a person in the order, and every secret the process holds. */
function privateTexts(input: ShipmentInput): string[] {
  const { shipFrom, shipTo } = input.labelRequest.shipment;
  const people = [shipFrom, shipTo].flatMap((party) => [
    party?.contact?.firstName,
    party?.contact?.lastName,
    party?.contact?.phone,
    party?.contact?.email,
    ...(party?.address?.streetLines ?? []),
    party?.address?.postalCode,
  ]);
  return [...people.filter((t): t is string => typeof t === 'string'), TEST_CREDENTIALS.apiKey, TEST_CREDENTIALS.apiToken, SECRET];
}

/** All a span would send: name, attributes, status, events and links. */
function exported(span: ReadableSpan): string {
  return JSON.stringify({
    name: span.name,
    attributes: span.attributes,
    status: span.status,
    events: span.events,
    links: span.links.map((l) => l.attributes),
    resource: span.resource.attributes,
  });
}

function rootOf(orderId: string): ReadableSpan | undefined {
  return exporter.getFinishedSpans().find((s) => s.name === 'order' && s.attributes['shipment.order_id'] === orderId);
}

function traceOf(root: ReadableSpan): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === root.spanContext().traceId);
}

it("a delivered shipment's spans are one trace, from its start to the shop's last webhook", async () => {
  const input = order('acme', `TR-${Date.now()}`);
  const started = await startShipment(client, h.taskQueue, input);
  expect(started.status).toBe('started');
  const handle = client.workflow.getHandle(started.workflowId);
  await handle.result();
  // A shipment run with the OpenTelemetry interceptors active replays (test/replay.test.ts).
  await saveFixture(handle, 'traced-delivered');
  // The completion's webhook is sent after the workflow's last task; its span ends with it.
  const root = rootOf(input.orderId)!;
  expect(root).toBeDefined();
  expect(root.parentSpanId).toBeUndefined();
  const spans = await waitFor(
    () => {
      const all = traceOf(root);
      const webhooks = all.filter((s) => s.name === 'shop webhook').map((s) => s.attributes['shop.operation']);
      return webhooks.includes('shipment.completed') && all.some((s) => s.name === 'RunWorkflow:shipmentWorkflow') ? all : undefined;
    },
    { timeoutMs: 15_000, what: 'the completed shipment and its last webhook in the trace' },
  );
  const names = spans.map((s) => s.name);
  expect(names).toEqual(
    expect.arrayContaining([
      'order',
      'StartWorkflow:shipmentWorkflow',
      'RunWorkflow:shipmentWorkflow',
      'StartActivity:createLabel',
      'RunActivity:createLabel',
      'shipping-api createLabel',
      'shop webhook',
    ]),
  );
  // One tree: every span but the root hangs from a span of the same trace.
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  expect(spans.filter((s) => s !== root && !ids.has(s.parentSpanId!)).map((s) => s.name)).toEqual([]);
  // The workflow's spans of this order are all in its trace, none in another.
  const ofWorkflow = exporter.getFinishedSpans().filter((s) => s.attributes.temporalWorkflowId === started.workflowId);
  expect(ofWorkflow.length).toBeGreaterThan(0);
  expect(ofWorkflow.every((s) => s.spanContext().traceId === root.spanContext().traceId)).toBe(true);
  // The calls say what they did without the path: operation, host and the answer's status.
  const label = spans.find((s) => s.name === 'shipping-api createLabel')!;
  expect(label.attributes).toMatchObject({
    'shipping.operation': 'createLabel',
    'http.request.method': 'POST',
    'http.response.status_code': 201,
  });
  expect(root.attributes['shipment.start']).toBe('started');
  for (const span of exporter.getFinishedSpans()) for (const text of privateTexts(input)) expect(exported(span)).not.toContain(text);
});

it("a rejected label's failure is in its trace by its kind, without the courier's message (which repeats the postal code)", async () => {
  const input = order('acme', `TR-REJ-${Date.now()}`, { postalCode: REJECTED_POSTAL_CODE });
  const started = await startShipment(client, h.taskQueue, input);
  const root = await waitFor(() => rootOf(input.orderId), { what: 'the order span' });
  // The courier's answer is a 201 whose label failed: the activity fails, with a message naming the postal code.
  const failed = await waitFor(
    () => traceOf(root).find((s) => s.name === 'RunActivity:createLabel' && s.status.code === SpanStatusCode.ERROR),
    { timeoutMs: 15_000, what: "the label activity's failed span" },
  );
  expect(failed.status.message).toBeUndefined();
  expect(failed.events.map((e) => [e.name, Object.keys(e.attributes ?? {})])).toEqual([['exception', ['exception.type']]]);
  expect(traceOf(root).find((s) => s.name === 'shipping-api createLabel')?.attributes['http.response.status_code']).toBe(201);
  await waitFor(() => traceOf(root).find((s) => s.name === 'shop webhook' && s.attributes['shop.operation'] === 'label.rejected'), {
    timeoutMs: 15_000,
    what: "the shop's label.rejected webhook in the trace",
  });
  expect(exporter.getFinishedSpans().filter((s) => s.attributes.temporalWorkflowId === started.workflowId).length).toBeGreaterThan(0);
  for (const span of exporter.getFinishedSpans()) for (const text of privateTexts(input)) expect(exported(span)).not.toContain(text);
});

it('a shipment started outside an order span (a client without tracing) makes no span', async () => {
  const input = order('acme', `TR-OFF-${Date.now()}`);
  const started = await startShipment(env.client, h.taskQueue, input);
  await env.client.workflow.getHandle(started.workflowId).result();
  const root = rootOf(input.orderId)!;
  // The order span is made (tracing is on in this process), but the start carried no trace.
  expect(traceOf(root).map((s) => s.name)).toEqual(['order']);
  expect(exporter.getFinishedSpans().filter((s) => s.attributes.temporalWorkflowId === started.workflowId)).toEqual([]);
});

it("a pulled order is a trace of its own from the pull's start, with the shop's read before the label and its fulfillment write", async () => {
  const placed = shopify.createOrder({ lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }], ...CUSTOMER });
  const orderId = placed.name.replace('#', '');
  // The schedule's pull is untraced; the start of each order it finds is the root of that order's trace.
  expect((await pullNow(env.client, PULLED_SHOP)).counts.started).toBe(1);
  const root = await waitFor(() => rootOf(orderId), { timeoutMs: 10_000, what: "the pulled order's span" });
  expect(root.attributes['shipment.shop']).toBe(PULLED_SHOP);
  const spans = await waitFor(
    () => {
      const all = traceOf(root);
      return all.some((s) => s.name === 'RunWorkflow:shipmentWorkflow') ? all : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: 'the pulled shipment run to its end' },
  );
  expect(spans.map((s) => s.name)).toEqual(
    expect.arrayContaining(['order', 'StartWorkflow:shipmentWorkflow', 'shipping-api createLabel', 'shopify POST']),
  );
  // The check before the label reads the order; the write-back fulfils it and tells its tracking.
  expect(spans.filter((s) => s.name === 'shopify POST').length).toBeGreaterThanOrEqual(2);
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  expect(spans.filter((s) => s !== root && !ids.has(s.parentSpanId!)).map((s) => s.name)).toEqual([]);
  // The pull's own reads of the store are in no trace: they serve every order of the page.
  const texts = [CUSTOMER.email, ...Object.values(CUSTOMER.shippingAddress), 'shpat_fake_dev_token'];
  for (const span of exporter.getFinishedSpans()) for (const text of texts) expect(exported(span)).not.toContain(text);
});
