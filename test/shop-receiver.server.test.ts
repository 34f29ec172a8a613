/**
 * The reference shop receiver over loopback, fed by the real sender (platforms/webhook/write-back.ts):
 * signature and timestamp checks, schema validation, de-duplication, no downgrade by late
 * events, the orders page and API, and every injectable fault.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeShipmentEvent, type ShipmentEvent, type ShipmentEventInput } from '../domain/events';
import { deliverWebhook, signWebhook, type DeliveryResult } from '../platforms/webhook/write-back';
import { InvalidFaultsError, startShopReceiver, type ShopReceiver } from '../shop-receiver/server';
import { waitFor } from './helpers/wait';
import { freePort } from '../dev-server/free-port';

const secretA = `whsec_${randomBytes(32).toString('base64')}`;
const secretB = `whsec_${randomBytes(32).toString('base64')}`;
const stranger = `whsec_${randomBytes(32).toString('base64')}`;

let receiver: ShopReceiver;
const dispatcher = new Agent({ connections: 4 });
let orderCounter = 0;
let orderId: string;

beforeAll(async () => {
  receiver = await startShopReceiver({ secrets: [secretA, secretB] });
});
afterAll(async () => {
  await receiver.close();
  await dispatcher.close();
});
beforeEach(async () => {
  await receiver.setFaults({ down: false, slowMs: 0, errorRate: 0, rateLimit: null, gone: false, failNext: [] });
  receiver.reset();
  orderCounter += 1;
  orderId = `SO-${orderCounter}`;
});

const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 10, minute)).toISOString();

function labelCreated(sequence: number, overrides: Partial<ShipmentEventInput> = {}): ShipmentEvent {
  return makeShipmentEvent({
    shop: 'acme',
    orderId,
    sequence,
    occurredAt: at(sequence),
    type: 'label.created',
    data: {
      labelId: `lbl-${orderId}`,
      revision: 1,
      courier: 'dhl-express',
      customerOrderNumber: orderId,
      courierOrderNumber: 'C-1',
      trackingNumber: null,
      labelUrl: `https://labels.example/${orderId}.pdf`,
    },
    ...overrides,
  } as ShipmentEventInput);
}

function tracking(sequence: number, tag: string, shop = 'acme'): ShipmentEvent {
  return makeShipmentEvent({
    shop,
    orderId,
    sequence,
    occurredAt: at(sequence),
    type: 'tracking.updated',
    data: { tag, subtag: `${tag}_001`, subtagMessage: null, trackingNumber: 'JD0001', lastCheckpoint: null },
  });
}

function completed(sequence: number): ShipmentEvent {
  return makeShipmentEvent({
    shop: 'acme',
    orderId,
    sequence,
    occurredAt: at(sequence),
    type: 'shipment.completed',
    data: { outcome: 'delivered', reason: null, tag: 'Delivered', trackingNumber: 'JD0001' },
  });
}

function send(event: ShipmentEvent, extra: Partial<Parameters<typeof deliverWebhook>[0]> = {}): Promise<DeliveryResult> {
  return deliverWebhook({ url: receiver.webhookUrl(event.shop), secrets: [secretA], event, dispatcher, timeoutMs: 5_000, ...extra });
}

function order(id = orderId) {
  const found = receiver.state().orders.find((o) => o.orderId === id);
  if (!found) throw new Error(`order ${id} not received`);
  return found;
}

describe('verification', () => {
  it('accepts an event signed with one of its secrets and keeps the order state', async () => {
    expect(await send(labelCreated(1))).toEqual({ kind: 'delivered', status: 200 });
    expect(await send(tracking(2, 'InTransit'), { secrets: [stranger, secretB] })).toEqual({ kind: 'delivered', status: 200 });
    expect(order()).toMatchObject({
      shop: 'acme',
      orderId,
      labelId: `lbl-${orderId}`,
      labelUrl: `https://labels.example/${orderId}.pdf`,
      trackingNumber: 'JD0001',
      tag: 'InTransit',
      subtag: 'InTransit_001',
      outcome: null,
      lastSequence: 2,
      received: [1, 2],
      missing: [],
      gap: false,
      outOfOrder: false,
      duplicates: 0,
    });
    expect(receiver.state().stats).toEqual({ answers: { '200': 2 }, applied: 2, late: 0, duplicates: 0 });
  });

  it('a wrong secret is 401 and nothing is applied', async () => {
    const result = await send(labelCreated(1), { secrets: [stranger] });
    expect(result).toMatchObject({ kind: 'rejected', status: 401 });
    expect((result as { bodyExcerpt: string }).bodyExcerpt).toContain('no signature matches any configured secret');
    expect(receiver.state().orders).toEqual([]);
  });

  it('a timestamp more than 5 minutes old or ahead is 401 naming the skew', async () => {
    const old = await send(labelCreated(1), { now: () => Date.now() - 6 * 60_000 });
    expect(old).toMatchObject({ kind: 'rejected', status: 401 });
    expect((old as { bodyExcerpt: string }).bodyExcerpt).toMatch(/webhook-timestamp is 3[56]\d s old; tolerance is 300 s/);
    const ahead = await send(labelCreated(1), { now: () => Date.now() + 10 * 60_000 });
    expect((ahead as { bodyExcerpt: string }).bodyExcerpt).toMatch(/s in the future/);
    // Within the tolerance is fine.
    expect(await send(labelCreated(1), { now: () => Date.now() - 4 * 60_000 })).toMatchObject({ kind: 'delivered' });
  });

  it('missing headers are 400; a body changed after signing is 401', async () => {
    const event = labelCreated(1);
    const body = JSON.stringify(event);
    const missing = await fetch(receiver.webhookUrl('acme'), { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: 'missing headers webhook-id, webhook-timestamp, webhook-signature' });
    const headers = signWebhook({ id: event.id, timestampSeconds: Math.floor(Date.now() / 1000), body, secrets: [secretA] });
    const tampered = await fetch(receiver.webhookUrl('acme'), {
      method: 'POST',
      body: body.replace('lbl-', 'lbX-'),
      headers: { ...headers },
    });
    expect(tampered.status).toBe(401);
    const badTimestamp = await fetch(receiver.webhookUrl('acme'), {
      method: 'POST',
      body,
      headers: { ...headers, 'webhook-timestamp': 'soon' },
    });
    expect(badTimestamp.status).toBe(400);
    expect(receiver.state().orders).toEqual([]);
  });

  it("a signed body that is not a valid event, or sent to another shop's path, is 400 naming the problem", async () => {
    const event = labelCreated(1);
    const invalid = { ...event, data: { ...event.data, revision: 'one' } };
    const body = JSON.stringify(invalid);
    const headers = signWebhook({ id: event.id, timestampSeconds: Math.floor(Date.now() / 1000), body, secrets: [secretA] });
    const answer = await fetch(receiver.webhookUrl('acme'), { method: 'POST', body, headers: { ...headers } });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ error: 'body is not a valid shipment event', details: [{ field: 'data.revision' }] });

    const misrouted = await deliverWebhook({ url: receiver.webhookUrl('other-shop'), secrets: [secretA], event, dispatcher });
    expect(misrouted).toMatchObject({ kind: 'rejected', status: 400 });
    expect((misrouted as { bodyExcerpt: string }).bodyExcerpt).toContain(`shop: \\"acme\\" does not match the URL's shop \\"other-shop\\"`);
    expect(receiver.state().stats.answers).toEqual({ '400': 2 });
  });

  it('refuses an id that is not derived from shop, orderId and sequence', async () => {
    const event = { ...labelCreated(1), id: labelCreated(2).id };
    const body = JSON.stringify(event);
    const headers = signWebhook({ id: event.id, timestampSeconds: Math.floor(Date.now() / 1000), body, secrets: [secretA] });
    const answer = await fetch(receiver.webhookUrl('acme'), { method: 'POST', body, headers: { ...headers } });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: string }).error).toMatch(/^id: is not the id derived/);
  });
});

describe('de-duplication and ordering', () => {
  it('a repeated webhook-id answers 200, is counted, and is not applied twice', async () => {
    const event = labelCreated(1);
    expect(await send(event)).toEqual({ kind: 'delivered', status: 200 });
    expect(await send(event)).toEqual({ kind: 'delivered', status: 200 });
    expect(await send(event, { secrets: [secretB] })).toEqual({ kind: 'delivered', status: 200 });
    const state = receiver.state();
    expect(order()).toMatchObject({ received: [1], duplicates: 2 });
    expect(state.events).toHaveLength(1);
    expect(state.stats).toMatchObject({ applied: 1, duplicates: 2, answers: { '200': 3 } });
    const api = (await (await fetch(`${receiver.url}/api/orders`)).json()) as { orders: Array<{ duplicates: number }> };
    expect(api.orders[0]!.duplicates).toBe(2);
  });

  it('a late, lower sequence never downgrades the order, and the arrival order is recorded', async () => {
    await send(labelCreated(1));
    await send(tracking(3, 'Delivered'));
    expect(order()).toMatchObject({ received: [1, 3], missing: [2], gap: true, outOfOrder: false });
    await send(completed(4));
    await send(tracking(2, 'InTransit')); // late: happened before Delivered
    expect(order()).toMatchObject({
      tag: 'Delivered',
      subtag: 'Delivered_001',
      outcome: 'delivered',
      lastSequence: 4,
      lastType: 'shipment.completed',
      received: [1, 3, 4, 2],
      missing: [],
      gap: true,
      outOfOrder: true,
    });
    const events = receiver.state().events;
    expect(events.map((e) => [e.event.sequence, e.status])).toEqual([
      [1, 'applied'],
      [3, 'applied'],
      [4, 'applied'],
      [2, 'late'],
    ]);
    expect(receiver.state().stats).toMatchObject({ applied: 3, late: 1 });
  });

  it('a late event still fills in what no newer event set (the label link after the first tracking update)', async () => {
    await send(tracking(2, 'InTransit'));
    expect(order()).toMatchObject({ labelUrl: null, tag: 'InTransit', outOfOrder: false, gap: true, missing: [1] });
    await send(labelCreated(1));
    expect(order()).toMatchObject({
      labelUrl: `https://labels.example/${orderId}.pdf`,
      tag: 'InTransit',
      lastSequence: 2,
      outOfOrder: true,
      missing: [],
    });
  });

  it('a label.created of a later revision clears a rejection; the late rejection does not bring it back', async () => {
    const rejected = makeShipmentEvent({
      shop: 'acme',
      orderId,
      sequence: 1,
      occurredAt: at(1),
      type: 'label.rejected',
      data: {
        revision: 1,
        kind: 'courier_error',
        courierCode: 'COURIER_ERROR',
        courierMessage: 'Postal code not served',
        message: 'rejected',
        awaitingCorrection: true,
      },
    });
    await send(rejected);
    expect(order().rejection).toMatchObject({ revision: 1, courierMessage: 'Postal code not served' });
    await send(labelCreated(2, { data: { ...labelCreated(2).data, revision: 2 } } as Partial<ShipmentEventInput>));
    expect(order()).toMatchObject({ rejection: null, revision: 2 });
  });
});

describe('pages', () => {
  it('GET / lists orders with escaped values and a clickable label link only for http(s)', async () => {
    await send(labelCreated(1, { orderId: '<script>alert(1)</script>' }));
    await send(
      labelCreated(1, {
        orderId: 'js-link',
        data: { ...labelCreated(1).data, labelUrl: 'javascript:alert(1)' },
      } as Partial<ShipmentEventInput>),
    );
    const page = await fetch(receiver.url);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<meta http-equiv="refresh" content="3">');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>');
    expect(html).toContain(`<a href="https://labels.example/${orderId}.pdf" target="_blank" rel="noopener noreferrer">lbl-${orderId}</a>`);
    expect(html).not.toContain('href="javascript:');
    expect(html).not.toMatch(/<(link|img|script)\b|src=/);
  });

  it('GET / makes an exception or a cancellation stand out from a delivery, and says which shops it lists', async () => {
    const ending = (id: string, outcome: string, tag: string) =>
      makeShipmentEvent({
        shop: 'acme',
        orderId: id,
        sequence: 1,
        occurredAt: at(1),
        type: 'shipment.completed',
        data: { outcome, reason: null, tag, trackingNumber: 'JD0001' },
      } as ShipmentEventInput);
    await send(ending('ok-1', 'delivered', 'Delivered'));
    await send(ending('bad-1', 'exception', 'Exception'));
    await send(ending('bad-2', 'cancelled', 'Cancelled'));
    const html = await (await fetch(receiver.url)).text();
    const row = (id: string) => html.split('<tr').find((r) => r.includes(`<td>${id}</td>`)) ?? '';
    expect(row('ok-1')).toMatch(/^ class="ok">/);
    expect(row('bad-1')).toMatch(/^ class="bad">/);
    expect(row('bad-1')).toContain('<strong>exception</strong>');
    expect(row('bad-2')).toContain('<strong>cancelled</strong>');
    expect(html).toContain('The orders of the shops that send here by signed webhook.');
    expect(html).not.toContain('The shop is DOWN');
  });

  it('GET /api/events is the raw accepted log; unknown paths are 404 and wrong methods 405', async () => {
    const event = labelCreated(1);
    await send(event);
    const { events } = (await (await fetch(`${receiver.url}/api/events`)).json()) as {
      events: Array<{ webhookId: string; status: string; event: unknown }>;
    };
    expect(events).toEqual([{ receivedAt: expect.any(String), webhookId: event.id, status: 'applied', event }]);
    expect((await fetch(`${receiver.url}/nope`)).status).toBe(404);
    expect((await fetch(receiver.webhookUrl('acme'))).status).toBe(405);
    expect((await fetch(`${receiver.url}/api/orders`, { method: 'POST' })).status).toBe(405);
  });
});

describe('faults', () => {
  it('failNext answers the queued statuses in order, before anything is applied', async () => {
    await receiver.setFaults({ failNext: [{ status: 503, retryAfter: '7' }, { status: 500 }, { status: 429 }, { status: 422 }] });
    const event = labelCreated(1);
    expect(await send(event)).toEqual({ kind: 'retry_after', status: 503, retryAfterMs: 7_000 });
    expect(await send(event)).toMatchObject({ kind: 'retry', status: 500 });
    expect(await send(event)).toEqual({ kind: 'retry_after', status: 429, retryAfterMs: 1_000 });
    expect(await send(event)).toMatchObject({ kind: 'rejected', status: 422 });
    expect(receiver.state().orders).toEqual([]);
    expect(await send(event)).toEqual({ kind: 'delivered', status: 200 });
    const stats = (await (await fetch(`${receiver.url}/__admin/stats`)).json()) as { answers: Record<string, number> };
    expect(stats.answers).toEqual({ '200': 1, '422': 1, '429': 1, '500': 1, '503': 1 });
  });

  it('rateLimit answers 429 with Retry-After in seconds once the bucket is empty', async () => {
    await receiver.setFaults({ rateLimit: { perSecond: 0.5, burst: 1 } });
    expect(await send(labelCreated(1))).toEqual({ kind: 'delivered', status: 200 });
    expect(await send(tracking(2, 'InTransit'))).toEqual({ kind: 'retry_after', status: 429, retryAfterMs: 2_000 });
    expect(order().received).toEqual([1]);
  });

  it('errorRate 1 answers 500 every time; 0 never', async () => {
    await receiver.setFaults({ errorRate: 1 });
    for (let i = 0; i < 3; i++) expect(await send(labelCreated(1))).toMatchObject({ kind: 'retry', status: 500 });
    await receiver.setFaults({ errorRate: 0 });
    expect(await send(labelCreated(1))).toEqual({ kind: 'delivered', status: 200 });
  });

  it('gone answers 410 for every shop, or only the listed ones', async () => {
    await receiver.setFaults({ gone: true });
    expect(await send(labelCreated(1))).toEqual({ kind: 'gone', status: 410 });
    await receiver.setFaults({ gone: ['beta'] });
    expect(await send(tracking(1, 'InTransit', 'beta'))).toEqual({ kind: 'gone', status: 410 });
    expect(await send(labelCreated(1))).toEqual({ kind: 'delivered', status: 200 });
  });

  it('slowMs beyond the sender timeout: the sender retries, the receiver applied it once and answers the retry as a duplicate', async () => {
    await receiver.setFaults({ slowMs: 400 });
    const event = labelCreated(1);
    expect(await send(event, { timeoutMs: 100 })).toEqual({ kind: 'retry', status: null, message: 'no answer within 100 ms' });
    await waitFor(() => (receiver.state().events.length === 1 ? true : undefined), { what: 'the slow event applied' });
    await receiver.setFaults({ slowMs: 0 });
    expect(await send(event)).toEqual({ kind: 'delivered', status: 200 });
    expect(order()).toMatchObject({ received: [1], duplicates: 1 });
  });

  it('down refuses connections, kept-alive ones included, and comes back on the same port', async () => {
    expect(await send(labelCreated(1))).toEqual({ kind: 'delivered', status: 200 }); // leaves a keep-alive connection
    await receiver.setFaults({ down: true });
    // The kept-alive connection was destroyed: the first attempt may find it closed
    // ("other side closed") before the client notices; a new connection is refused.
    expect(await send(tracking(2, 'InTransit'))).toMatchObject({ kind: 'retry', status: null });
    const refused = await send(tracking(2, 'InTransit'));
    expect(refused).toMatchObject({ kind: 'retry', status: null });
    expect((refused as { message: string }).message).toMatch(/ECONNREFUSED/);
    expect(receiver.state().faults.down).toBe(true);
    await receiver.setFaults({ down: false });
    expect(await send(tracking(2, 'InTransit'))).toEqual({ kind: 'delivered', status: 200 });
    expect(order().received).toEqual([1, 2]);
  });

  it('over HTTP: downForMs takes it down for a while; down: true and bad patches are 400 naming the field', async () => {
    const post = (body: unknown) => fetch(`${receiver.url}/__admin/faults`, { method: 'POST', body: JSON.stringify(body) });
    const forever = await post({ down: true });
    expect(forever.status).toBe(400);
    expect(JSON.stringify(await forever.json())).toContain('use downForMs');
    const bad = await post({ errorRate: 2, slow: 1 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { details: Array<{ field: string }> }).details.map((d) => d.field).sort()).toEqual(['errorRate', 'slow']);

    const down = await post({ downForMs: 500 });
    expect(down.status).toBe(200);
    expect(await down.json()).toMatchObject({ down: true });
    await waitFor(async () => ((await send(labelCreated(1))).kind === 'retry' ? true : undefined), { what: 'connections refused' });
    await waitFor(async () => ((await send(labelCreated(1))).kind === 'delivered' ? true : undefined), { what: 'back up', intervalMs: 50 });
    expect(receiver.state().faults.down).toBe(false);
  });

  it('setFaults in-process throws InvalidFaultsError naming the field', async () => {
    await expect(receiver.setFaults({ failNext: [{ status: 200 }] })).rejects.toThrow(InvalidFaultsError);
    await expect(receiver.setFaults({ failNext: [{ status: 200 }] })).rejects.toThrow(/failNext\[0\]\.status/);
  });
});

describe('start-up', () => {
  it('refuses malformed secrets without echoing them', async () => {
    await expect(startShopReceiver({ secrets: ['whsec_abc!'] })).rejects.toThrow(/secrets\[0\]: must look like whsec_<base64>/);
    await expect(startShopReceiver({ secrets: ['whsec_abc!'] })).rejects.not.toThrow(/abc!/);
    await expect(startShopReceiver({ secrets: [] })).rejects.toThrow(/needs at least one secret/);
  });
});

describe('the page port and the journal (npm run dev)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'receiver-journal-'));
  const journalFile = path.join(dir, 'shop-receiver.ndjson');
  const sendTo = (r: ShopReceiver, event: ShipmentEvent) =>
    deliverWebhook({ url: r.webhookUrl(event.shop), secrets: [secretA], event, dispatcher, timeoutMs: 5_000 });

  it('keeps serving the page, the API and the admin endpoints while the webhook port is down', async () => {
    const pagePort = await freePort();
    const r = await startShopReceiver({ secrets: [secretA], pagePort });
    try {
      expect(r.pageUrl).toBe(`http://127.0.0.1:${pagePort}`);
      expect(await sendTo(r, labelCreated(1))).toEqual({ kind: 'delivered', status: 200 });
      const down = await fetch(`${r.pageUrl}/__admin/faults`, { method: 'POST', body: JSON.stringify({ downForMs: 60_000 }) });
      expect(down.status).toBe(200);
      expect(await sendTo(r, tracking(2, 'InTransit'))).toMatchObject({ kind: 'retry', status: null });
      const page = await fetch(r.pageUrl!);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain(orderId);
      // The outage is said where nobody can miss it ("Faults: none." before).
      expect(html).toMatch(/The shop is DOWN for (60|59) s more: its webhook endpoint refuses connections/);
      expect(html).toContain('Faults: down.');
      const api = (await (await fetch(`${r.pageUrl}/api/orders`)).json()) as { orders: Array<{ orderId: string }> };
      expect(api.orders.map((o) => o.orderId)).toContain(orderId);
      // The page port takes no webhooks: a sender pointed at it by mistake is told where they go.
      expect((await fetch(`${r.pageUrl}/webhooks/acme`, { method: 'POST' })).status).toBe(404);
    } finally {
      await r.close();
    }
  });

  it("a restarted receiver shows what it was told before, de-duplicating as before; the journal is its owner's only", async () => {
    const first = await startShopReceiver({ secrets: [secretA], journalFile });
    expect(await sendTo(first, labelCreated(1))).toEqual({ kind: 'delivered', status: 200 });
    expect(await sendTo(first, tracking(2, 'InTransit'))).toEqual({ kind: 'delivered', status: 200 });
    expect(await sendTo(first, tracking(2, 'InTransit'))).toEqual({ kind: 'delivered', status: 200 }); // a duplicate: not journalled again
    await first.close();
    expect(statSync(journalFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(journalFile, 'utf8').trim().split('\n')).toHaveLength(2);

    const second = await startShopReceiver({ secrets: [secretA], journalFile });
    try {
      const restored = second.state().orders.find((o) => o.orderId === orderId);
      expect(restored).toMatchObject({ tag: 'InTransit', received: [1, 2], labelUrl: `https://labels.example/${orderId}.pdf` });
      expect(await sendTo(second, tracking(2, 'InTransit'))).toEqual({ kind: 'delivered', status: 200 });
      expect(second.state().stats.duplicates).toBe(1); // known from before the restart
      second.reset();
      expect(readFileSync(journalFile, 'utf8')).toBe('');
    } finally {
      await second.close();
    }
  });
});
