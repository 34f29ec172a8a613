/**
 * The fake Shopify Admin API over real loopback HTTP: auth and tokens, schema validation,
 * the fulfillment-order state machine and its userErrors, tracking and events, the cost model
 * and throttling, faults (commit-then-drop above all), orders search and paging, the 60-day
 * window, the merchant page, the admin routes and the CLI.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeShopify, type FakeShopify, type FakeShopifyOptions } from '../fake-shopify';
import { CliError, parseCli } from '../fake-shopify/main';

const TOKEN = 'shpat_fake_dev_token';
const T0 = Date.parse('2026-11-20T10:00:00Z');
const DAY = 86_400_000;
const FULFIL = `mutation Fulfil($f: FulfillmentInput!) {
  fulfillmentCreate(fulfillment: $f) { fulfillment { id status trackingInfo { company number url } } userErrors { field message } } }`;
const EVENT = `mutation Event($e: FulfillmentEventInput!) {
  fulfillmentEventCreate(fulfillmentEvent: $e) { fulfillmentEvent { id status happenedAt } userErrors { field message } } }`;

const running: FakeShopify[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** A fake on a settable clock (clock.t), closed after the test. */
async function fresh(options: FakeShopifyOptions = {}): Promise<{ shop: FakeShopify; clock: { t: number } }> {
  const clock = { t: T0 };
  const shop = await startFakeShopify({ now: () => clock.t, ...options });
  running.push(shop);
  return { shop, clock };
}

async function gql(shop: FakeShopify, query: string, variables: object = {}, token: string | null = TOKEN, version = '2026-10') {
  const res = await fetch(`${shop.baseUrl}/admin/api/${version}/graphql.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { 'x-shopify-access-token': token }) },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : text };
}

const oneLine = (sku = 'A', quantity = 1) => ({ lineItems: [{ sku, quantity }] });
const fulfilAll = (foId: string, trackingInfo?: object) => ({
  f: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: foId }], trackingInfo },
});

describe('fake Shopify: access', () => {
  it('answers 401 without or with a wrong token, and only routes YYYY-MM versions', async () => {
    const { shop } = await fresh();
    const expected = { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' };
    expect(await gql(shop, '{ shop { name } }', {}, null)).toMatchObject({ status: 401, body: expected });
    expect(await gql(shop, '{ shop { name } }', {}, 'shpat_wrong')).toMatchObject({ status: 401, body: expected });
    const ok = await gql(shop, '{ shop { name } }');
    expect(ok).toMatchObject({ status: 200, body: { data: { shop: { name: 'Fake Shopify store' } } } });
    expect(ok.headers.get('x-shopify-api-version')).toBe('2026-10');
    expect((await gql(shop, '{ shop { name } }', {}, TOKEN, 'latest')).status).toBe(404);
    expect(shop.stats().unauthorized).toBe(2);
  });

  it('issues client-credentials tokens that work until they expire; a wrong secret gets none', async () => {
    const { shop, clock } = await fresh({ tokenLifetimeSeconds: 60 });
    const grant = (body: string, type: string) =>
      fetch(`${shop.baseUrl}/admin/oauth/access_token`, { method: 'POST', headers: { 'content-type': type }, body });
    const wrong = await grant(
      'grant_type=client_credentials&client_id=fake-client-id&client_secret=nope',
      'application/x-www-form-urlencoded',
    );
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_client' });
    const json = JSON.stringify({ grant_type: 'client_credentials', client_id: 'fake-client-id', client_secret: 'fake-client-secret' });
    const ok = (await (await grant(json, 'application/json')).json()) as { access_token: string; expires_in: number; scope: string };
    expect(ok.access_token).toMatch(/^shpat_/);
    expect(ok.expires_in).toBe(60);
    expect(ok.scope).toContain('write_merchant_managed_fulfillment_orders');
    expect((await gql(shop, '{ shop { name } }', {}, ok.access_token)).status).toBe(200);
    clock.t += 61_000;
    expect((await gql(shop, '{ shop { name } }', {}, ok.access_token)).status).toBe(401);
  });
});

describe('fake Shopify: schema', () => {
  it('answers genuine validation errors for a misspelt field or a wrong argument type', async () => {
    const { shop } = await fresh();
    const order = shop.createOrder(oneLine());
    const misspelt = await gql(shop, 'query($id: ID!) { order(id: $id) { id displayFulfilmentStatus } }', { id: order.id });
    expect(misspelt.status).toBe(200);
    expect(misspelt.body.data).toBeUndefined();
    expect(misspelt.body.errors[0]).toMatchObject({
      message: expect.stringContaining('displayFulfilmentStatus'),
      extensions: { code: 'undefinedField' },
    });
    const wrongType = await gql(shop, '{ orders(first: "ten") { nodes { id } } }');
    expect(wrongType.body.errors[0].message).toMatch(/Int cannot represent/);
    const badId = await gql(shop, '{ order(id: "123") { id } }');
    expect(badId.body.errors[0].message).toBe("Invalid global id '123'");
  });
});

describe('fake Shopify: fulfillments', () => {
  it('fulfils all remaining lines, then answers the closed-status userError to a repeat', async () => {
    const { shop } = await fresh();
    const order = shop.createOrder({
      lineItems: [
        { sku: 'A', quantity: 2 },
        { sku: 'B', quantity: 1 },
      ],
    });
    const fo = order.fulfillmentOrders[0]!.id;
    const first = await gql(shop, FULFIL, fulfilAll(fo));
    expect(first.body.data.fulfillmentCreate).toMatchObject({ fulfillment: { status: 'SUCCESS' }, userErrors: [] });
    const again = await gql(shop, FULFIL, fulfilAll(fo));
    expect(again.status).toBe(200);
    expect(again.body.data.fulfillmentCreate).toEqual({
      fulfillment: null,
      userErrors: [{ field: ['fulfillment'], message: `Fulfillment order ${fo} has an unfulfillable status= closed.` }],
    });
    expect(shop.order(order.legacyResourceId)).toMatchObject({
      displayFulfillmentStatus: 'FULFILLED',
      fulfillmentOrders: [{ status: 'CLOSED' }],
    });
    expect(shop.stats().mutationsApplied).toEqual({ fulfillmentCreate: 1 });
  });

  it('moves OPEN → IN_PROGRESS → CLOSED by quantities, refuses too many, and bumps updatedAt', async () => {
    const { shop, clock } = await fresh();
    const order = shop.createOrder({ lineItems: [{ sku: 'A', quantity: 3 }] });
    const fo = order.fulfillmentOrders[0]!;
    const part = (quantity: number) => ({
      f: {
        lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: fo.id, fulfillmentOrderLineItems: [{ id: fo.lineItems[0]!.id, quantity }] }],
      },
    });
    clock.t += 5_000;
    expect((await gql(shop, FULFIL, part(1))).body.data.fulfillmentCreate.userErrors).toEqual([]);
    let view = shop.order(order.id)!;
    expect(view).toMatchObject({ displayFulfillmentStatus: 'PARTIALLY_FULFILLED', updatedAt: '2026-11-20T10:00:05Z' });
    expect(view.fulfillmentOrders[0]).toMatchObject({ status: 'IN_PROGRESS', updatedAt: '2026-11-20T10:00:05Z' });
    const tooMany = await gql(shop, FULFIL, part(3));
    expect(tooMany.body.data.fulfillmentCreate.userErrors).toEqual([
      { field: ['fulfillment'], message: 'Invalid fulfillment order line item quantity requested.' },
    ]);
    expect((await gql(shop, FULFIL, part(2))).body.data.fulfillmentCreate.userErrors).toEqual([]);
    view = shop.order(order.id)!;
    expect(view.fulfillmentOrders[0]).toMatchObject({ status: 'CLOSED', lineItems: [{ remainingQuantity: 0 }] });
    expect(view.fulfillments).toHaveLength(2);
  });

  it('refuses fulfillment orders of two locations or two orders in one call, and held ones', async () => {
    const { shop } = await fresh();
    const split = shop.createOrder({
      lineItems: [
        { sku: 'A', quantity: 1 },
        { sku: 'B', quantity: 1 },
      ],
      splitLocations: true,
    });
    const [fo1, fo2] = split.fulfillmentOrders;
    expect([fo1!.locationId, fo2!.locationId]).toEqual(['gid://shopify/Location/1', 'gid://shopify/Location/2']);
    const both = { f: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: fo1!.id }, { fulfillmentOrderId: fo2!.id }] } };
    expect((await gql(shop, FULFIL, both)).body.data.fulfillmentCreate.userErrors).toEqual([
      { field: ['fulfillment'], message: 'All fulfillment orders must be assigned to the same location.' },
    ]);
    const other = shop.createOrder(oneLine());
    const twoOrders = {
      f: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: fo1!.id }, { fulfillmentOrderId: other.fulfillmentOrders[0]!.id }] },
    };
    expect((await gql(shop, FULFIL, twoOrders)).body.data.fulfillmentCreate.userErrors[0].message).toBe(
      'All fulfillment orders must belong to the same order.',
    );
    const held = shop.createOrder({ ...oneLine(), fulfillmentOrderStatus: 'ON_HOLD' }).fulfillmentOrders[0]!.id;
    expect((await gql(shop, FULFIL, fulfilAll(held))).body.data.fulfillmentCreate.userErrors[0].message).toBe(
      `Fulfillment order ${held} has an unfulfillable status= on_hold.`,
    );
    const unknown = await gql(shop, FULFIL, fulfilAll('gid://shopify/FulfillmentOrder/1'));
    expect(unknown.body.data.fulfillmentCreate.userErrors[0].field).toEqual([
      'fulfillment',
      'lineItemsByFulfillmentOrder',
      '0',
      'fulfillmentOrderId',
    ]);
    expect(shop.stats().mutationsApplied).toEqual({});
  });

  it('builds the tracking URL itself for a known carrier, keeps it for others, and replaces tracking on update', async () => {
    const { shop } = await fresh();
    const fo = (sku: string) => shop.createOrder(oneLine(sku)).fulfillmentOrders[0]!.id;
    const dhl = await gql(shop, FULFIL, fulfilAll(fo('A'), { company: 'DHL Express', number: 'JD0001', url: 'https://example.com/mine' }));
    expect(dhl.body.data.fulfillmentCreate.fulfillment.trackingInfo).toEqual([
      { company: 'DHL Express', number: 'JD0001', url: 'https://www.dhl.com/en/express/tracking.html?AWB=JD0001&brand=DHL' },
    ]);
    const own = await gql(
      shop,
      FULFIL,
      fulfilAll(fo('B'), { company: 'Acme Couriers', numbers: ['1', '2'], urls: ['https://acme.example/1'] }),
    );
    const fulfillment = own.body.data.fulfillmentCreate.fulfillment;
    expect(fulfillment.trackingInfo).toEqual([
      { company: 'Acme Couriers', number: '1', url: 'https://acme.example/1' },
      { company: 'Acme Couriers', number: '2', url: null },
    ]);
    const update = `mutation($id: ID!, $t: FulfillmentTrackingInput!) {
      fulfillmentTrackingInfoUpdate(fulfillmentId: $id, trackingInfoInput: $t) { fulfillment { trackingInfo { company number url } } userErrors { message } } }`;
    const updated = await gql(shop, update, { id: fulfillment.id, t: { company: 'UPS', number: '1Z9' } });
    expect(updated.body.data.fulfillmentTrackingInfoUpdate.fulfillment.trackingInfo).toEqual([
      { company: 'UPS', number: '1Z9', url: 'https://www.ups.com/WebTracking?loc=en_US&requester=ST&trackNums=1Z9' },
    ]);
  });

  it('appends every fulfillment event (no dedupe), shows the latest by happenedAt, and rejects a bad status', async () => {
    const { shop } = await fresh();
    const order = shop.createOrder(oneLine());
    const f = (await gql(shop, FULFIL, fulfilAll(order.fulfillmentOrders[0]!.id))).body.data.fulfillmentCreate.fulfillment;
    const event = (status: string, happenedAt: string) =>
      gql(shop, EVENT, { e: { fulfillmentId: f.id, status, happenedAt, city: 'Köln' } });
    await event('IN_TRANSIT', '2026-11-20T08:00:00Z');
    await event('IN_TRANSIT', '2026-11-20T08:00:00Z');
    await event('DELIVERED', '2026-11-20T09:30:00Z');
    await event('OUT_FOR_DELIVERY', '2026-11-20T09:00:00Z'); // arrives late: not the latest
    const bad = await event('SHIPPED', '2026-11-20T09:45:00Z');
    expect(bad.body.errors[0].message).toMatch(/"SHIPPED" does not exist in "FulfillmentEventStatus"/);
    const view = shop.order(order.id)!.fulfillments[0]!;
    expect(view.events.map((e) => e.status)).toEqual(['IN_TRANSIT', 'IN_TRANSIT', 'DELIVERED', 'OUT_FOR_DELIVERY']);
    expect(view).toMatchObject({ displayStatus: 'DELIVERED', deliveredAt: '2026-11-20T09:30:00Z' });
    const missing = await gql(shop, EVENT, { e: { fulfillmentId: 'gid://shopify/Fulfillment/9', status: 'DELIVERED' } });
    expect(missing.body.data.fulfillmentEventCreate.userErrors).toEqual([
      { field: ['fulfillmentEvent', 'fulfillmentId'], message: 'Fulfillment does not exist.' },
    ]);
  });

  it('adds tags as a set union and replaces the note', async () => {
    const { shop, clock } = await fresh();
    const order = shop.createOrder({ ...oneLine(), tags: ['vip'], note: 'old' });
    clock.t += 60_000;
    const tags = await gql(
      shop,
      'mutation($id: ID!, $t: [String!]!) { tagsAdd(id: $id, tags: $t) { node { id } userErrors { message } } }',
      {
        id: order.id,
        t: ['VIP', 'label-rejected, rush'],
      },
    );
    expect(tags.body.data.tagsAdd).toEqual({ node: { id: order.id }, userErrors: [] });
    const note = await gql(shop, 'mutation($i: OrderInput!) { orderUpdate(input: $i) { order { note tags } userErrors { message } } }', {
      i: { id: order.id, note: 'Label rejected: bad zip' },
    });
    expect(note.body.data.orderUpdate.order).toEqual({ note: 'Label rejected: bad zip', tags: ['vip', 'label-rejected', 'rush'] });
    expect(shop.order(order.id)!.updatedAt).toBe('2026-11-20T10:01:00Z');
  });
});

describe('fake Shopify: fulfillmentOrderMove', () => {
  const MOVE = `mutation Move($id: ID!, $to: ID!, $lines: [FulfillmentOrderLineItemInput!]) {
    fulfillmentOrderMove(id: $id, newLocationId: $to, fulfillmentOrderLineItems: $lines) {
      movedFulfillmentOrder { id status assignedLocation { location { legacyResourceId } } lineItems(first: 10) { nodes { sku totalQuantity remainingQuantity } } }
      originalFulfillmentOrder { id status lineItems(first: 10) { nodes { sku totalQuantity remainingQuantity } } }
      remainingFulfillmentOrder { id }
      userErrors { field message } } }`;
  const TO_3 = 'gid://shopify/Location/3';

  it('all lines of an unfulfilled FO: the FO itself is reassigned; some lines: a new FO at the new location; a closed FO is refused', async () => {
    const { shop, clock } = await fresh();
    const order = shop.createOrder({
      lineItems: [
        { sku: 'A', quantity: 2 },
        { sku: 'B', quantity: 1 },
      ],
      splitLocations: true,
    });
    const [atOne, atTwo] = order.fulfillmentOrders;
    // Some lines: one of A's two units moves; a new FO at location 3 holds it, the original keeps the rest.
    clock.t += 5_000;
    const some = (await gql(shop, MOVE, { id: atOne!.id, to: TO_3, lines: [{ id: atOne!.lineItems[0]!.id, quantity: 1 }] })).body.data
      .fulfillmentOrderMove;
    expect(some.userErrors).toEqual([]);
    expect(some.movedFulfillmentOrder.id).not.toBe(atOne!.id);
    expect(some.movedFulfillmentOrder).toMatchObject({
      status: 'OPEN',
      assignedLocation: { location: { legacyResourceId: '3' } },
      lineItems: { nodes: [{ sku: 'A', totalQuantity: 1, remainingQuantity: 1 }] },
    });
    expect(some.originalFulfillmentOrder).toMatchObject({ id: atOne!.id, lineItems: { nodes: [{ sku: 'A', totalQuantity: 1 }] } });
    expect(some.remainingFulfillmentOrder).toBeNull();
    expect(shop.order(order.id)!.updatedAt > order.updatedAt).toBe(true);
    // All lines of location 2's FO (none fulfilled): the same FO, now at location 3.
    const all = (await gql(shop, MOVE, { id: atTwo!.id, to: TO_3 })).body.data.fulfillmentOrderMove;
    expect(all.userErrors).toEqual([]);
    expect(all.movedFulfillmentOrder.id).toBe(atTwo!.id);
    expect(all.originalFulfillmentOrder.id).toBe(atTwo!.id);
    expect(shop.order(order.id)!.fulfillmentOrders.map((fo) => fo.locationId)).toEqual(['gid://shopify/Location/1', TO_3, TO_3]);
    // More than remains, and a closed FO: refused, nothing changed.
    const over = (await gql(shop, MOVE, { id: atOne!.id, to: TO_3, lines: [{ id: atOne!.lineItems[0]!.id, quantity: 5 }] })).body.data
      .fulfillmentOrderMove;
    expect(over.userErrors).toEqual([
      { field: ['fulfillmentOrderLineItems'], message: 'Invalid fulfillment order line item quantity requested.' },
    ]);
    await gql(shop, FULFIL, fulfilAll(atOne!.id));
    const closed = (await gql(shop, MOVE, { id: atOne!.id, to: TO_3 })).body.data.fulfillmentOrderMove;
    expect(closed.movedFulfillmentOrder).toBeNull();
    expect(closed.userErrors[0].message).toMatch(/is closed and cannot be moved/);
    expect(shop.stats().mutationsApplied).toMatchObject({ fulfillmentOrderMove: 2 });
  });
});

describe('fake Shopify: cost and throttling', () => {
  it('reports requested and actual cost and charges only the actual', async () => {
    const { shop, clock } = await fresh();
    const order = shop.createOrder({
      lineItems: [
        { sku: 'A', quantity: 1 },
        { sku: 'B', quantity: 2 },
      ],
    });
    const query = `query($id: ID!) { order(id: $id) { id fulfillmentOrders(first: 5) { nodes { id lineItems(first: 10) { nodes { id remainingQuantity } } } } } }`;
    const res = await gql(shop, query, { id: order.id });
    // order 1 + connection 2 + 5 × (FO 1 + lines 2 + 10 × 1); actual: 1 FO with 2 lines
    expect(res.body.extensions.cost).toEqual({
      requestedQueryCost: 68,
      actualQueryCost: 8,
      throttleStatus: { maximumAvailable: 2000, currentlyAvailable: 1992, restoreRate: 100 },
    });
    clock.t += 1000;
    expect(shop.throttleStatus().currentlyAvailable).toBe(2000);
    expect(shop.stats().pointsSpent).toBe(8);
  });

  it('answers THROTTLED with HTTP 200 and no data when the bucket is short, until it refills', async () => {
    const { shop, clock } = await fresh({ bucket: { maximumAvailable: 40, restoreRate: 2 } });
    const query = '{ orders(first: 38) { nodes { id } } }'; // requested 40, actual 2
    expect((await gql(shop, query)).body.extensions.cost.throttleStatus.currentlyAvailable).toBe(38);
    const throttled = await gql(shop, query);
    expect(throttled.status).toBe(200);
    expect(throttled.body).toEqual({
      errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' } }],
      extensions: {
        cost: {
          requestedQueryCost: 40,
          actualQueryCost: null,
          throttleStatus: { maximumAvailable: 40, currentlyAvailable: 38, restoreRate: 2 },
        },
      },
    });
    clock.t += 1000;
    expect((await gql(shop, query)).body.data).toEqual({ orders: { nodes: [] } });
    expect(shop.stats()).toMatchObject({ throttled: 1, http429: 0 });
  });

  it('answers THROTTLED as HTTP 429 with Retry-After when set to', async () => {
    const { shop } = await fresh({ bucket: { maximumAvailable: 40, restoreRate: 2 }, throttleAs: 'http-429' });
    await gql(shop, '{ orders(first: 38) { nodes { id } } }');
    const res = await gql(shop, '{ orders(first: 38) { nodes { id } } }');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1.0');
    expect(res.body.errors[0].extensions.code).toBe('THROTTLED');
    expect(shop.stats()).toMatchObject({ throttled: 1, http429: 1 });
  });

  it('refuses a query above the 1000-point cap, and bad page sizes, input arrays and depth, without charging', async () => {
    const { shop } = await fresh();
    const big = await gql(shop, '{ orders(first: 250) { nodes { id fulfillmentOrders(first: 10) { nodes { id } } } } }');
    expect(big.body.errors[0]).toMatchObject({
      message: 'Query cost is 3252, which exceeds the single query max cost limit (1000).',
      extensions: { code: 'MAX_COST_EXCEEDED' },
    });
    expect((await gql(shop, '{ orders(first: 251) { nodes { id } } }')).body.errors[0].message).toMatch(/between 0 and 250/);
    expect((await gql(shop, '{ orders { nodes { id } } }')).body.errors[0].message).toBe('you must provide one of first or last');
    const tags = Array.from({ length: 251 }, (_, i) => `t${i}`);
    const wide = await gql(shop, 'mutation($t: [String!]!) { tagsAdd(id: "gid://shopify/Order/1", tags: $t) { userErrors { message } } }', {
      t: tags,
    });
    expect(wide.body.errors[0].extensions.code).toBe('MAX_INPUT_SIZE_EXCEEDED');
    const nest = (depth: number): string => (depth === 0 ? 'id' : `order { fulfillmentOrders(first: 1) { nodes { ${nest(depth - 1)} } } }`);
    const deep = await gql(shop, `{ fulfillmentOrder(id: "gid://shopify/FulfillmentOrder/1") { ${nest(5)} } }`);
    expect(deep.body.errors[0].extensions.code).toBe('MAX_DEPTH_EXCEEDED');
    expect(shop.throttleStatus().currentlyAvailable).toBe(2000);
  });
});

describe('fake Shopify: faults', () => {
  it('commit-then-drop applies the mutation, then cuts the connection; the retry meets the closed userError', async () => {
    const { shop } = await fresh();
    const order = shop.createOrder(oneLine());
    const fo = order.fulfillmentOrders[0]!.id;
    shop.setFaults({ failNext: [{ operation: 'fulfillmentCreate', kind: 'commit-then-drop' }] });
    expect((await gql(shop, '{ shop { name } }')).status).toBe(200); // the entry waits for its operation
    await expect(gql(shop, FULFIL, fulfilAll(fo, { company: 'DHL Express', number: 'X1' }))).rejects.toThrow();
    expect(shop.order(order.id)!.fulfillments).toHaveLength(1);
    expect(shop.stats()).toMatchObject({ dropped: 1, mutationsApplied: { fulfillmentCreate: 1 } });
    const retry = await gql(shop, FULFIL, fulfilAll(fo, { company: 'DHL Express', number: 'X1' }));
    expect(retry.body.data.fulfillmentCreate.userErrors[0].message).toMatch(/unfulfillable status= closed/);
  });

  it("a failNext entry's search waits for a request whose variables have (or lack) its text", async () => {
    const { shop } = await fresh();
    shop.createOrder(oneLine());
    const search = 'query($q: String) { orders(first: 10, query: $q) { nodes { name } } }';
    shop.setFaults({ failNext: [{ operation: 'orders', search: { lacks: 'id:' }, kind: '500' }] });
    expect((await gql(shop, search, { q: 'id:1 OR id:2' })).status).toBe(200); // named ids: not this entry's
    expect((await gql(shop, search, { q: "updated_at:>='2026-01-01'" })).status).toBe(500);
    shop.setFaults({ failNext: [{ operation: 'orders', search: { has: 'status:open' }, kind: '500' }] });
    expect((await gql(shop, search, { q: 'status:closed' })).status).toBe(200);
    expect((await gql(shop, search, { q: 'status:open' })).status).toBe(500);
    expect(() => shop.setFaults({ failNext: [{ kind: '500', search: { has: '' } }] })).toThrow(/failNext\.0\.search\.has/);
  });

  it('drop-before-commit, 500, 503 and down answer nothing or an error and apply nothing', async () => {
    const { shop } = await fresh();
    const order = shop.createOrder(oneLine());
    const vars = fulfilAll(order.fulfillmentOrders[0]!.id);
    shop.setFaults({ failNext: [{ kind: 'drop-before-commit' }, { kind: '500' }, { kind: '503' }] });
    await expect(gql(shop, FULFIL, vars)).rejects.toThrow();
    expect(await gql(shop, FULFIL, vars)).toMatchObject({ status: 500, body: { errors: 'Internal Server Error' } });
    const unavailable = await gql(shop, FULFIL, vars);
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('content-type')).toMatch(/text\/html/);
    shop.setFaults({ down: true });
    await expect(gql(shop, '{ shop { name } }')).rejects.toThrow();
    expect(shop.order(order.id)!.fulfillments).toHaveLength(0);
    expect(shop.stats()).toMatchObject({ droppedBeforeCommit: 1, serverErrors: 1, unavailable: 1, refusedWhileDown: 1 });
    expect(() => shop.setFaults({ failNext: [{ kind: 'explode' as never }] })).toThrow(/failNext\.0\.kind/);
    expect(() => shop.setFaults({ hangRate: 2 })).toThrow(/hangRate/);
  });
});

describe('fake Shopify: orders', () => {
  async function fiveOrders() {
    const fixture = await fresh();
    const orders = [0, 1, 2, 3, 4].map((i) =>
      fixture.shop.createOrder({ lineItems: [{ sku: `S${i}`, quantity: 2 }], createdAt: `2026-11-0${i + 1}T00:00:00Z` }),
    );
    await gql(fixture.shop, FULFIL, fulfilAll(orders[1]!.fulfillmentOrders[0]!.id)); // #1002 shipped
    const fo = orders[2]!.fulfillmentOrders[0]!;
    const lines = [{ id: fo.lineItems[0]!.id, quantity: 1 }];
    await gql(fixture.shop, FULFIL, {
      f: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: fo.id, fulfillmentOrderLineItems: lines }] },
    });
    return fixture;
  }
  const names = (res: { body: any }) => res.body.data.orders.nodes.map((n: { name: string }) => n.name);

  it('filters by updated_at and fulfillment_status with AND, OR, NOT and quoted values', async () => {
    const { shop } = await fiveOrders();
    const q = `updated_at:>='2026-11-03T00:00:00Z' AND (fulfillment_status:unshipped OR fulfillment_status:partial)`;
    const search = 'query($q: String) { orders(first: 10, query: $q, sortKey: UPDATED_AT) { nodes { name } } }';
    expect(names(await gql(shop, search, { q }))).toEqual(['#1004', '#1005', '#1003']);
    expect(names(await gql(shop, search, { q: 'NOT fulfillment_status:shipped created_at:<2026-11-03' }))).toEqual(['#1001']);
    expect(names(await gql(shop, search, { q: 'fulfilment_status:shipped' }))).toHaveLength(5); // unknown filter: ignored
  });

  it('pages with opaque cursors in sort order, forwards and reversed', async () => {
    const { shop } = await fiveOrders();
    const page =
      'query($after: String, $r: Boolean) { orders(first: 2, after: $after, sortKey: UPDATED_AT, reverse: $r) { edges { cursor node { name } } pageInfo { hasNextPage endCursor } } }';
    const collect = async (reverse: boolean) => {
      const seen: string[] = [];
      let after: string | null = null;
      for (let i = 0; i < 5; i++) {
        const res = await gql(shop, page, { after, r: reverse });
        const { edges, pageInfo } = res.body.data.orders;
        seen.push(...edges.map((e: { node: { name: string } }) => e.node.name));
        expect(edges[0].cursor).toMatch(/^[A-Za-z0-9+/=]+$/);
        if (!pageInfo.hasNextPage) return seen;
        after = pageInfo.endCursor;
      }
      throw new Error('paging never ended');
    };
    expect(await collect(false)).toEqual(['#1001', '#1004', '#1005', '#1002', '#1003']);
    expect(await collect(true)).toEqual(['#1003', '#1002', '#1005', '#1004', '#1001']);
  });

  it('hides orders older than 60 days unless the window is off', async () => {
    const { shop } = await fresh();
    const old = shop.createOrder({ ...oneLine(), createdAt: new Date(T0 - 61 * DAY).toISOString() });
    shop.createOrder({ ...oneLine(), createdAt: new Date(T0 - 59 * DAY).toISOString() });
    expect(names(await gql(shop, '{ orders(first: 5) { nodes { name } } }'))).toEqual(['#1002']);
    expect((await gql(shop, 'query($id: ID!) { order(id: $id) { id } }', { id: old.id })).body.data.order).toBeNull();
    expect(shop.order(old.id)).toMatchObject({ visible: false });
    const all = (await fresh({ orderVisibilityDays: null })).shop;
    all.createOrder({ ...oneLine(), createdAt: new Date(T0 - 400 * DAY).toISOString() });
    expect(names(await gql(all, '{ orders(first: 5) { nodes { name } } }'))).toEqual(['#1001']);
  });
});

describe('fake Shopify: page, admin routes and CLI', () => {
  it('shows orders as a merchant would, with every value escaped', async () => {
    const { shop } = await fresh();
    const order = shop.createOrder({ ...oneLine(), note: '<script>alert(1)</script>', tags: ['<b>x</b>'] });
    const f = (await gql(shop, FULFIL, fulfilAll(order.fulfillmentOrders[0]!.id, { company: 'UPS', number: '1Z"9' }))).body.data
      .fulfillmentCreate.fulfillment;
    await gql(shop, EVENT, { e: { fulfillmentId: f.id, status: 'IN_TRANSIT', message: 'Left <hub>' } });
    const res = await fetch(`${shop.baseUrl}/`);
    const html = await res.text();
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(html).not.toMatch(/<script>|<b>x|<hub>/);
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(html).toContain('href="https://www.ups.com/WebTracking?loc=en_US&#38;requester=ST&#38;trackNums=1Z%229"');
    expect(html).toContain('In transit</b> — Left &#60;hub&#62;');
  });

  it('seeds, reads and steers the fake through /_fake routes', async () => {
    const { shop } = await fresh();
    const call = (method: string, route: string, body?: unknown) =>
      fetch(`${shop.baseUrl}/_fake/${route}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
    const created = await call('POST', 'orders', { lineItems: [{ sku: 'A', quantity: 1 }], tags: ['t'] });
    expect(created.status).toBe(201);
    const view = (await created.json()) as { legacyResourceId: string };
    const bad = await call('POST', 'orders', { lineItems: [{ sku: 'A', quantity: 0 }] });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('lineItems.0.quantity');
    expect(await (await call('GET', `orders/${view.legacyResourceId}`)).json()).toMatchObject({ name: '#1001', tags: ['t'] });
    expect((await call('GET', 'orders/999')).status).toBe(404);
    expect(((await (await call('GET', 'orders')).json()) as { orders: unknown[] }).orders).toHaveLength(1);
    expect((await call('POST', 'faults', { serverErrorRate: 5 })).status).toBe(400);
    expect(await (await call('POST', 'bucket', { maximumAvailable: 40, restoreRate: 2 })).json()).toEqual({
      maximumAvailable: 40,
      currentlyAvailable: 40,
      restoreRate: 2,
    });
    await gql(shop, '{ shop { name } }');
    expect(await (await call('GET', 'stats')).json()).toMatchObject({ requests: 1, byOperation: { shop: 1 } });
    expect(await (await call('POST', 'stats/reset')).json()).toMatchObject({ requests: 0, byOperation: {} });
  });

  it('runs from the command line, seeds orders, and stops on SIGTERM', async () => {
    expect(parseCli(['--bucket', '40/2', '--visibility-days', 'all'])).toMatchObject({
      options: { bucket: { maximumAvailable: 40, restoreRate: 2 }, orderVisibilityDays: null },
    });
    expect(() => parseCli(['--bucket', '40'])).toThrow(CliError);
    expect(() => parseCli(['--throttle-as', '418'])).toThrow(/--throttle-as/);
    const root = path.resolve(__dirname, '..');
    // node --import tsx, not tsx's CLI: that one relays SIGTERM to its child and, if the child does
    // not confirm within 30 ms (a loaded machine), kills it and exits 143 itself.
    const child = spawn(process.execPath, ['--import', 'tsx', 'fake-shopify/main.ts', '--port', '0', '--seed-orders', '3'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const baseUrl = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const match = /fake Shopify listening on (http:\/\/\S+)/.exec(out);
          if (match) resolve(match[1]!);
        });
        void exited.then((code) => reject(new Error(`exited ${code} before listening`)));
      });
      const list = (await (await fetch(`${baseUrl}/_fake/orders`)).json()) as { orders: unknown[] };
      expect(list.orders).toHaveLength(3);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
