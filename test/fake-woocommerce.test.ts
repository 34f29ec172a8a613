/**
 * The fake WooCommerce store over real HTTP on loopback: auth, WordPress's error bodies, notes
 * and emails, the Shipment Tracking extension, listing (status arrays, the time trap, paging
 * headers, offset drift), the HPOS read bump, host faults, the merchant's page and the CLI.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidWooFaultsError, startFakeWooCommerce, type FakeWooCommerce, type FakeWooCommerceOptions } from '../fake-woocommerce';
import { CliError, parseCli } from '../fake-woocommerce/main';
import { waitFor } from './helpers/wait';

const KEY = 'ck_fake_dev_key';
const SECRET = 'cs_fake_dev_secret';
const BASIC = `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}`;
const LINE = { sku: 'MUG-BLUE', name: 'Mug', quantity: 2, price: '12.50' };

const running: FakeWooCommerce[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((f) => f.close()));
});

async function start(options: FakeWooCommerceOptions = {}): Promise<FakeWooCommerce> {
  const fake = await startFakeWooCommerce(options);
  running.push(fake);
  return fake;
}

/** A settable clock: dates in the store have one-second granularity, so tests step it. */
function clock(iso: string): { now: () => number; set: (iso: string) => void } {
  let ms = Date.parse(iso);
  return { now: () => ms, set: (next) => (ms = Date.parse(next)) };
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** One call under /wp-json; auth 'basic' (default), 'query', 'none' or a raw Authorization value. */
async function call(
  fake: FakeWooCommerce,
  method: string,
  route: string,
  { auth = 'basic', body }: { auth?: string; body?: unknown } = {},
): Promise<Answer> {
  let url = `${fake.baseUrl}/wp-json/${route}`;
  if (auth === 'query') url += `${url.includes('?') ? '&' : '?'}consumer_key=${KEY}&consumer_secret=${SECRET}`;
  const headers: Record<string, string> = {};
  if (auth === 'basic') headers.authorization = BASIC;
  else if (auth !== 'query' && auth !== 'none') headers.authorization = auth;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

const trackings = (id: number): string => `wc-shipment-tracking/v3/orders/${id}/shipment-trackings`;

describe('authentication', () => {
  it('takes HTTP Basic ck:cs, refuses a wrong key or secret, and refuses anonymous requests per route', async () => {
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    expect((await call(fake, 'GET', 'wc/v3/orders')).status).toBe(200);

    const wrongKey = await call(fake, 'GET', 'wc/v3/orders', { auth: `Basic ${Buffer.from(`ck_other:${SECRET}`).toString('base64')}` });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.json).toEqual({
      code: 'woocommerce_rest_authentication_error',
      message: 'Consumer key is invalid.',
      data: { status: 401 },
    });
    const wrongSecret = await call(fake, 'GET', 'wc/v3/orders', { auth: `Basic ${Buffer.from(`${KEY}:cs_other`).toString('base64')}` });
    expect(wrongSecret.json.message).toBe('Consumer secret is invalid.');

    const anonymous = await call(fake, 'GET', 'wc/v3/orders', { auth: 'none' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toEqual({
      code: 'woocommerce_rest_cannot_view',
      message: 'Sorry, you cannot list resources.',
      data: { status: 401 },
    });
    expect((await call(fake, 'GET', `wc/v3/orders/${id}`, { auth: 'none' })).json.message).toBe('Sorry, you cannot view this resource.');
    expect((await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { auth: 'none', body: { note: 'x' } })).json.code).toBe(
      'woocommerce_rest_cannot_create',
    );
    expect(fake.order(id)!.notes).toEqual([]);
  });

  it('takes the query string; with stripAuthorization only the query string works', async () => {
    const fake = await start({ stripAuthorization: true });
    const basic = await call(fake, 'GET', 'wc/v3/orders');
    expect(basic.status).toBe(401);
    expect(basic.json.code).toBe('woocommerce_rest_cannot_view');
    const query = await call(fake, 'GET', 'wc/v3/orders?per_page=5', { auth: 'query' });
    expect(query.status).toBe(200);
    expect(query.json).toEqual([]);
  });
});

describe("WordPress's error bodies", () => {
  it('answers invalid ids, bad parameters (before the permission check), unknown routes and bad JSON', async () => {
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    expect((await call(fake, 'GET', 'wc/v3/orders/999')).json).toEqual({
      code: 'woocommerce_rest_shop_order_invalid_id',
      message: 'Invalid ID.',
      data: { status: 404 },
    });
    // WooCommerce's update answers a missing order with 400, not 404.
    const put = await call(fake, 'PUT', 'wc/v3/orders/999', { body: { status: 'completed' } });
    expect([put.status, put.json.code]).toEqual([400, 'woocommerce_rest_shop_order_invalid_id']);

    const perPage = await call(fake, 'GET', 'wc/v3/orders?per_page=101', { auth: 'none' });
    expect(perPage.status).toBe(400);
    expect(perPage.json).toMatchObject({
      code: 'rest_invalid_param',
      message: 'Invalid parameter(s): per_page',
      data: { status: 400, params: { per_page: 'per_page must be between 1 (inclusive) and 100 (inclusive)' } },
    });
    const status = await call(fake, 'PUT', `wc/v3/orders/${id}`, { body: { status: 'shipped' } });
    expect(status.json.data.params.status).toBe(
      'status is not one of pending, processing, on-hold, completed, cancelled, refunded, failed, and checkout-draft.',
    );
    expect((await call(fake, 'GET', 'wc/v3/coupons')).json).toEqual({
      code: 'rest_no_route',
      message: 'No route was found matching the URL and request method.',
      data: { status: 404 },
    });
    expect((await call(fake, 'DELETE', `wc/v3/orders/${id}/notes`)).json.code).toBe('rest_no_route');
    const badJson = await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { body: '{"note": ' });
    expect([badJson.status, badJson.json.code]).toEqual([400, 'rest_invalid_json']);
  });

  it('has no Shipment Tracking routes while the extension is absent', async () => {
    const fake = await start({ shipmentTracking: false });
    const { id } = fake.createOrder({ lineItems: [LINE] });
    const post = await call(fake, 'POST', trackings(id), { body: { tracking_number: '1Z1', tracking_provider: 'UPS' } });
    expect([post.status, post.json.code]).toEqual([404, 'rest_no_route']);
    expect((await call(fake, 'GET', 'wc-shipment-tracking/v3/shipment-trackings/providers')).status).toBe(404);
    fake.setShipmentTracking(true);
    expect((await call(fake, 'POST', trackings(id), { body: { tracking_number: '1Z1', tracking_provider: 'UPS' } })).status).toBe(201);
  });
});

describe('order notes', () => {
  it('creates notes (201), lists them newest first, emails customer notes, and does not dedupe', async () => {
    const time = clock('2026-11-05T08:00:00Z');
    const fake = await start({ now: time.now });
    const { id } = fake.createOrder({ lineItems: [LINE], billing: { email: 'jan@example.nl' } });
    const created = await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { body: { note: 'Label printed', customer_note: false } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${fake.baseUrl}/wp-json/wc/v3/orders/${id}/notes/${created.json.id}`);
    expect(created.json).toMatchObject({
      author: 'system',
      date_created: '2026-11-05T08:00:00',
      date_created_gmt: '2026-11-05T08:00:00',
      note: 'Label printed',
      customer_note: false,
    });
    time.set('2026-11-05T09:00:00Z');
    const body = { note: 'Your parcel is on its way', customer_note: true, added_by_user: true };
    expect((await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { body })).json.author).toBe('admin');
    await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { body });

    const listed = await call(fake, 'GET', `wc/v3/orders/${id}/notes`);
    expect(listed.json.map((n: any) => n.note)).toEqual(['Your parcel is on its way', 'Your parcel is on its way', 'Label printed']);
    expect((await call(fake, 'GET', `wc/v3/orders/${id}/notes?type=customer`)).json).toHaveLength(2);
    const view = fake.order(id)!;
    expect(view.emailsSent.map((e) => [e.template, e.to, e.note])).toEqual([
      ['customer_note', 'jan@example.nl', 'Your parcel is on its way'],
      ['customer_note', 'jan@example.nl', 'Your parcel is on its way'],
    ]);
    // A note is a comment, not an order field: date_modified stays.
    expect(view.date_modified_gmt).toBe('2026-11-05T08:00:00');
    const missing = await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { body: { customer_note: true } });
    expect(missing.json).toEqual({
      code: 'rest_missing_callback_param',
      message: 'Missing parameter(s): note',
      data: { status: 400, params: ['note'] },
    });
  });
});

describe('order status', () => {
  it('completed sends the completed email with the tracking items of that moment, once', async () => {
    const time = clock('2026-11-05T08:00:00Z');
    const fake = await start({ now: time.now });
    const { id } = fake.createOrder({ lineItems: [LINE], status: 'processing' });
    await call(fake, 'POST', trackings(id), {
      body: { tracking_number: '1Z999AA1', tracking_provider: 'UPS', date_shipped: '2026-11-05' },
    });
    time.set('2026-11-05T10:30:00Z');
    const put = await call(fake, 'PUT', `wc/v3/orders/${id}`, { body: { status: 'completed' } });
    expect([put.status, put.json.status, put.json.date_modified_gmt]).toEqual([200, 'completed', '2026-11-05T10:30:00']);
    await call(fake, 'PUT', `wc/v3/orders/${id}`, { body: { status: 'completed' } });

    const view = fake.order(id)!;
    expect(view.statusHistory).toEqual([{ from: 'processing', to: 'completed', at: '2026-11-05T10:30:00' }]);
    expect(view.emailsSent).toHaveLength(1);
    expect(view.emailsSent[0]).toMatchObject({ template: 'customer_completed_order', at: '2026-11-05T10:30:00' });
    expect(view.emailsSent[0]!.trackingItems).toEqual([
      expect.objectContaining({
        tracking_provider: 'UPS',
        tracking_number: '1Z999AA1',
        tracking_link: 'https://www.ups.com/track?loc=en_US&tracknum=1Z999AA1',
      }),
    ]);
    expect(view.notes.map((n) => n.note)).toContain('Order status changed from Processing to Completed.');
  });

  it('on-hold emails only from pending; the completed email shows no tracking without the extension', async () => {
    const fake = await start({ shipmentTracking: false });
    const pending = fake.createOrder({ lineItems: [LINE], status: 'pending' });
    const processing = fake.createOrder({ lineItems: [LINE], status: 'processing' });
    await call(fake, 'PUT', `wc/v3/orders/${pending.id}`, { body: { status: 'on-hold' } });
    await call(fake, 'PUT', `wc/v3/orders/${processing.id}`, { body: { status: 'on-hold' } });
    expect(fake.order(pending.id)!.emailsSent.map((e) => e.template)).toEqual(['customer_on_hold_order']);
    expect(fake.order(processing.id)!.emailsSent).toEqual([]);
    await call(fake, 'PUT', `wc/v3/orders/${processing.id}`, { body: { status: 'completed' } });
    expect(fake.order(processing.id)!.emailsSent[0]).toMatchObject({ template: 'customer_completed_order', trackingItems: [] });
  });
});

describe('Shipment Tracking', () => {
  it('POST is 201 and builds a predefined provider link (ignoring a sent one); a double POST makes two items; delete removes one', async () => {
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    const body = {
      tracking_number: '9400111',
      tracking_provider: 'usps',
      tracking_link: 'https://evil.example/x',
      date_shipped: '2026-11-05',
    };
    const first = await call(fake, 'POST', trackings(id), { body });
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({
      tracking_provider: 'USPS',
      tracking_link: 'https://tools.usps.com/go/TrackConfirmAction_input?qtc_tLabels1=9400111',
      tracking_number: '9400111',
      date_shipped: '2026-11-05',
    });
    expect(first.json.tracking_id).toMatch(/^[0-9a-f]{32}$/);
    expect(first.headers.get('location')).toBe(`${fake.baseUrl}/wp-json/${trackings(id)}/${first.json.tracking_id}`);
    const second = await call(fake, 'POST', trackings(id), { body });
    expect(second.json.tracking_id).not.toBe(first.json.tracking_id);
    expect((await call(fake, 'GET', trackings(id))).json).toHaveLength(2);
    expect((await call(fake, 'GET', `${trackings(id)}/${first.json.tracking_id}`)).json.tracking_number).toBe('9400111');

    const deleted = await call(fake, 'DELETE', `${trackings(id)}/${first.json.tracking_id}`);
    expect([deleted.status, deleted.json.tracking_id]).toEqual([200, first.json.tracking_id]);
    expect((await call(fake, 'GET', `${trackings(id)}/${first.json.tracking_id}`)).json.code).toBe(
      'woocommerce_rest_order_shipment_tracking_invalid_id',
    );
    expect(fake.order(id)!.trackingItems.map((t) => t.tracking_id)).toEqual([second.json.tracking_id]);
    const noNumber = await call(fake, 'POST', trackings(id), { body: { tracking_provider: 'UPS' } });
    expect([noNumber.status, noNumber.json.code]).toEqual([400, 'rest_missing_callback_param']);
  });

  it('keeps a custom link as sent and answers an unknown provider with an empty name and link, as the extension does', async () => {
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    const custom = await call(fake, 'POST', trackings(id), {
      body: { tracking_number: 'AB1', custom_tracking_provider: 'Olva', custom_tracking_link: 'https://olva.example/?t=%1$s' },
    });
    expect(custom.json).toMatchObject({ tracking_provider: 'Olva', tracking_link: 'https://olva.example/?t=%1$s' });
    const unknown = await call(fake, 'POST', trackings(id), { body: { tracking_number: 'AB2', tracking_provider: 'Acme Couriers' } });
    expect(unknown.status).toBe(201);
    expect(unknown.json).toMatchObject({ tracking_provider: '', tracking_link: '' });
    const order = await call(fake, 'GET', `wc/v3/orders/${id}`);
    const meta = order.json.meta_data.find((m: any) => m.key === '_wc_shipment_tracking_items');
    expect(meta.value.map((v: any) => v.tracking_provider)).toEqual(['', 'acme-couriers']);
  });

  it('lists providers publicly as country → name → URL template', async () => {
    const fake = await start();
    const providers = await call(fake, 'GET', 'wc-shipment-tracking/v3/shipment-trackings/providers', { auth: 'none' });
    expect(providers.status).toBe(200);
    expect(providers.json.Germany['DHL Intraship (DE)']).toContain('%1$s');
    expect(Object.keys(providers.json['United States'])).toEqual(expect.arrayContaining(['UPS', 'USPS', 'Fedex']));
    expect(providers.json['United Kingdom']['Royal Mail']).toContain('%1$s');
    const wrongKey = await call(fake, 'GET', 'wc-shipment-tracking/v3/shipment-trackings/providers', { auth: 'Basic Y2tfeDp5' });
    expect(wrongKey.status).toBe(401);
  });
});

describe('listing orders', () => {
  it('filters by status given as an array or a comma list, and names a bad status', async () => {
    const fake = await start();
    const processing = fake.createOrder({ lineItems: [LINE], status: 'processing' });
    const onHold = fake.createOrder({ lineItems: [LINE], status: 'on-hold' });
    fake.createOrder({ lineItems: [LINE], status: 'completed' });
    const ids = async (query: string): Promise<number[]> =>
      (await call(fake, 'GET', `wc/v3/orders?${query}`)).json.map((o: any) => o.id).sort();
    expect(await ids('status[]=processing&status[]=on-hold')).toEqual([processing.id, onHold.id]);
    expect(await ids('status=processing,on-hold')).toEqual([processing.id, onHold.id]);
    expect(await ids('status=on-hold')).toEqual([onHold.id]);
    expect(await ids('')).toHaveLength(3);
    const bad = await call(fake, 'GET', 'wc/v3/orders?status[]=processing&status[]=shipped');
    expect(bad.json.data.params.status).toMatch(/^status\[1\] is not one of any, trash, pending, processing/);
  });

  it('compares date filters with the site-local dates unless dates_are_gmt (the trap, in a UTC+10 store)', async () => {
    const time = clock('2026-11-05T00:00:00Z');
    const fake = await start({ now: time.now, timezone: 'Australia/Brisbane' });
    const early = fake.createOrder({ lineItems: [LINE] }); // 10:00 local
    time.set('2026-11-05T06:00:00Z');
    const late = fake.createOrder({ lineItems: [LINE] }); // 16:00 local
    const found = async (query: string): Promise<number[]> =>
      (await call(fake, 'GET', `wc/v3/orders?${query}`)).json.map((o: any) => o.id).sort();

    const order = (await call(fake, 'GET', `wc/v3/orders/${early.id}`)).json;
    expect([order.date_modified, order.date_modified_gmt]).toEqual(['2026-11-05T10:00:00', '2026-11-05T00:00:00']);
    // "Changed since 03:00 UTC" should be only the late order.
    expect(await found('modified_after=2026-11-05T03:00:00&dates_are_gmt=true')).toEqual([late.id]);
    expect(await found('modified_after=2026-11-05T03:00:00')).toEqual([early.id, late.id]);
    // An offset is converted to the site's wall clock: right against local dates, wrong against GMT ones.
    expect(await found('modified_after=2026-11-05T03:00:00Z')).toEqual([late.id]);
    expect(await found('modified_after=2026-11-05T03:00:00Z&dates_are_gmt=true')).toEqual([]);
    expect(await found('after=2026-11-05T03:00:00&dates_are_gmt=1')).toEqual([late.id]);
  });

  it('sends X-WP-Total, X-WP-TotalPages and Link rel="prev"/"next" that lead to the next page', async () => {
    const fake = await start();
    for (let i = 0; i < 5; i++) fake.createOrder({ lineItems: [LINE] });
    const first = await call(fake, 'GET', 'wc/v3/orders?per_page=2&orderby=id&order=asc');
    expect([first.headers.get('x-wp-total'), first.headers.get('x-wp-totalpages')]).toEqual(['5', '3']);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(first.headers.get('link')).not.toContain('rel="prev"');
    const second = await fetch(next!, { headers: { authorization: BASIC } });
    expect(((await second.json()) as Array<{ id: number }>).map((o) => o.id)).toEqual([1003, 1004]);
    expect(second.headers.get('link')).toMatch(/page=1>; rel="prev", <[^>]+page=3>; rel="next"$/);
    const last = await call(fake, 'GET', 'wc/v3/orders?per_page=2&orderby=id&order=asc&page=3');
    expect(last.json).toHaveLength(1);
    expect(last.headers.get('link')).not.toContain('rel="next"');
    expect((await call(fake, 'GET', 'wc/v3/orders')).json).toHaveLength(5); // per_page defaults to 10
  });

  it('pages by offset at request time, so an order modified between pages skips another (drift)', async () => {
    const time = clock('2026-11-05T00:00:00Z');
    const fake = await start({ now: time.now });
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) {
      time.set(`2026-11-05T0${i}:00:00Z`);
      ids.push(fake.createOrder({ lineItems: [LINE] }).id);
    }
    const page = async (n: number): Promise<number[]> =>
      (await call(fake, 'GET', `wc/v3/orders?orderby=modified&order=asc&per_page=2&page=${n}`)).json.map((o: any) => o.id);
    expect(await page(1)).toEqual([ids[0], ids[1]]);
    time.set('2026-11-05T05:00:00Z');
    await call(fake, 'PUT', `wc/v3/orders/${ids[0]}`, { body: { customer_note: 'leave at the door' } });
    // ids[0] moved to the end: page 2 now starts past ids[2], which no page showed.
    expect(await page(2)).toEqual([ids[3], ids[0]]);
  });
});

describe('HPOS', () => {
  it('a read of one order bumps its date_modified under hpos only (the list does not)', async () => {
    const time = clock('2026-11-05T08:00:00Z');
    const hpos = await start({ now: time.now, hpos: true });
    const legacy = await start({ now: time.now });
    const a = hpos.createOrder({ lineItems: [LINE] });
    const b = legacy.createOrder({ lineItems: [LINE] });
    time.set('2026-11-05T09:15:00Z');
    await call(hpos, 'GET', 'wc/v3/orders');
    expect(hpos.order(a.id)!.date_modified_gmt).toBe('2026-11-05T08:00:00');
    expect((await call(hpos, 'GET', `wc/v3/orders/${a.id}`)).json.date_modified_gmt).toBe('2026-11-05T09:15:00');
    expect(hpos.order(a.id)!.date_modified_gmt).toBe('2026-11-05T09:15:00');
    await call(legacy, 'GET', `wc/v3/orders/${b.id}`);
    expect(legacy.order(b.id)!.date_modified_gmt).toBe('2026-11-05T08:00:00');
  });
});

describe('faults', () => {
  it('commit-then-drop applies the note, then the client sees a socket error; a retry makes a second note', async () => {
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    fake.setFaults({ failNext: [{ route: 'POST notes', kind: 'commit-then-drop' }] });
    await expect(call(fake, 'POST', `wc/v3/orders/${id}/notes`, { body: { note: 'In transit' } })).rejects.toThrow();
    expect(fake.order(id)!.notes.map((n) => n.note)).toEqual(['In transit']);
    expect(fake.stats()).toMatchObject({ dropped: 1, droppedAfterCommit: 1, writesApplied: { 'POST notes': 1 } });
    expect((await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { body: { note: 'In transit' } })).status).toBe(201);
    expect(fake.order(id)!.notes).toHaveLength(2);
  });

  it("a failNext entry's params wait for a request whose query string has (or lacks) their text", async () => {
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    fake.setFaults({ failNext: [{ route: 'GET orders', params: { lacks: 'include=' }, kind: '500' }] });
    expect((await call(fake, 'GET', `wc/v3/orders?include=${id}`)).status).toBe(200); // named ids: not this entry's
    expect((await call(fake, 'GET', 'wc/v3/orders?status=processing')).status).toBe(500);
    fake.setFaults({ failNext: [{ route: 'GET orders', params: { has: 'modified_after=' }, kind: '500' }] });
    expect((await call(fake, 'GET', 'wc/v3/orders')).status).toBe(200);
    expect((await call(fake, 'GET', 'wc/v3/orders?modified_after=2026-01-01T00:00:00')).status).toBe(500);
    expect(() => fake.setFaults({ failNext: [{ kind: '500', params: { lacks: '' } }] })).toThrow(/params/);
  });

  it('drop-before-commit and down change nothing; failNext waits for its route', async () => {
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    fake.setFaults({ failNext: [{ route: 'POST shipment-trackings', kind: 'drop-before-commit' }] });
    expect((await call(fake, 'GET', `wc/v3/orders/${id}`)).status).toBe(200);
    await expect(call(fake, 'POST', trackings(id), { body: { tracking_number: '1' } })).rejects.toThrow();
    fake.setFaults({ down: true });
    await expect(call(fake, 'PUT', `wc/v3/orders/${id}`, { body: { status: 'completed' } })).rejects.toThrow();
    fake.setFaults({ down: false });
    const view = fake.order(id)!;
    expect([view.trackingItems, view.status]).toEqual([[], 'processing']);
    expect(fake.stats()).toMatchObject({ dropped: 2, droppedAfterCommit: 0, writesApplied: {} });
  });

  it("429 comes as the host's HTML page, with or without Retry-After", async () => {
    const fake = await start();
    fake.setFaults({ failNext: [{ kind: '429', retryAfterSeconds: 7 }] });
    const withHeader = await call(fake, 'GET', 'wc/v3/orders');
    expect([withHeader.status, withHeader.headers.get('retry-after')]).toEqual([429, '7']);
    expect(withHeader.headers.get('content-type')).toMatch(/^text\/html/);
    expect(withHeader.text).toContain('<title>429 Too Many Requests</title>');
    fake.setFaults({ rateLimitedRate: 1, retryAfterSeconds: null });
    const without = await call(fake, 'GET', 'wc/v3/orders');
    expect([without.status, without.headers.get('retry-after')]).toEqual([429, null]);
    expect(fake.stats().rateLimited).toBe(2);
  });

  it('503 and 504 pages and the 500 critical error apply nothing; 504-after-commit does', async () => {
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    const note = { body: { note: 'x' } };
    fake.setFaults({ failNext: [{ kind: '503' }, { kind: '504' }, { kind: '500' }, { kind: '504-after-commit' }] });
    expect((await call(fake, 'POST', `wc/v3/orders/${id}/notes`, note)).text).toContain('503 Service Temporarily Unavailable');
    expect((await call(fake, 'POST', `wc/v3/orders/${id}/notes`, note)).status).toBe(504);
    const fatal = await call(fake, 'POST', `wc/v3/orders/${id}/notes`, note);
    expect([fatal.status, fatal.json.code]).toEqual([500, 'internal_server_error']);
    expect(fake.order(id)!.notes).toEqual([]);
    expect((await call(fake, 'POST', `wc/v3/orders/${id}/notes`, note)).status).toBe(504);
    expect(fake.order(id)!.notes).toHaveLength(1);
    expect(fake.stats()).toMatchObject({ unavailable: 1, gatewayTimeouts: 2, serverErrors: 1 });
  });

  it('a hang applies the write and never answers; close() ends the hanging socket', async () => {
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    fake.setFaults({ hangRate: 1 });
    const pending = call(fake, 'PUT', `wc/v3/orders/${id}`, { body: { status: 'completed' } });
    await waitFor(() => (fake.stats().hung === 1 ? true : undefined));
    expect(fake.order(id)!.status).toBe('completed');
    await fake.close();
    await expect(pending).rejects.toThrow();
  });

  it('setFaults and POST /_fake/faults refuse a bad patch naming the field', async () => {
    const fake = await start();
    expect(() => fake.setFaults({ rateLimitedRate: 2 })).toThrow(InvalidWooFaultsError);
    expect(() => fake.setFaults({ failNext: [{ kind: 'explode' as never }] })).toThrow(/failNext\[0\]\.kind/);
    const answer = await fetch(`${fake.baseUrl}/_fake/faults`, { method: 'POST', body: JSON.stringify({ latencyMs: -1 }) });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { details: Array<{ field: string }> }).details[0]!.field).toBe('latencyMs');
  });
});

describe('products, admin routes and the page', () => {
  it('serves the seeded product with weight and dimensions; one product per sku', async () => {
    const fake = await start();
    const a = fake.createOrder({
      lineItems: [{ sku: 'TEE-M', quantity: 1, weight: '0.25', dimensions: { length: '30', width: '20', height: '2' } }],
    });
    fake.createOrder({ lineItems: [{ sku: 'TEE-M', quantity: 3 }] });
    const order = (await call(fake, 'GET', `wc/v3/orders/${a.id}`)).json;
    const product = await call(fake, 'GET', `wc/v3/products/${order.line_items[0].product_id}`);
    expect(product.json).toMatchObject({ sku: 'TEE-M', weight: '0.25', dimensions: { length: '30', width: '20', height: '2' } });
    const listed = (await call(fake, 'GET', 'wc/v3/orders')).json;
    expect(new Set(listed.map((o: any) => o.line_items[0].product_id)).size).toBe(1);
    expect((await call(fake, 'GET', 'wc/v3/products/9999')).json.code).toBe('woocommerce_rest_product_invalid_id');
  });

  it('the /_fake/ routes seed, read, switch the extension and count', async () => {
    const fake = await start();
    const admin = async (method: string, route: string, body?: unknown): Promise<any> => {
      const answer = await fetch(`${fake.baseUrl}/_fake/${route}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: answer.status, json: await answer.json() };
    };
    const created = await admin('POST', 'orders', { lineItems: [LINE], status: 'on-hold' });
    expect([created.status, created.json.status]).toEqual([201, 'on-hold']);
    expect((await admin('POST', 'orders', { lineItems: [] })).json.details[0].field).toBe('lineItems');
    expect((await admin('GET', `orders/${created.json.id}`)).json.id).toBe(created.json.id);
    expect((await admin('GET', 'orders')).json).toHaveLength(1);
    expect((await admin('POST', 'shipment-tracking', { installed: false })).json).toEqual({ installed: false });
    expect((await call(fake, 'GET', trackings(created.json.id))).status).toBe(404);
    expect((await admin('GET', 'stats')).json.byRoute).toEqual({ '(unmatched)': 1 });
    expect((await admin('POST', 'stats/reset')).json.requests).toBe(0);
  });

  it('the page shows status, tracking, notes and emails as the merchant sees them, escaped', async () => {
    const fake = await start();
    const { id } = fake.createOrder({ lineItems: [LINE] });
    await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { body: { note: '<script>alert(1)</script>', customer_note: true } });
    await call(fake, 'POST', `wc/v3/orders/${id}/notes`, { body: { note: 'private & internal', added_by_user: true } });
    await call(fake, 'POST', trackings(id), { body: { tracking_number: 'RM1', tracking_provider: 'Royal Mail' } });
    await call(fake, 'POST', trackings(id), {
      body: { tracking_number: 'X1', custom_tracking_provider: 'Evil', custom_tracking_link: 'javascript:alert(1)' },
    });
    const page = await (await fetch(`${fake.baseUrl}/`)).text();
    expect(page).not.toContain('<script>');
    expect(page).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(page).toContain('private &#38; internal');
    expect(page).toMatch(/Note to customer/);
    expect(page).toMatch(/Private note/);
    expect(page).toContain('href="https://www3.royalmail.com/track-your-item#/tracking-results/RM1"');
    expect(page).not.toContain('href="javascript:');
    expect(page).toContain('customer_note');
    expect(page).toMatch(/Processing/);
  });
});

describe('command line', () => {
  it('maps flags onto options and names a bad flag', () => {
    const command = parseCli([
      '--port',
      '0',
      '--timezone',
      'America/Los_Angeles',
      '--no-shipment-tracking',
      '--hpos',
      '--seed-orders',
      '5',
      '--retry-after',
      '3',
      '--rate-limited-rate',
      '0.5',
    ]);
    expect(command).toMatchObject({
      kind: 'run',
      seedOrders: 5,
      options: {
        port: 0,
        timezone: 'America/Los_Angeles',
        shipmentTracking: false,
        hpos: true,
        faults: { retryAfterSeconds: 3, rateLimitedRate: 0.5 },
      },
    });
    expect(() => parseCli(['--commit-then-drop-rate', '2'])).toThrow(/--commit-then-drop-rate/);
    expect(() => parseCli(['--frobnicate'])).toThrow(CliError);
  });

  it('prints its base URL, serves seeded orders and stops cleanly on SIGTERM', { timeout: 20_000 }, async () => {
    const root = path.resolve(__dirname, '..');
    // node --import tsx, not tsx's CLI, which exits 143 when its child confirms a SIGTERM late (30 ms).
    const child = spawn(process.execPath, ['--import', 'tsx', 'fake-woocommerce/main.ts', '--port', '0', '--seed-orders', '3'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const baseUrl = await waitFor(() => /fake WooCommerce listening on (http:\/\/\S+)/.exec(out)?.[1], {
        timeoutMs: 10_000,
        what: `start-up (${err})`,
      });
      const answer = await fetch(`${baseUrl}/wp-json/wc/v3/orders`, { headers: { authorization: BASIC } });
      expect(((await answer.json()) as unknown[]).length).toBe(3);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(err).toMatch(/SIGTERM/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
