/**
 * The signed webhook sender against a tiny node:http server on loopback: Standard Webhooks
 * signatures as the `standardwebhooks` package verifies them, and the classification of every
 * answer class, network failure and timeout.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeShipmentEvent, type ShipmentEvent } from '../domain/events';
import {
  classifyResponse,
  deliverWebhook,
  parseRetryAfterMs,
  signWebhook,
  USER_AGENT,
  WEBHOOK_DEFAULTS,
  WebhookArgumentError,
  type DeliveryResult,
} from '../platforms/webhook/write-back';
import { freePort } from '../dev-server/free-port';

const secretA = `whsec_${randomBytes(32).toString('base64')}`;
const secretB = `whsec_${randomBytes(24).toString('base64')}`;
const wrongSecret = `whsec_${randomBytes(32).toString('base64')}`;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  socketPort: number;
}

let server: Server;
let url: string;
let received: Received[] = [];
let respond: (req: IncomingMessage, res: ServerResponse) => void;
// A private agent so these tests neither share nor leave open the module's default one.
const dispatcher = new Agent({ connections: 4 });

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), socketPort: req.socket.remotePort ?? 0 });
      respond(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/acme`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await dispatcher.close();
});
beforeEach(() => {
  received = [];
  respond = (_req, res) => res.writeHead(200).end('ok');
});

let sequence = 0;
function event(): ShipmentEvent {
  sequence += 1;
  return makeShipmentEvent({
    shop: 'acme',
    orderId: 'A-1',
    sequence,
    occurredAt: new Date().toISOString(),
    type: 'tracking.updated',
    data: { tag: 'InTransit', subtag: null, subtagMessage: null, trackingNumber: 'JD1', lastCheckpoint: null },
  });
}

function deliver(extra: Partial<Parameters<typeof deliverWebhook>[0]> = {}): Promise<DeliveryResult> {
  return deliverWebhook({ url, secrets: [secretA], event: event(), dispatcher, ...extra });
}

function answer(status: number, headers: Record<string, string> = {}, body = '') {
  respond = (_req, res) => res.writeHead(status, headers).end(body);
}

/** Headers as the standardwebhooks package takes them. */
function webhookHeaders(h: IncomingHttpHeaders): Record<string, string> {
  return {
    'webhook-id': String(h['webhook-id']),
    'webhook-timestamp': String(h['webhook-timestamp']),
    'webhook-signature': String(h['webhook-signature']),
  };
}

describe('signing (Standard Webhooks v1)', () => {
  it('sends the event as JSON with id, timestamp and a signature the standardwebhooks package verifies', async () => {
    // Non-ASCII text: the signed bytes must be the UTF-8 bytes sent.
    const e = makeShipmentEvent({
      shop: 'acme',
      orderId: 'Ü-1',
      sequence: 1,
      occurredAt: '2025-01-01T00:00:00Z',
      type: 'label.created',
      data: {
        labelId: 'l1',
        revision: 1,
        courier: 'dhl',
        customerOrderNumber: 'Köln-1',
        courierOrderNumber: null,
        trackingNumber: null,
        labelUrl: null,
      },
    });
    const before = Math.floor(Date.now() / 1000);
    expect(await deliverWebhook({ url, secrets: [secretA], event: e, dispatcher })).toEqual({ kind: 'delivered', status: 200 });
    const [r] = received;
    expect(r!.body).toBe(JSON.stringify(e));
    expect(r!.headers['content-type']).toBe('application/json');
    expect(r!.headers['user-agent']).toBe(USER_AGENT);
    expect(r!.headers['webhook-id']).toBe(e.id);
    const ts = Number(r!.headers['webhook-timestamp']);
    expect(ts).toBeGreaterThanOrEqual(before);
    expect(ts).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(String(r!.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
    expect(new Webhook(secretA).verify(r!.body, webhookHeaders(r!.headers))).toEqual(e);
  });

  it('a wrong secret fails verification', async () => {
    await deliver();
    const [r] = received;
    expect(() => new Webhook(wrongSecret).verify(r!.body, webhookHeaders(r!.headers))).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secretA).verify(r!.body.replace('InTransit', 'Delivered'), webhookHeaders(r!.headers))).toThrow(
      /No matching signature/,
    );
  });

  it('signs with every secret during a rotation, and each one verifies on its own', async () => {
    await deliver({ secrets: [secretA, secretB] });
    const [r] = received;
    const signatures = String(r!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures.every((s) => s.startsWith('v1,'))).toBe(true);
    for (const secret of [secretA, secretB]) expect(new Webhook(secret).verify(r!.body, webhookHeaders(r!.headers))).toBeTruthy();
  });

  it('the same event keeps its webhook-id on every attempt; the timestamp follows the clock', async () => {
    const e = event();
    await deliverWebhook({ url, secrets: [secretA], event: e, dispatcher, now: () => 1_700_000_000_000 });
    await deliverWebhook({ url, secrets: [secretA], event: e, dispatcher, now: () => 1_700_000_060_500 });
    expect(received.map((r) => r.headers['webhook-id'])).toEqual([e.id, e.id]);
    expect(received.map((r) => r.headers['webhook-timestamp'])).toEqual(['1700000000', '1700000060']);
    // Timestamps far from now are what receivers reject as replays.
    expect(() => new Webhook(secretA).verify(received[0]!.body, webhookHeaders(received[0]!.headers))).toThrow(/too old/);
  });

  it('reuses keep-alive connections across deliveries', async () => {
    for (let i = 0; i < 6; i++) await deliver();
    // undici frees a connection a tick after the body ends, so sequential calls may alternate
    // between two sockets; without keep-alive there would be six.
    expect(new Set(received.map((r) => r.socketPort)).size).toBeLessThanOrEqual(3);
  });

  it('signWebhook matches the library and refuses malformed secrets without echoing them', () => {
    const headers = signWebhook({ id: 'evt_1', timestampSeconds: 1_700_000_000, body: '{}', secrets: [secretA] });
    expect(headers['webhook-signature']).toBe(new Webhook(secretA).sign('evt_1', new Date(1_700_000_000_000), '{}'));
    const bad = ['whsec_not base64!', 'sk_live_abcdefabcdefabcdefabcdefabcdef', `whsec_${randomBytes(8).toString('base64')}`, ''];
    for (const secret of bad) {
      let message = '';
      try {
        signWebhook({ id: 'evt_1', timestampSeconds: 1, body: '{}', secrets: [secretA, secret] });
      } catch (e) {
        expect(e).toBeInstanceOf(WebhookArgumentError);
        message = (e as Error).message;
      }
      expect(message).toMatch(/^secrets\[1\]: must look like whsec_<base64>/);
      if (secret !== '') expect(message).not.toContain(secret.slice(6));
    }
    expect(() => signWebhook({ id: 'evt_1', timestampSeconds: 1, body: '{}', secrets: [] })).toThrow(/secrets: needs at least one secret/);
  });
});

describe('classification of answers', () => {
  it('200 and 204 are delivered', async () => {
    answer(200, { 'content-type': 'application/json' }, '{"ok":true}');
    expect(await deliver()).toEqual({ kind: 'delivered', status: 200 });
    answer(204);
    expect(await deliver()).toEqual({ kind: 'delivered', status: 204 });
    answer(202);
    expect(await deliver()).toEqual({ kind: 'delivered', status: 202 });
  });

  it('429 honours Retry-After seconds and HTTP-dates; missing or invalid → the default', async () => {
    answer(429, { 'retry-after': '2' });
    expect(await deliver()).toEqual({ kind: 'retry_after', status: 429, retryAfterMs: 2000 });
    const now = Date.parse('2025-03-01T12:00:00Z');
    answer(429, { 'retry-after': new Date(now + 7_000).toUTCString() });
    expect(await deliver({ now: () => now })).toEqual({ kind: 'retry_after', status: 429, retryAfterMs: 7000 });
    answer(429);
    expect(await deliver()).toEqual({ kind: 'retry_after', status: 429, retryAfterMs: WEBHOOK_DEFAULTS.retryAfterMs });
    answer(429, { 'retry-after': 'soon' });
    expect(await deliver()).toEqual({ kind: 'retry_after', status: 429, retryAfterMs: 30_000 });
  });

  it('503 is retry_after too, with or without Retry-After', async () => {
    answer(503, { 'retry-after': '5' });
    expect(await deliver()).toEqual({ kind: 'retry_after', status: 503, retryAfterMs: 5000 });
    answer(503);
    expect(await deliver()).toEqual({ kind: 'retry_after', status: 503, retryAfterMs: 30_000 });
  });

  it('other 5xx (and 408) are retry with the status and a short message', async () => {
    answer(500, {}, 'database\nlocked');
    expect(await deliver()).toEqual({ kind: 'retry', status: 500, message: 'HTTP 500: database locked' });
    answer(502);
    expect(await deliver()).toEqual({ kind: 'retry', status: 502, message: 'HTTP 502' });
    answer(408);
    expect(await deliver()).toMatchObject({ kind: 'retry', status: 408 });
  });

  it('410 is gone', async () => {
    answer(410, {}, 'uninstalled');
    expect(await deliver()).toEqual({ kind: 'gone', status: 410 });
  });

  it('400, 401 and 422 are rejected with an excerpt of the body; 3xx is not followed', async () => {
    answer(400, { 'content-type': 'application/json' }, '{"error":"bad payload"}');
    expect(await deliver()).toEqual({ kind: 'rejected', status: 400, bodyExcerpt: '{"error":"bad payload"}' });
    answer(422, {}, 'x'.repeat(10_000));
    const long = await deliver();
    expect(long).toMatchObject({ kind: 'rejected', status: 422 });
    expect((long as { bodyExcerpt: string }).bodyExcerpt.length).toBe(WEBHOOK_DEFAULTS.excerptChars + 1);
    answer(401);
    expect(await deliver()).toEqual({ kind: 'rejected', status: 401, bodyExcerpt: '' });
    answer(301, { location: 'https://elsewhere.example/' });
    expect(await deliver()).toMatchObject({ kind: 'rejected', status: 301 });
    expect(received).toHaveLength(4);
  });

  it('connection refused is retry with no status', async () => {
    const port = await freePort();
    const result = await deliver({ url: `http://127.0.0.1:${port}/hooks` });
    expect(result).toMatchObject({ kind: 'retry', status: null });
    expect((result as { message: string }).message).toMatch(/ECONNREFUSED/);
  });

  it('no answer within timeoutMs is retry, and does not take much longer', async () => {
    respond = () => undefined; // never answers
    const started = Date.now();
    const result = await deliver({ timeoutMs: 300 });
    expect(result).toEqual({ kind: 'retry', status: null, message: 'no answer within 300 ms' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("the caller's AbortSignal rejects with its reason instead of classifying", async () => {
    respond = () => undefined;
    const controller = new AbortController();
    const pending = deliver({ signal: controller.signal, timeoutMs: 10_000 });
    setTimeout(() => controller.abort(new Error('activity cancelled')), 100);
    await expect(pending).rejects.toThrow('activity cancelled');
    const already = new AbortController();
    already.abort(new Error('cancelled before'));
    await expect(deliver({ signal: already.signal })).rejects.toThrow('cancelled before');
  });

  it('refuses bad arguments before sending anything', async () => {
    await expect(deliver({ url: 'ftp://x.example/' })).rejects.toThrow(/url: must be http/);
    await expect(deliver({ timeoutMs: 0 })).rejects.toThrow(/timeoutMs/);
    await expect(deliver({ event: { ...event(), sequence: 0 } })).rejects.toThrow(/event: sequence/);
    await expect(deliver({ secrets: ['whsec_short'] })).rejects.toThrow(/secrets\[0\]: must look like whsec_<base64>/);
    expect(received).toHaveLength(0);
  });

  it('no returned value ever contains a secret', async () => {
    const results: unknown[] = [];
    const secrets = [secretA, secretB];
    for (const [status, body] of [
      [200, ''],
      [429, ''],
      [500, 'oops'],
      [410, ''],
      [400, 'nope'],
    ] as const) {
      answer(status, {}, body);
      results.push(await deliver({ secrets }));
    }
    respond = () => undefined;
    results.push(await deliver({ secrets, timeoutMs: 100 }));
    results.push(await deliver({ secrets, url: `http://127.0.0.1:${await freePort()}/` }));
    // A receiver that echoes every request header back still leaks only signatures, not secrets.
    respond = (req, res) => res.writeHead(400).end(JSON.stringify(req.headers));
    results.push(await deliver({ secrets }));
    const text = JSON.stringify(results);
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice('whsec_'.length));
    }
  });
});

describe('parseRetryAfterMs and classifyResponse', () => {
  const now = Date.parse('2025-03-01T12:00:00Z');
  it('clamps to [1 s, 24 h] and falls back to 30 s', () => {
    expect(parseRetryAfterMs('0', now)).toBe(1_000);
    expect(parseRetryAfterMs('999999999', now)).toBe(24 * 3_600_000);
    expect(parseRetryAfterMs(new Date(now - 60_000).toUTCString(), now)).toBe(1_000);
    expect(parseRetryAfterMs(['3', '9'], now)).toBe(3_000);
    for (const raw of [undefined, '', '-5', '1.5', 'later']) expect(parseRetryAfterMs(raw, now)).toBe(30_000);
  });

  it('covers every status class in one table', () => {
    const kinds = Object.fromEntries(
      [200, 201, 299, 301, 400, 404, 408, 409, 410, 422, 429, 500, 501, 503, 504].map((s) => [
        s,
        classifyResponse(s, undefined, '', now).kind,
      ]),
    );
    expect(kinds).toEqual({
      200: 'delivered',
      201: 'delivered',
      299: 'delivered',
      301: 'rejected',
      400: 'rejected',
      404: 'rejected',
      408: 'retry',
      409: 'rejected',
      410: 'gone',
      422: 'rejected',
      429: 'retry_after',
      500: 'retry',
      501: 'retry',
      503: 'retry_after',
      504: 'retry',
    });
  });
});
