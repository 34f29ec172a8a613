/**
 * The fake WooCommerce store serving an order import, over real HTTP on loopback: bulk
 * generation, paging with modified_after in a UTC+10 store (offset drift against keyset
 * paging), order edits and date_modified, shipping methods, and webhooks (ping, signature over
 * the raw body, order.created's age rule, auto-disable, faults, close).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeWooCommerce, type FakeWooCommerce, type FakeWooCommerceOptions } from '../fake-woocommerce';
import { parseCli } from '../fake-woocommerce/main';
import { waitFor } from './helpers/wait';

const BASIC = `Basic ${Buffer.from('ck_fake_dev_key:cs_fake_dev_secret').toString('base64')}`;
const LINE = { sku: 'MUG-BLUE', name: 'Mug', quantity: 1, price: '12.50' };
const SECRET = 'whsec-import-test';

const running: FakeWooCommerce[] = [];
const receivers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((f) => f.close()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function start(options: FakeWooCommerceOptions = {}): Promise<FakeWooCommerce> {
  const fake = await startFakeWooCommerce(options);
  running.push(fake);
  return fake;
}

/** A settable clock (the store keeps one-second granularity). */
function clock(iso: string): { now: () => number; set: (iso: string) => void; add: (seconds: number) => void } {
  let ms = Date.parse(iso);
  return { now: () => ms, set: (next) => (ms = Date.parse(next)), add: (s) => (ms += s * 1000) };
}

async function call(
  fake: FakeWooCommerce,
  method: string,
  route: string,
  body?: unknown,
): Promise<{ status: number; headers: Headers; json: any }> {
  const response = await fetch(`${fake.baseUrl}/wp-json/${route}`, {
    method,
    headers: { authorization: BASIC, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, json: await response.json() };
}

async function admin(fake: FakeWooCommerce, method: string, route: string, body?: unknown): Promise<{ status: number; json: any }> {
  const answer = await fetch(`${fake.baseUrl}/_fake/${route}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: answer.status, json: await answer.json() };
}

interface Hit {
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: string;
}

/** A webhook endpoint that keeps every request's raw bytes; `answer` gives the status, or null to never answer. */
async function receiver(answer: (hit: Hit) => number | null = () => 200) {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const hit = { headers: req.headers, raw, body: raw.toString('utf8') };
      hits.push(hit);
      const status = answer(hit);
      if (status !== null) res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const handle = {
    url: `http://127.0.0.1:${port}/hooks/woo`,
    hits,
    deliveries: () => hits.filter((h) => h.headers['x-wc-webhook-signature'] !== undefined),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  receivers.push(handle);
  return handle;
}

const isPing = (hit: Hit): boolean => hit.headers['x-wc-webhook-signature'] === undefined;
const ids = (page: any[]): number[] => page.map((o) => o.id);
const minusOneSecond = (gmt: string): string => new Date(Date.parse(`${gmt}Z`) - 1000).toISOString().slice(0, 19);

describe('generated orders', () => {
  it('are deterministic, varied EU orders with 1–3 catalogue lines, a few shipping methods, and fast', async () => {
    const time = clock('2026-11-05T12:00:00Z');
    const [a, b] = [await start({ now: time.now }), await start({ now: time.now })];
    const made = a.generateOrders({ count: 1000, seed: 42 });
    b.generateOrders({ count: 1000, seed: 42 });
    expect([made.count, made.firstId, made.lastId]).toEqual([1000, 1001, 2000]);
    // Same seed, same orders (only the links name each fake's own port).
    const { _links: _a, ...first } = (await call(a, 'GET', `wc/v3/orders/${made.firstId + 7}`)).json;
    const { _links: _b, ...again } = (await call(b, 'GET', `wc/v3/orders/${made.firstId + 7}`)).json;
    expect(again).toEqual(first);
    expect(b.orders()).toEqual(a.orders());

    const views = a.orders();
    const orders = await Promise.all([1, 2, 3].map(async (p) => (await call(a, 'GET', `wc/v3/orders?per_page=100&page=${p}`)).json));
    const sample = orders.flat();
    const countries = new Set(sample.map((o: any) => o.shipping.country));
    expect(countries.size).toBeGreaterThanOrEqual(10);
    for (const c of countries) expect(['DE', 'FR', 'NL', 'BE', 'AT', 'IT', 'ES', 'PL', 'SE', 'DK', 'IE', 'PT', 'FI', 'CZ']).toContain(c);
    expect(sample.every((o: any) => o.line_items.length >= 1 && o.line_items.length <= 3 && o.currency === 'EUR')).toBe(true);
    const methods = views.map((v) => v.shippingMethod.methodId);
    const share = (id: string): number => methods.filter((m) => m === id).length / methods.length;
    expect(share('local_pickup')).toBeGreaterThan(0.02);
    expect(share('local_pickup')).toBeLessThan(0.09);
    expect(share('free_shipping') + share('flat_rate') + share('local_pickup')).toBe(1);
    const pickup = sample.find((o: any) => o.shipping_lines[0].method_id === 'local_pickup');
    expect(pickup.shipping_lines[0]).toMatchObject({ method_title: 'Local pickup', total: '0.00' });

    // Few products, each answering weight and dimensions as strings; one has none set.
    expect(made.productIds.length).toBeLessThanOrEqual(10);
    const products = await Promise.all(made.productIds.map(async (id) => (await call(a, 'GET', `wc/v3/products/${id}`)).json));
    for (const p of products) {
      expect(typeof p.weight).toBe('string');
      expect(Object.values(p.dimensions).every((d) => typeof d === 'string')).toBe(true);
    }
    expect(products.some((p) => p.weight === '')).toBe(true);
    expect(new Set(sample.flatMap((o: any) => o.line_items.map((l: any) => l.product_id)))).toEqual(
      new Set(sample.flatMap((o: any) => o.line_items.map((l: any) => l.product_id)).filter((id: number) => made.productIds.includes(id))),
    );

    const big = await start();
    const started = Date.now();
    big.generateOrders({ count: 5000 });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a seed names its shipping method (default flat_rate / "Flat rate") and refuses a bad one by field', async () => {
    const fake = await start();
    const plain = fake.createOrder({ lineItems: [LINE] });
    const pickup = fake.createOrder({ lineItems: [LINE], shippingMethod: { methodId: 'local_pickup', methodTitle: 'Local pickup' } });
    const line = async (id: number): Promise<any> => (await call(fake, 'GET', `wc/v3/orders/${id}`)).json.shipping_lines[0];
    expect(await line(plain.id)).toMatchObject({ method_id: 'flat_rate', method_title: 'Flat rate' });
    expect(await line(pickup.id)).toMatchObject({ method_id: 'local_pickup', method_title: 'Local pickup' });
    expect(() => fake.createOrder({ lineItems: [LINE], shippingMethod: { methodId: '', methodTitle: 'x' } })).toThrow(
      /shippingMethod\.methodId/,
    );
    expect(() => fake.generateOrders({ count: 20_001 })).toThrow(/count/);
    const generated = await admin(fake, 'POST', 'orders/generate', { count: 50, seed: 3, status: 'on-hold', spreadSeconds: 60 });
    expect(generated).toMatchObject({ status: 201, json: { count: 50, firstId: 1003, lastId: 1052 } });
    expect(fake.order(1052)!.status).toBe('on-hold');
    expect((await admin(fake, 'POST', 'orders/generate', { count: 0 })).json.details[0].field).toBe('count');
  });

  it('show the store time zone in date_* and GMT in date_*_gmt (Sydney +10/+11, Los Angeles −8/−7)', async () => {
    const now = Date.parse('2026-11-05T12:00:00Z');
    for (const [timezone, offsets] of [
      ['Australia/Sydney', [10, 11]],
      ['America/Los_Angeles', [-8, -7]],
    ] as const) {
      const fake = await start({ timezone, now: () => now });
      fake.generateOrders({ count: 200, spreadSeconds: 365 * 86_400 });
      const pages = await Promise.all([1, 2].map(async (p) => (await call(fake, 'GET', `wc/v3/orders?per_page=100&page=${p}`)).json));
      const seen = new Set<number>();
      for (const o of pages.flat()) {
        const hours = (Date.parse(`${o.date_created}Z`) - Date.parse(`${o.date_created_gmt}Z`)) / 3_600_000;
        expect(offsets).toContain(hours);
        seen.add(hours);
        expect((Date.parse(`${o.date_modified}Z`) - Date.parse(`${o.date_modified_gmt}Z`)) / 3_600_000).toBe(hours);
      }
      expect([...seen].sort()).toEqual([...offsets].sort());
    }
  });
});

describe('paging an import (UTC+10 store, 1,000 orders in ten minutes: many share a second)', () => {
  const END = '2026-11-05T12:00:00Z';
  const SINCE = '2026-11-05T11:00:00'; // UTC, no offset, with dates_are_gmt=true
  const list = (query: string): string =>
    `wc/v3/orders?status=processing&dates_are_gmt=true&orderby=modified&order=asc&per_page=100&${query}`;

  async function store(): Promise<{ fake: FakeWooCommerce; time: ReturnType<typeof clock> }> {
    const time = clock(END);
    const fake = await start({ timezone: 'Australia/Brisbane', now: time.now });
    fake.generateOrders({ count: 1000, seed: 9, spreadSeconds: 600 });
    return { fake, time };
  }

  /** modified_after = one second before the last modified seen (filters are strict), excluding the ids seen at that second. */
  async function keyset(fake: FakeWooCommerce, afterPage: (n: number, page: any[]) => void = () => {}): Promise<number[]> {
    const seen: number[] = [];
    let cursor = SINCE;
    let atCursor: number[] = [];
    for (let n = 1; n < 50; n++) {
      const exclude = atCursor.length > 0 ? `&exclude=${atCursor.join(',')}` : '';
      const page = (await call(fake, 'GET', list(`modified_after=${minusOneSecond(cursor)}${exclude}&page=1`))).json as any[];
      if (page.length === 0) return seen;
      seen.push(...ids(page));
      const last = page[page.length - 1].date_modified_gmt as string;
      const tied = ids(page.filter((o) => o.date_modified_gmt === last));
      atCursor = last === cursor ? [...atCursor, ...tied] : tied;
      cursor = last;
      afterPage(n, page);
    }
    throw new Error('keyset paging did not end');
  }

  it('modified_after + dates_are_gmt returns each order exactly once, sorted by modified then id, when nothing changes', async () => {
    const { fake } = await store();
    const pages: any[][] = [];
    for (let p = 1; p <= 10; p++) {
      const answer = await call(fake, 'GET', list(`modified_after=${SINCE}&page=${p}`));
      expect([answer.headers.get('x-wp-total'), answer.headers.get('x-wp-totalpages')]).toEqual(['1000', '10']);
      pages.push(answer.json);
    }
    const all = pages.flat();
    expect(new Set(ids(all)).size).toBe(1000);
    for (let i = 1; i < all.length; i++) {
      const [prev, next] = [all[i - 1], all[i]];
      expect(
        prev.date_modified_gmt < next.date_modified_gmt || (prev.date_modified_gmt === next.date_modified_gmt && prev.id < next.id),
      ).toBe(true);
    }
    expect(all.filter((o, i) => i > 0 && o.date_modified_gmt === all[i - 1].date_modified_gmt).length).toBeGreaterThan(100);
    const o = all[0];
    expect((Date.parse(`${o.date_modified}Z`) - Date.parse(`${o.date_modified_gmt}Z`)) / 3_600_000).toBe(10);
    // The same value without dates_are_gmt is read as Brisbane wall time: ten hours earlier in UTC.
    const local = await call(fake, 'GET', `wc/v3/orders?per_page=1&modified_after=2026-11-05T21:55:00`);
    const gmt = await call(fake, 'GET', `wc/v3/orders?per_page=1&modified_after=2026-11-05T11:55:00&dates_are_gmt=true`);
    expect(local.headers.get('x-wp-total')).toBe(gmt.headers.get('x-wp-total'));
  });

  it('offset paging skips an order when an earlier one is edited between pages; keyset paging does not', async () => {
    const offset = await store();
    const page1 = (await call(offset.fake, 'GET', list(`modified_after=${SINCE}&page=1`))).json as any[];
    const page2Before = (await call(offset.fake, 'GET', list(`modified_after=${SINCE}&page=2`))).json as any[];
    offset.time.add(5);
    offset.fake.editOrder(page1[0].id, { customerNote: 'Please ring twice.' });
    const seen = new Set(ids(page1));
    for (let p = 2; p <= 10; p++)
      for (const id of ids((await call(offset.fake, 'GET', list(`modified_after=${SINCE}&page=${p}`))).json)) seen.add(id);
    // The edited order moved to the end; everything after it moved up one, and the first of page 2 fell into page 1's slot.
    expect(seen.size).toBe(999);
    expect(seen.has(page2Before[0].id)).toBe(false);

    // The same orders (same seed), paged by keyset with the same edit after the first page.
    const keyed = await store();
    const seenByKey = await keyset(keyed.fake, (n, page) => {
      if (n !== 1) return;
      keyed.time.add(5);
      keyed.fake.editOrder(page[0].id, { customerNote: 'Please ring twice.' });
    });
    expect(new Set(seenByKey).size).toBe(1000);
    expect(seenByKey.length).toBe(1001); // the edited order comes again, as it should

    // modified_after = the last modified seen, as it stands: the filter is strict (>), so the rest of a tied second is lost.
    const naive: number[] = [];
    let after = SINCE;
    for (let n = 0; n < 50; n++) {
      const page = (await call(keyed.fake, 'GET', list(`modified_after=${after}&page=1`))).json as any[];
      if (page.length === 0) break;
      naive.push(...ids(page));
      after = page[page.length - 1].date_modified_gmt;
    }
    expect(new Set(naive).size).toBeLessThan(1000);
  });

  it('include and exclude filter; orderby=modified ties on the id (asc or desc); listTies "random" shuffles ties', async () => {
    const time = clock('2026-11-05T08:00:00Z');
    const fake = await start({ now: time.now });
    const made = [1, 2, 3, 4, 5].map(() => fake.createOrder({ lineItems: [LINE] }).id);
    const get = async (query: string): Promise<number[]> => ids((await call(fake, 'GET', `wc/v3/orders?orderby=modified&${query}`)).json);
    expect(await get('order=asc')).toEqual(made);
    expect(await get('order=desc')).toEqual([...made].reverse());
    expect(await get(`order=asc&exclude=${made[1]},${made[3]}`)).toEqual([made[0], made[2], made[4]]);
    expect(await get(`order=asc&include[]=${made[4]}&include[]=${made[0]}`)).toEqual([made[0], made[4]]);

    const shuffled = await start({ now: time.now, listTies: 'random' });
    for (let i = 0; i < 5; i++) shuffled.createOrder({ lineItems: [LINE] });
    const orders = new Set<string>();
    for (let i = 0; i < 10; i++)
      orders.add(JSON.stringify(ids((await call(shuffled, 'GET', 'wc/v3/orders?orderby=modified&order=asc')).json)));
    expect(orders.size).toBeGreaterThan(1);
    const byDate = new Set<string>();
    for (let i = 0; i < 5; i++) byDate.add(JSON.stringify(ids((await call(shuffled, 'GET', 'wc/v3/orders?orderby=date&order=asc')).json)));
    expect(byDate.size).toBe(1); // orderby=date is "date ID" in WooCommerce
  });
});

describe('order edits and date_modified', () => {
  it('editOrder and POST /_fake/orders/:id/edit stamp the fake clock, to the second, never backwards', async () => {
    const time = clock('2026-11-05T08:00:00.400Z');
    const fake = await start({ now: time.now });
    const { id } = fake.createOrder({ lineItems: [LINE] });
    time.set('2026-11-05T08:00:05.900Z');
    expect(fake.editOrder(id, { customerNote: 'Side door', shipping: { address_2: 'Flat 2' } })!.date_modified_gmt).toBe(
      '2026-11-05T08:00:05',
    );
    time.set('2026-11-05T08:00:03Z');
    expect(fake.editOrder(id, { customerNote: 'Back door' })!.date_modified_gmt).toBe('2026-11-05T08:00:05');
    time.set('2026-11-05T08:01:00Z');
    const edited = await admin(fake, 'POST', `orders/${id}/edit`, { status: 'on-hold' });
    expect(edited).toMatchObject({ status: 200, json: { status: 'on-hold', date_modified_gmt: '2026-11-05T08:01:00' } });
    const order = (await call(fake, 'GET', `wc/v3/orders/${id}`)).json;
    expect([order.customer_note, order.shipping.address_2]).toEqual(['Back door', 'Flat 2']);
    expect((await admin(fake, 'POST', 'orders/9999/edit', {})).status).toBe(404);
    expect((await admin(fake, 'POST', `orders/${id}/edit`, { status: 'shipped' })).json.details[0].field).toBe('status');
    expect(fake.editOrder(9999, {})).toBeNull();
  });

  it('API writes: a status PUT and a tracking item move date_modified, a note does not; the posts-table rule is a switch', async () => {
    const time = clock('2026-11-05T08:00:00Z');
    const fake = await start({ now: time.now });
    const { id } = fake.createOrder({ lineItems: [LINE] });
    const modified = (): string => fake.order(id)!.date_modified_gmt;
    time.set('2026-11-05T08:01:00Z');
    await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { note: 'Label printed' });
    expect(modified()).toBe('2026-11-05T08:00:00');
    await call(fake, 'POST', `wc-shipment-tracking/v3/orders/${id}/shipment-trackings`, {
      tracking_number: '1Z9',
      tracking_provider: 'UPS',
    });
    expect(modified()).toBe('2026-11-05T08:01:00');
    time.set('2026-11-05T08:02:00Z');
    await call(fake, 'PUT', `wc/v3/orders/${id}`, { status: 'completed' });
    expect(modified()).toBe('2026-11-05T08:02:00');

    const posts = await start({ now: time.now, modifiedOnSave: 'post-fields', trackingSave: 'save-meta-data' });
    const other = posts.createOrder({ lineItems: [LINE] }).id;
    time.set('2026-11-05T08:03:00Z');
    await call(posts, 'PUT', `wc/v3/orders/${other}`, { shipping: { address_2: 'Unit 4' } });
    await call(posts, 'POST', `wc-shipment-tracking/v3/orders/${other}/shipment-trackings`, {
      tracking_number: '1Z9',
      tracking_provider: 'UPS',
    });
    expect(posts.order(other)!.date_modified_gmt).toBe('2026-11-05T08:02:00');
    await call(posts, 'PUT', `wc/v3/orders/${other}`, { status: 'completed' });
    expect(posts.order(other)!.date_modified_gmt).toBe('2026-11-05T08:03:00');
  });
});

describe('webhooks', () => {
  it('creation pings with an unsigned form body webhook_id=N; a non-200 answer is recorded and tolerated', async () => {
    const hooks = await receiver((hit) => (isPing(hit) ? 500 : 200));
    const fake = await start();
    const view = await fake.createWebhook({ topic: 'order.updated', deliveryUrl: hooks.url, secret: SECRET });
    expect(hooks.hits).toHaveLength(1);
    const ping = hooks.hits[0]!;
    expect(ping.body).toBe(`webhook_id=${view.id}`);
    expect(ping.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(ping.headers['user-agent']).toMatch(/^WooCommerce\/\S+ Hookshot \(WordPress\/\S+\)$/);
    expect(Object.keys(ping.headers).filter((h) => h.startsWith('x-wc-webhook'))).toEqual([]);
    expect(view).toMatchObject({
      status: 'active',
      ping: { status: 500, ok: false, error: 'Error: Delivery URL returned response code: 500' },
    });

    // The admin routes: create (after its ping), list, delete.
    const created = await admin(fake, 'POST', 'webhooks', { topic: 'order.created', deliveryUrl: hooks.url, secret: SECRET });
    expect(created).toMatchObject({ status: 201, json: { id: 2, topic: 'order.created', event: 'created', ping: { status: 500 } } });
    expect((await admin(fake, 'GET', 'webhooks')).json.map((w: any) => w.id)).toEqual([1, 2]);
    expect(
      (await admin(fake, 'POST', 'webhooks', { topic: 'order.deleted', deliveryUrl: hooks.url, secret: SECRET })).json.details[0].field,
    ).toBe('topic');
    expect((await admin(fake, 'DELETE', 'webhooks/2')).json.deleted.id).toBe(2);
    expect((await admin(fake, 'DELETE', 'webhooks/2')).status).toBe(404);
    expect(fake.webhooks().map((w) => w.id)).toEqual([1]);
  });

  it('order.updated carries GET /orders/{id} as wp_json_encode writes it, signed over those exact bytes, with every X-WC-Webhook header', async () => {
    const hooks = await receiver();
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE], shipping: { city: 'München', country: 'DE' } });
    const hook = await fake.createWebhook({ topic: 'order.updated', deliveryUrl: hooks.url, secret: SECRET });
    expect((await call(fake, 'PUT', `wc/v3/orders/${id}`, { status: 'completed' })).status).toBe(200);
    await fake.webhooksIdle();
    const [delivery] = hooks.deliveries();
    const h = delivery!.headers;
    expect(h).toMatchObject({
      'content-type': 'application/json',
      'x-wc-webhook-source': `${fake.baseUrl}/`,
      'x-wc-webhook-topic': 'order.updated',
      'x-wc-webhook-resource': 'order',
      'x-wc-webhook-event': 'updated',
      'x-wc-webhook-id': String(hook.id),
    });
    expect(h['x-wc-webhook-delivery-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(h['user-agent']).toMatch(/^WooCommerce\/\S+ Hookshot \(WordPress\/\S+\)$/);

    const expected = createHmac('sha256', SECRET).update(delivery!.raw).digest();
    const given = Buffer.from(String(h['x-wc-webhook-signature']), 'base64');
    expect(given.length === expected.length && timingSafeEqual(given, expected)).toBe(true);
    expect(delivery!.body).toContain('M\\u00fcnchen');
    expect(delivery!.body).toContain('\\/wp-json\\/wc\\/v3\\/orders\\/');
    // Re-serializing the parsed body loses PHP's escapes, and with them the signature.
    const reserialized = createHmac('sha256', SECRET)
      .update(JSON.stringify(JSON.parse(delivery!.body)))
      .digest('base64');
    expect(reserialized).not.toBe(h['x-wc-webhook-signature']);
    expect(JSON.parse(delivery!.body)).toEqual((await call(fake, 'GET', `wc/v3/orders/${id}`)).json);
    expect(fake.stats()).toMatchObject({ webhookDeliveriesAttempted: 1, webhookDeliveriesSucceeded: 1, webhookDeliveriesFailed: 0 });
    expect(fake.webhooks()[0]!.deliveries).toMatchObject([{ order_id: id, event: 'updated', status: 200, ok: true }]);
  });

  it('edits, status changes and tracking items fire order.updated; a note does not; events while one waits make one delivery', async () => {
    const hooks = await receiver();
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    await fake.createWebhook({ topic: 'order.updated', deliveryUrl: hooks.url, secret: SECRET });
    await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { note: 'Packed' });
    await fake.webhooksIdle();
    expect(hooks.deliveries()).toHaveLength(0);
    await call(fake, 'POST', `wc-shipment-tracking/v3/orders/${id}/shipment-trackings`, {
      tracking_number: 'JD01',
      tracking_provider: 'DHL',
    });
    await fake.webhooksIdle();
    expect(hooks.deliveries()).toHaveLength(1);
    // Two edits in one go: the second finds the first still waiting, and the payload is built when sent.
    fake.editOrder(id, { customerNote: 'first' });
    fake.editOrder(id, { customerNote: 'second' });
    await fake.webhooksIdle();
    expect(hooks.deliveries()).toHaveLength(2);
    expect(JSON.parse(hooks.deliveries()[1]!.body).customer_note).toBe('second');
  });

  it('order.created goes out only for an order at most 10 s old when the event fires', async () => {
    const time = clock('2026-11-05T08:00:00Z');
    const hooks = await receiver();
    const fake = await start({ now: time.now });
    await fake.createWebhook({ topic: 'order.created', deliveryUrl: hooks.url, secret: SECRET });
    fake.createOrder({ lineItems: [LINE], dateCreatedGmt: '2026-11-05T07:59:49' });
    const recent = fake.createOrder({ lineItems: [LINE], dateCreatedGmt: '2026-11-05T07:59:55' });
    fake.editOrder(recent.id, { customerNote: 'not a creation' });
    await fake.webhooksIdle();
    expect(hooks.deliveries().map((d) => [d.headers['x-wc-webhook-event'], JSON.parse(d.body).id])).toEqual([['created', recent.id]]);

    const always = await start({ now: time.now, webhooks: { createdMaxAgeSeconds: null } });
    await always.createWebhook({ topic: 'order.created', deliveryUrl: hooks.url, secret: SECRET });
    always.createOrder({ lineItems: [LINE], dateCreatedGmt: '2026-01-01T00:00:00' });
    await always.webhooksIdle();
    expect(hooks.deliveries()).toHaveLength(2);
  });

  it('disables the webhook on the failure that finds more than 5 before it (the 7th in a row); a 302 counts as success', async () => {
    let status = 500;
    const hooks = await receiver((hit) => (isPing(hit) ? 200 : status));
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    await fake.createWebhook({ topic: 'order.updated', deliveryUrl: hooks.url, secret: SECRET });
    const edit = async (n: number): Promise<void> => {
      fake.editOrder(id, { customerNote: `edit ${n}` });
      await fake.webhooksIdle();
    };
    for (let n = 1; n <= 3; n++) await edit(n);
    expect(fake.webhooks()[0]!.failure_count).toBe(3);
    status = 302;
    await edit(4);
    expect(fake.webhooks()[0]!.failure_count).toBe(0);
    status = 500;
    for (let n = 1; n <= 6; n++) await edit(10 + n);
    expect(fake.webhooks()[0]).toMatchObject({ status: 'active', failure_count: 6 });
    await edit(17);
    expect(fake.webhooks()[0]).toMatchObject({ status: 'disabled', failure_count: 6 });
    await edit(18);
    expect(hooks.deliveries()).toHaveLength(11);
    expect(fake.stats()).toMatchObject({
      webhookDeliveriesAttempted: 11,
      webhookDeliveriesSucceeded: 1,
      webhookDeliveriesFailed: 10,
      webhooksDisabled: 1,
    });
  });

  it('a delivery without an answer fails at the (configurable) timeout; close() cuts one in flight', async () => {
    const hooks = await receiver((hit) => (isPing(hit) ? 200 : null));
    const fake = await start({ webhooks: { timeoutMs: 200 } });
    const { id } = fake.createOrder({ lineItems: [LINE] });
    await fake.createWebhook({ topic: 'order.updated', deliveryUrl: hooks.url, secret: SECRET });
    fake.editOrder(id, { customerNote: 'x' });
    await fake.webhooksIdle();
    expect(fake.webhooks()[0]).toMatchObject({
      failure_count: 1,
      deliveries: [{ status: null, ok: false, error: 'timed out after 200 ms' }],
    });

    const slow = await start(); // 60 s, as WooCommerce
    const order = slow.createOrder({ lineItems: [LINE] });
    await slow.createWebhook({ topic: 'order.updated', deliveryUrl: hooks.url, secret: SECRET });
    slow.editOrder(order.id, { customerNote: 'y' });
    await waitFor(() => (hooks.deliveries().length === 2 ? true : undefined), { what: 'the second delivery to arrive' });
    const started = Date.now();
    await slow.close();
    await slow.webhooksIdle();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('faults: webhookDropRate drops deliveries silently, webhooksDisabled sends none; both are checked by the faults schema', async () => {
    const hooks = await receiver();
    const fake = await start({ faults: { webhookDropRate: 1 } });
    const { id } = fake.createOrder({ lineItems: [LINE] });
    await fake.createWebhook({ topic: 'order.updated', deliveryUrl: hooks.url, secret: SECRET });
    fake.editOrder(id, { customerNote: 'a' });
    await fake.webhooksIdle();
    fake.setFaults({ webhookDropRate: 0, webhooksDisabled: true });
    fake.editOrder(id, { customerNote: 'b' });
    await fake.webhooksIdle();
    expect(hooks.deliveries()).toHaveLength(0);
    expect(fake.stats()).toMatchObject({ webhookDeliveriesAttempted: 0, webhookDeliveriesDropped: 2 });
    fake.setFaults({ webhooksDisabled: false });
    fake.editOrder(id, { customerNote: 'c' });
    await fake.webhooksIdle();
    expect(hooks.deliveries()).toHaveLength(1);
    expect(() => fake.setFaults({ webhookDropRate: 2 })).toThrow(/webhookDropRate/);
    expect((await admin(fake, 'POST', 'faults', { webhooksDisabled: 'yes' })).json.details[0].field).toBe('webhooksDisabled');
  });
});

describe('command line', () => {
  it('takes --generate-orders n (up to 20 000)', () => {
    expect(parseCli(['--generate-orders', '5000', '--seed', '4'])).toMatchObject({
      kind: 'run',
      generateOrders: 5000,
      options: { seed: 4 },
    });
    expect(parseCli([])).toMatchObject({ generateOrders: 0 });
    expect(() => parseCli(['--generate-orders', '20001'])).toThrow(/--generate-orders/);
  });
});
