/**
 * The fake Shopify store as an order import meets it, over real loopback HTTP: the fields a
 * label needs (shipping line, currency, weight, unit prices, delivery method), generated bench
 * orders, updated_at paging that stays complete while orders change between pages, merchant
 * edits, and webhook deliveries (HMAC over the raw body, retries, deletion, faults).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startFakeShopify, type FakeShopify, type FakeShopifyOptions } from '../fake-shopify';
import { parseCli } from '../fake-shopify/main';

const TOKEN = 'shpat_fake_dev_token';
const SECRET = 'fake-client-secret';
const T0 = Date.parse('2026-11-20T10:00:00Z');
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

const running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** A fake on a settable clock, webhook retries in milliseconds; closed after the test. */
async function fresh(options: FakeShopifyOptions = {}): Promise<{ shop: FakeShopify; clock: { t: number } }> {
  const clock = { t: T0 };
  const shop = await startFakeShopify({ now: () => clock.t, webhooks: { backoffBaseMs: 2 }, ...options });
  running.push(shop);
  return { shop, clock };
}

type Json = any;

async function gql(shop: FakeShopify, query: string, variables: object = {}): Promise<Json> {
  const res = await fetch(`${shop.baseUrl}/admin/api/2026-10/graphql.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-shopify-access-token': TOKEN },
    body: JSON.stringify({ query, variables }),
  });
  expect(res.status).toBe(200);
  return res.json();
}

async function admin(shop: FakeShopify, method: string, route: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${shop.baseUrl}/_fake/${route}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

interface Received {
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: Json;
}

/** A webhook endpoint: `answer(n)` gives the status of the n-th request (1-based), or 'hang'. */
async function receiver(answer: (n: number) => number | 'hang' = () => 200): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      got.push({ headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')) });
      const status = answer(got.length);
      if (status !== 'hang') res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  running.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, got };
}

/** Shopify's check: base64 HMAC-SHA256 of the raw bytes, compared in constant time. */
function verified(r: Received, secret = SECRET): boolean {
  const expected = createHmac('sha256', secret).update(r.raw).digest();
  const given = Buffer.from(String(r.headers['x-shopify-hmac-sha256']), 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const IMPORT_FIELDS = `id name currencyCode presentmentCurrencyCode totalWeight displayFinancialStatus
  shippingLine { id title code source carrierIdentifier originalPriceSet { shopMoney { amount currencyCode } } }
  lineItems(first: 5) { nodes { sku originalUnitPriceSet { shopMoney { amount currencyCode } presentmentMoney { amount currencyCode } } } }
  fulfillmentOrders(first: 2) { nodes { deliveryMethod { methodType } assignedLocation { location { id } }
    lineItems(first: 5) { nodes { remainingQuantity weight { unit value } lineItem { sku quantity } } } } }`;

describe('fake Shopify import: the fields a label needs', () => {
  it('serves shippingLine, currency, totalWeight, unit prices and seeded delivery methods with Shopify types', async () => {
    const { shop } = await fresh();
    const order = shop.createOrder({
      lineItems: [
        { sku: 'A', quantity: 2, grams: 250, price: '12.5' },
        { sku: 'B', quantity: 1, grams: 1000 },
      ],
      currency: 'CHF',
      shippingLine: { title: 'Express', price: '9.9' },
      deliveryMethod: 'PICK_UP',
      financialStatus: 'PENDING',
    });
    const plain = shop.createOrder({ lineItems: [{ sku: 'C', quantity: 1 }], shippingLine: null });
    const q = `query($id: ID!) { order(id: $id) { ${IMPORT_FIELDS} } }`;
    const { data } = await gql(shop, q, { id: order.id });
    expect(data.order).toMatchObject({
      currencyCode: 'CHF',
      presentmentCurrencyCode: 'CHF',
      totalWeight: '1500', // UnsignedInt64 is a string on Shopify
      displayFinancialStatus: 'PENDING',
      shippingLine: { title: 'Express', code: 'express', source: 'shopify', carrierIdentifier: null },
    });
    expect(data.order.shippingLine.id).toMatch(/^gid:\/\/shopify\/ShippingLine\/\d+$/);
    expect(data.order.shippingLine.originalPriceSet.shopMoney).toEqual({ amount: '9.90', currencyCode: 'CHF' });
    expect(data.order.lineItems.nodes[0].originalUnitPriceSet).toEqual({
      shopMoney: { amount: '12.50', currencyCode: 'CHF' },
      presentmentMoney: { amount: '12.50', currencyCode: 'CHF' },
    });
    expect(data.order.lineItems.nodes[1].originalUnitPriceSet.shopMoney.amount).toBe('10.00');
    const fo = data.order.fulfillmentOrders.nodes[0];
    expect(fo.deliveryMethod.methodType).toBe('PICK_UP');
    expect(fo.lineItems.nodes[0]).toEqual({
      remainingQuantity: 2,
      weight: { unit: 'GRAMS', value: 250 },
      lineItem: { sku: 'A', quantity: 2 },
    });
    const other = (await gql(shop, q, { id: plain.id })).data.order;
    expect(other).toMatchObject({ currencyCode: 'EUR', shippingLine: null, displayFinancialStatus: 'PAID' });
    expect(shop.createOrder({ lineItems: [{ sku: 'D', quantity: 1 }] }).shippingLine).toEqual({
      title: 'Standard',
      code: 'standard',
      price: '0.00',
    });
  });

  it('charges the new objects 1 point each and their scalars nothing', async () => {
    const { shop } = await fresh();
    const order = shop.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] });
    const cost = async (fields: string) =>
      (await gql(shop, `query($id: ID!) { order(id: $id) { ${fields} } }`, { id: order.id })).extensions.cost.requestedQueryCost;
    expect(await cost('id currencyCode totalWeight')).toBe(1);
    expect(await cost('id shippingLine { title code }')).toBe(2);
    expect(await cost('id shippingLine { originalPriceSet { shopMoney { amount } } }')).toBe(4);
    // A connection: 2 + first × (node 1 + MoneyBag 1 + MoneyV2 1).
    expect(await cost('lineItems(first: 10) { nodes { originalUnitPriceSet { shopMoney { amount } } } }')).toBe(1 + 2 + 10 * 3);
  });
});

describe('fake Shopify import: generated orders', () => {
  it('generates thousands fast, deterministically, varied, and validates the options', async () => {
    const { shop } = await fresh();
    const started = performance.now();
    const orders = shop.generateOrders({ count: 5000, seed: 9, createdFrom: iso(T0 - 20 * DAY), createdTo: iso(T0 - DAY) });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(orders).toHaveLength(5000);
    const twin = (await fresh()).shop.generateOrders({ count: 50, seed: 9, createdFrom: iso(T0 - 20 * DAY), createdTo: iso(T0 - DAY) });
    const strip = (o: (typeof orders)[number]) => [o.email, o.shippingAddress, o.shippingLine, o.fulfillmentOrders.length];
    expect(twin.map(strip)).toEqual(orders.slice(0, 50).map(strip));
    const countries = new Set(orders.map((o) => o.shippingAddress.countryCodeV2));
    expect(countries.size).toBeGreaterThanOrEqual(5);
    expect(new Set(orders.map((o) => o.shippingLine?.title))).toEqual(new Set(['Standard', 'Express', 'Free shipping']));
    const split = orders.filter((o) => o.fulfillmentOrders.length === 2).length / orders.length;
    expect(split).toBeGreaterThan(0.03);
    expect(split).toBeLessThan(0.07);
    for (const o of orders.slice(0, 200)) {
      const lines = o.fulfillmentOrders.flatMap((fo) => fo.lineItems);
      expect(lines.length).toBeGreaterThanOrEqual(1);
      expect(lines.length).toBeLessThanOrEqual(3);
      expect(o.totalWeight).toBeGreaterThan(0);
    }
    const created = orders.map((o) => o.createdAt);
    expect([...created].sort()).toEqual(created);
    expect(created[0]! >= iso(T0 - 20 * DAY).replace('.000Z', 'Z')).toBe(true);
    expect(() => shop.generateOrders({ count: 20_001 })).toThrow(/count/);
    const bad = await admin(shop, 'POST', 'orders/generate', { count: 10, createdFrom: iso(T0), createdTo: iso(T0 - DAY) });
    expect(bad.status).toBe(400);
    const ok = await admin(shop, 'POST', 'orders/generate', { count: 3, seed: 2 });
    expect(ok).toMatchObject({ status: 201, body: { count: 3 } });
    expect(ok.body.ids).toHaveLength(3);
  });
});

const PAGE = `query($after: String, $q: String) {
  orders(first: 50, after: $after, query: $q, sortKey: UPDATED_AT) { pageInfo { hasNextPage endCursor } nodes { id updatedAt } } }`;
const FULFIL = `mutation($f: FulfillmentInput!) { fulfillmentCreate(fulfillment: $f) { fulfillment { id } userErrors { field message } } }`;

describe('fake Shopify import: paging by updated_at while orders change', () => {
  it('returns every order, in (updatedAt, id) order, with orders changed between pages again at the end', async () => {
    const { shop, clock } = await fresh();
    const orders = shop.generateOrders({ count: 1000, seed: 7, createdFrom: iso(T0 - 10 * DAY), createdTo: iso(T0 - DAY) });
    const hidden = shop.generateOrders({ count: 5, seed: 8, createdFrom: iso(T0 - 80 * DAY), createdTo: iso(T0 - 70 * DAY) });
    const q = `status:open (fulfillment_status:unshipped OR fulfillment_status:partial) updated_at:>='${iso(T0 - 30 * DAY)}'`;
    const seen: Array<{ id: string; updatedAt: string }> = [];
    const changedAfterSeen = new Set<string>();
    let after: string | null = null;
    for (let page = 0; page < 100; page++) {
      const { data } = await gql(shop, PAGE, { after, q });
      seen.push(...data.orders.nodes);
      if (!data.orders.pageInfo.hasNextPage) break;
      after = data.orders.pageInfo.endCursor;
      if (page >= 8) continue;
      clock.t += 1000;
      // One order already returned and one still ahead change between pages.
      const back = seen[page * 37]!.id;
      const ahead = orders[999 - page * 50]!;
      changedAfterSeen.add(back);
      if (page % 2 === 0) shop.editOrder(back, { tags: [`edited-${page}`] });
      else expect((await admin(shop, 'POST', `orders/${back.split('/').pop()}/edit`, { note: `page ${page}` })).status).toBe(200);
      if (page === 3) {
        const fo = ahead.fulfillmentOrders[0]!;
        const line = { id: fo.lineItems[0]!.id, quantity: 1 };
        shop.editOrder(ahead.id, { email: 'x@example.com' }); // a second change before it is read
        const f = { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: fo.id, fulfillmentOrderLineItems: [line] }] };
        await gql(shop, FULFIL, { f }); // may leave it partial or fulfilled: both still or no longer match
      } else shop.editOrder(ahead.id, { shippingAddress: { address2: `Floor ${page}` } });
      shop.editOrder(hidden[0]!.id, { note: 'still too old to see' });
    }
    const key = (r: { id: string; updatedAt: string }) => `${r.updatedAt} ${String(Number(r.id.split('/').pop())).padStart(12, '0')}`;
    const keys = seen.map(key);
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(keys.length);
    const times = new Map<string, number>();
    for (const r of seen) times.set(r.id, (times.get(r.id) ?? 0) + 1);
    const stillMatching = shop
      .orders()
      .filter((o) => o.visible && ['UNFULFILLED', 'PARTIALLY_FULFILLED'].includes(o.displayFulfillmentStatus));
    for (const o of stillMatching) expect(times.get(o.id), o.id).toBe(changedAfterSeen.has(o.id) ? 2 : 1);
    expect(stillMatching.length).toBeGreaterThanOrEqual(999);
    for (const o of hidden) expect(times.has(o.id)).toBe(false);
    const last = new Map(seen.map((r) => [r.id, r.updatedAt]));
    for (const o of stillMatching) expect(last.get(o.id)).toBe(o.updatedAt);
  });

  it('matches id ORs, reads zone-less times as UTC, and never moves updatedAt backwards', async () => {
    const { shop, clock } = await fresh();
    const [a, b, c] = shop.generateOrders({ count: 3, createdFrom: iso(T0 - 3 * DAY), createdTo: iso(T0 - DAY) });
    const ids = `id:${a!.legacyResourceId} OR id:${c!.legacyResourceId}`;
    const byIds = await gql(shop, PAGE, { q: ids });
    expect(byIds.data.orders.nodes.map((n: { id: string }) => n.id).sort()).toEqual([a!.id, c!.id].sort());
    const zoneless = await gql(shop, PAGE, { q: `updated_at:>='${b!.updatedAt.replace('Z', '')}'` });
    expect(zoneless.data.orders.nodes.map((n: { id: string }) => n.id)).toEqual([b!.id, c!.id]);
    clock.t += 5000;
    const edited = shop.editOrder(a!.id, { note: 'x' });
    expect(edited.updatedAt).toBe('2026-11-20T10:00:05Z');
    clock.t -= 60_000;
    expect(shop.editOrder(a!.id, { note: 'y' }).updatedAt).toBe('2026-11-20T10:00:05Z');
    expect(shop.editOrder(a!.id, { note: 'y' }).updatedAt).toBe('2026-11-20T10:00:05Z'); // nothing changed
  });
});

describe('fake Shopify import: merchant edits', () => {
  it('edits, cancels and closes through the admin routes, as status:open then sees them', async () => {
    const { shop, clock } = await fresh();
    const [a, b, c] = shop.generateOrders({ count: 3, createdFrom: iso(T0 - 3 * DAY), createdTo: iso(T0 - DAY) });
    clock.t += 2000;
    const edit = await admin(shop, 'POST', `orders/${a!.legacyResourceId}/edit`, { shippingAddress: { zip: '99999' }, tags: ['x', 'X'] });
    expect(edit).toMatchObject({
      status: 200,
      body: { tags: ['x'], updatedAt: '2026-11-20T10:00:02Z', shippingAddress: { zip: '99999' } },
    });
    expect((await admin(shop, 'POST', `orders/${a!.legacyResourceId}/edit`, { zip: '1' })).status).toBe(400);
    expect((await admin(shop, 'POST', 'orders/123/edit', { note: 'x' })).status).toBe(404);
    const dest = await gql(shop, 'query($id: ID!) { order(id: $id) { fulfillmentOrders(first: 1) { nodes { destination { zip } } } } }', {
      id: a!.id,
    });
    expect(dest.data.order.fulfillmentOrders.nodes[0].destination.zip).toBe('99999');
    expect((await admin(shop, 'POST', `orders/${encodeURIComponent(b!.id)}/cancel`)).body).toMatchObject({
      cancelledAt: '2026-11-20T10:00:02Z',
      fulfillmentOrders: [{ status: 'CLOSED' }],
    });
    expect((await admin(shop, 'POST', `orders/${b!.legacyResourceId}/cancel`)).status).toBe(400);
    expect((await admin(shop, 'POST', `orders/${c!.legacyResourceId}/close`)).body).toMatchObject({
      closed: true,
      closedAt: '2026-11-20T10:00:02Z',
    });
    const open = await gql(shop, PAGE, { q: 'status:open' });
    expect(open.data.orders.nodes.map((n: { id: string }) => n.id)).toEqual([a!.id]);
    const fulfilled = shop.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] });
    await gql(shop, FULFIL, { f: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: fulfilled.fulfillmentOrders[0]!.id }] } });
    expect(() => shop.cancelOrder(fulfilled.id)).toThrow(/fulfilled/);
  });
});

const TOPICS = ['orders/create', 'orders/paid', 'orders/updated', 'fulfillment_orders/order_routing_complete'] as const;

describe('fake Shopify import: webhooks', () => {
  it('delivers REST-shaped bodies whose HMAC verifies over the raw bytes, with Shopify headers', async () => {
    const { shop, clock } = await fresh();
    const hook = await receiver();
    for (const topic of TOPICS) shop.subscribeWebhook({ topic, address: hook.url });
    const order = shop.createOrder({
      lineItems: [{ sku: 'A', quantity: 2, grams: 300, price: '7.5' }],
      shippingLine: { title: 'Express', code: 'EXP' },
      tags: ['vip', 'b2b'],
    });
    await shop.webhooksIdle();
    const byTopic = (t: string) => hook.got.filter((r) => r.headers['x-shopify-topic'] === t);
    expect(hook.got).toHaveLength(3);
    for (const r of hook.got) {
      expect(verified(r)).toBe(true);
      expect(verified(r, 'another-secret')).toBe(false);
      expect(r.headers).toMatchObject({
        'content-type': 'application/json',
        'x-shopify-shop-domain': 'fake-shop.myshopify.com',
        'x-shopify-api-version': '2026-10',
        'x-shopify-triggered-at': '2026-11-20T10:00:00.000Z',
      });
      expect(r.headers['x-shopify-webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.headers['x-shopify-event-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    const created = byTopic('orders/create')[0]!.body;
    expect(created).toMatchObject({
      id: Number(order.legacyResourceId),
      admin_graphql_api_id: order.id,
      name: '#1001',
      email: 'customer@example.com',
      created_at: '2026-11-20T11:00:00+01:00', // REST times are the shop's (Europe/Berlin)
      financial_status: 'paid',
      fulfillment_status: null,
      tags: 'vip, b2b',
      total_weight: 600,
      line_items: [{ sku: 'A', quantity: 2, grams: 300, price: '7.50', fulfillable_quantity: 2 }],
      shipping_address: { country_code: 'DE', country: 'Germany', zip: '51147' },
      shipping_lines: [{ title: 'Express', code: 'EXP' }],
    });
    expect(byTopic('orders/paid')[0]!.body.id).toBe(created.id);
    expect(byTopic('fulfillment_orders/order_routing_complete')[0]!.body).toEqual({
      fulfillment_order: { id: order.fulfillmentOrders[0]!.id, status: 'open' },
    });
    clock.t += 3000;
    await gql(shop, 'mutation($id: ID!) { tagsAdd(id: $id, tags: ["rush"]) { userErrors { message } } }', { id: order.id });
    await shop.webhooksIdle();
    await admin(shop, 'POST', `orders/${order.legacyResourceId}/edit`, { note: 'ring twice' });
    await shop.webhooksIdle();
    const updates = byTopic('orders/updated').map((r) => r.body);
    expect(updates.map((u) => [u.tags, u.note, u.updated_at])).toEqual([
      ['vip, b2b, rush', null, '2026-11-20T11:00:03+01:00'],
      ['vip, b2b, rush', 'ring twice', '2026-11-20T11:00:03+01:00'],
    ]);
    expect(shop.stats().webhooks).toMatchObject({ events: 5, attempted: 5, succeeded: 5, failed: 0 });
  });

  it('fires orders/updated once per request for fulfillments, tracking and events, with the change in the body', async () => {
    const { shop } = await fresh();
    const hook = await receiver();
    const order = shop.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] });
    shop.subscribeWebhook({ topic: 'orders/updated', address: hook.url });
    const fo = order.fulfillmentOrders[0]!.id;
    const done = await gql(shop, FULFIL, { f: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: fo }] } });
    const fulfillmentId = done.data.fulfillmentCreate.fulfillment.id;
    await shop.webhooksIdle();
    const track = `mutation($id: ID!) { fulfillmentTrackingInfoUpdate(fulfillmentId: $id, trackingInfoInput: { company: "UPS", number: "1Z1" }) {
      userErrors { message } } }`;
    await gql(shop, track, { id: fulfillmentId });
    await shop.webhooksIdle();
    const event = 'mutation($e: FulfillmentEventInput!) { fulfillmentEventCreate(fulfillmentEvent: $e) { userErrors { message } } }';
    await gql(shop, event, { e: { fulfillmentId, status: 'IN_TRANSIT' } });
    await shop.webhooksIdle();
    const bodies = hook.got.map((r) => r.body);
    expect(bodies).toHaveLength(3);
    expect(bodies[0]).toMatchObject({ fulfillment_status: 'fulfilled', fulfillments: [{ status: 'success', tracking_number: null }] });
    expect(bodies[1].fulfillments[0]).toMatchObject({ tracking_company: 'UPS', tracking_number: '1Z1', tracking_numbers: ['1Z1'] });
    expect(bodies[2].fulfillments[0]).toMatchObject({ shipment_status: 'in_transit' });
    expect(new Set(hook.got.map((r) => r.headers['x-shopify-event-id'])).size).toBe(3);
  });

  it('retries a failing or silent endpoint with the same ids and bytes until it answers 2xx', async () => {
    const { shop } = await fresh({ webhooks: { backoffBaseMs: 5, timeoutMs: 200 } });
    const hook = await receiver((n) => (n === 1 ? 500 : n === 2 ? 'hang' : n === 3 ? 302 : 200));
    shop.subscribeWebhook({ topic: 'orders/create', address: hook.url, secret: 'own-secret' });
    shop.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] });
    await shop.webhooksIdle();
    expect(hook.got).toHaveLength(4);
    expect(new Set(hook.got.map((r) => r.headers['x-shopify-webhook-id'])).size).toBe(1);
    expect(new Set(hook.got.map((r) => r.headers['x-shopify-event-id'])).size).toBe(1);
    expect(new Set(hook.got.map((r) => r.raw.toString('base64'))).size).toBe(1);
    expect(hook.got.every((r) => verified(r, 'own-secret'))).toBe(true);
    expect(shop.stats().webhooks).toMatchObject({ attempted: 4, succeeded: 1, failed: 3, retries: 3, gaveUp: 0 });
    expect(shop.webhookSubscriptions()[0]).toMatchObject({ consecutiveFailures: 0, delivered: 1, failedAttempts: 3, ownSecret: true });
  });

  it('gives up after 8 retries and deletes the subscription after 8 consecutive failures', async () => {
    const { shop } = await fresh();
    const hook = await receiver(() => 500);
    const sub = shop.subscribeWebhook({ topic: 'orders/create', address: hook.url });
    shop.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] });
    await shop.webhooksIdle();
    expect(hook.got).toHaveLength(9); // the first attempt and 8 retries
    expect(shop.webhookSubscriptions()).toEqual([]);
    expect(shop.stats().webhooks).toMatchObject({ attempted: 9, failed: 9, retries: 8, gaveUp: 1, subscriptionsDeleted: 1 });
    shop.createOrder({ lineItems: [{ sku: 'B', quantity: 1 }] });
    await shop.webhooksIdle();
    expect(hook.got).toHaveLength(9);
    expect(shop.unsubscribeWebhook(sub.id)).toBe(false);
  });

  it('duplicates, delays out of order, or suppresses deliveries on demand', async () => {
    const { shop } = await fresh({ seed: 3 });
    const hook = await receiver();
    shop.subscribeWebhook({ topic: 'orders/create', address: hook.url });
    shop.setFaults({ webhookDuplicateRate: 1 });
    shop.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] });
    await shop.webhooksIdle();
    expect(hook.got).toHaveLength(2);
    expect(hook.got[0]!.headers['x-shopify-event-id']).toBe(hook.got[1]!.headers['x-shopify-event-id']);
    expect(hook.got[0]!.headers['x-shopify-webhook-id']).not.toBe(hook.got[1]!.headers['x-shopify-webhook-id']);
    expect(hook.got.every((r) => verified(r))).toBe(true);
    shop.setFaults({ webhookDuplicateRate: 0, webhookDelayMs: { min: 0, max: 400 } });
    const names = shop.generateOrders({ count: 20, seed: 4 }).map((o) => o.name);
    await shop.webhooksIdle();
    const arrived = hook.got.slice(2).map((r) => r.body.name as string);
    expect([...arrived].sort()).toEqual([...names].sort());
    expect(arrived).not.toEqual(names);
    shop.setFaults({ webhookDelayMs: null, webhooksDisabled: true });
    shop.createOrder({ lineItems: [{ sku: 'B', quantity: 1 }] });
    await shop.webhooksIdle();
    expect(hook.got).toHaveLength(22);
    expect(shop.stats().webhooks).toMatchObject({ duplicates: 1, suppressed: 1 });
    expect(() => shop.setFaults({ webhookDelayMs: { min: 5, max: 1 } })).toThrow(/webhookDelayMs/);
  });

  it('manages subscriptions through /_fake/webhooks, and close() stops deliveries', async () => {
    // A backoff far longer than the checks below take on a loaded machine (at 50 ms the retry
    // sometimes came before the queue was read, and the test saw two attempts).
    const { shop } = await fresh({ webhooks: { backoffBaseMs: 5_000 } });
    const hook = await receiver(() => 500);
    const bad = await admin(shop, 'POST', 'webhooks', { topic: 'orders/deleted', address: hook.url });
    expect(bad.status).toBe(400);
    const made = await admin(shop, 'POST', 'webhooks', { topic: 'orders/create', address: hook.url });
    expect(made).toMatchObject({ status: 201, body: { topic: 'orders/create', address: hook.url, ownSecret: false } });
    const listed = await admin(shop, 'GET', 'webhooks');
    expect(listed.body).toMatchObject({ subscriptions: [{ id: made.body.id }], queue: { pending: 0, inFlight: 0 } });
    shop.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] });
    // The first attempt failed; its retry waits for the backoff.
    await vi.waitFor(async () => expect((await admin(shop, 'GET', 'webhooks')).body.queue).toEqual({ pending: 1, inFlight: 0 }));
    expect(hook.got).toHaveLength(1);
    expect(await admin(shop, 'DELETE', `webhooks/${made.body.legacyResourceId}`)).toMatchObject({ status: 200 });
    expect((await admin(shop, 'DELETE', `webhooks/${made.body.legacyResourceId}`)).status).toBe(404);
    shop.subscribeWebhook({ topic: 'orders/create', address: hook.url });
    shop.createOrder({ lineItems: [{ sku: 'B', quantity: 1 }] });
    await vi.waitFor(() => expect(hook.got.length).toBeGreaterThanOrEqual(2));
    await shop.close();
    await shop.webhooksIdle();
    const after = hook.got.length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hook.got.length).toBe(after);
  });
});

describe('fake Shopify import: command line', () => {
  it('takes --generate-orders up to 20000', () => {
    expect(parseCli(['--generate-orders', '5000'])).toMatchObject({ generateOrders: 5000, seedOrders: 0 });
    expect(() => parseCli(['--generate-orders', '20001'])).toThrow(/--generate-orders/);
  });
});
