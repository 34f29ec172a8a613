/**
 * The shop trigger over loopback: signed Shopify and WooCommerce deliveries trigger the shop's
 * pull once, bursts coalesce, bad signatures, duplicates, pings, oversize and slow bodies and
 * strangers trigger nothing, a failing or hanging trigger is counted and does not stick, and
 * close() waits for the calls. verifySignature is tested on its own first.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import pino from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  startShopTrigger,
  verifySignature,
  type ShopTrigger,
  type ShopTriggerOptions,
  type TriggerContext,
  type TriggerLogger,
  type TriggerShop,
} from '../shop-trigger';
import { waitFor } from './helpers/wait';

const sign = (body: Buffer | string, secret: string) => createHmac('sha256', secret).update(body).digest('base64');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('verifySignature', () => {
  const secret = 'shpss_current';
  const previous = 'shpss_previous';
  const body = Buffer.from('{"id":820982911946154500,"name":"#9999","line_items":[]}');

  it('accepts the signature under the right secret', () => {
    expect(verifySignature(body, sign(body, secret), [secret])).toBe(true);
  });

  it('refuses a signature under another secret', () => {
    expect(verifySignature(body, sign(body, 'someone-else'), [secret])).toBe(false);
  });

  it('accepts a signature under any secret of the list (rotation)', () => {
    expect(verifySignature(body, sign(body, previous), [secret, previous])).toBe(true);
    expect(verifySignature(body, sign(body, secret), [secret, previous])).toBe(true);
  });

  it('refuses a body tampered by one byte', () => {
    const tampered = Buffer.from(body);
    tampered[10] = tampered[10]! ^ 0x01;
    expect(verifySignature(tampered, sign(body, secret), [secret])).toBe(false);
  });

  it('refuses a header that is not strict base64, without throwing', () => {
    expect(verifySignature(body, 'not base64 at all!', [secret])).toBe(false);
    // A body whose signature has a '+' or '/', so its URL-safe spelling differs.
    const [signed, good] = Array.from({ length: 64 }, (_, i) => Buffer.from(`${i}`))
      .map((b) => [b, sign(b, secret)] as const)
      .find(([, sig]) => /[+/]/.test(sig))!;
    const urlSafe = good.replace(/\+/g, '-').replace(/\//g, '_');
    // Buffer's decoder is lenient: these spellings decode to the same 32 bytes, yet are refused.
    expect(Buffer.from(urlSafe, 'base64').equals(Buffer.from(good, 'base64'))).toBe(true);
    expect(verifySignature(signed, urlSafe, [secret])).toBe(false);
    expect(verifySignature(signed, `${good.slice(0, 20)}*${good.slice(20)}`, [secret])).toBe(false);
    expect(verifySignature(signed, ` ${good}`, [secret])).toBe(false);
    // Non-zero padding bits in the last character: the same bytes, not the canonical spelling.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const noisy = `${good.slice(0, 42)}${alphabet[alphabet.indexOf(good[42]!) | 1]}=`;
    expect(Buffer.from(noisy, 'base64').equals(Buffer.from(good, 'base64'))).toBe(true);
    expect(verifySignature(signed, noisy, [secret])).toBe(false);
    expect(verifySignature(signed, good, [secret])).toBe(true);
  });

  it('refuses a header of a different length, without throwing', () => {
    const digest = createHmac('sha256', secret).update(body).digest();
    expect(verifySignature(body, digest.subarray(0, 16).toString('base64'), [secret])).toBe(false);
    expect(verifySignature(body, Buffer.concat([digest, Buffer.from([0])]).toString('base64'), [secret])).toBe(false);
    expect(verifySignature(body, digest.toString('hex'), [secret])).toBe(false);
    expect(verifySignature(body, '', [secret])).toBe(false);
  });

  it('refuses everything with no secrets, an empty secret or no header', () => {
    expect(verifySignature(body, sign(body, secret), [])).toBe(false);
    expect(verifySignature(body, sign(body, ''), [''])).toBe(false);
    expect(verifySignature(body, undefined, [secret])).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------

const SHOPIFY_SECRET = `shpss_${randomBytes(16).toString('hex')}`;
const SHOPIFY_PREVIOUS = `shpss_${randomBytes(16).toString('hex')}`;
const WOO_SECRET = randomBytes(24).toString('base64');
const STRANGER = `shpss_${randomBytes(16).toString('hex')}`;

const SHOPS: TriggerShop[] = [
  { shop: 'oslo-outdoor', platform: 'shopify', secrets: [SHOPIFY_SECRET, SHOPIFY_PREVIOUS] },
  { shop: 'porto-wines', platform: 'woocommerce', secrets: [WOO_SECRET] },
  { shop: 'lyon céramiques/2', platform: 'shopify', secrets: [SHOPIFY_SECRET] },
];

/** Every log line, as JSON text, to check what was said and that nothing secret was. */
function recordingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void => {
      lines.push({ level, fields, message });
    };
  const logger: TriggerLogger = { info: at('info'), warn: at('warn'), debug: at('debug') };
  return { logger, lines, text: () => JSON.stringify(lines) };
}

interface Harness {
  trigger: ShopTrigger;
  calls: string[];
  log: ReturnType<typeof recordingLogger>;
}

const started: ShopTrigger[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);

afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.close()));
  expect(unhandled).toEqual([]);
});

async function start(
  overrides: Partial<ShopTriggerOptions> = {},
  behaviour?: (shop: string, n: number, context: TriggerContext) => Promise<void>,
): Promise<Harness> {
  const calls: string[] = [];
  const log = recordingLogger();
  const trigger = await startShopTrigger({
    host: '127.0.0.1',
    port: 0,
    shops: (name) => SHOPS.find((s) => s.shop === name) ?? null,
    // Not async: a behaviour that throws synchronously must reach the trigger as a throw.
    trigger: (shop, context) => {
      calls.push(shop);
      return behaviour ? behaviour(shop, calls.length, context) : Promise.resolve();
    },
    logger: log.logger,
    coalesceMs: 50,
    ...overrides,
  });
  started.push(trigger);
  return { trigger, calls, log };
}

const orderBody = (id = 1001) =>
  JSON.stringify({ id, admin_graphql_api_id: `gid://shopify/Order/${id}`, name: `#${id}`, email: 'kari@example.com', line_items: [] });

let eventCounter = 0;
function shopifyHeaders(body: string, secret = SHOPIFY_SECRET, eventId = `evt-${++eventCounter}`): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-shopify-hmac-sha256': sign(body, secret),
    'x-shopify-topic': 'orders/create',
    'x-shopify-event-id': eventId,
    'x-shopify-webhook-id': `wh-${eventCounter}`,
    'x-shopify-shop-domain': 'oslo-outdoor.myshopify.com',
  };
}

function wooHeaders(body: string, secret = WOO_SECRET): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-wc-webhook-signature': sign(body, secret),
    'x-wc-webhook-topic': 'order.updated',
    'x-wc-webhook-resource': 'order',
    'x-wc-webhook-event': 'updated',
    'x-wc-webhook-id': '7',
    'x-wc-webhook-delivery-id': randomBytes(16).toString('hex'),
  };
}

async function post(url: string, body: string | Buffer, headers: Record<string, string>, method = 'POST') {
  const res = await fetch(url, { method, body: method === 'GET' ? undefined : body, headers });
  const text = await res.text();
  return { status: res.status, text, json: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

describe('startShopTrigger', () => {
  it('a signed Shopify delivery answers 200 and triggers the shop once', async () => {
    const { trigger, calls, log } = await start();
    const body = orderBody();
    const answer = await post(trigger.hookUrl('shopify', 'oslo-outdoor'), body, shopifyHeaders(body));
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ result: 'accepted' });
    await waitFor(() => (calls.length === 1 ? true : undefined));
    await sleep(150);
    expect(calls).toEqual(['oslo-outdoor']);
    const stats = trigger.stats().shops['oslo-outdoor']!;
    expect(stats).toMatchObject({ received: 1, verified: 1, rejected: 0, triggersCalled: 1, triggerFailures: 0 });
    expect(stats.topics).toEqual({ 'orders/create': 1 });
    expect(log.lines.some((l) => l.level === 'debug' && l.fields.topic === 'orders/create')).toBe(true);
  });

  it('a signed WooCommerce delivery answers 200 and triggers the shop once', async () => {
    const { trigger, calls } = await start();
    const body = JSON.stringify({ id: 4711, status: 'processing', line_items: [] });
    const answer = await post(trigger.hookUrl('woocommerce', 'porto-wines'), body, wooHeaders(body));
    expect(answer.status).toBe(200);
    await waitFor(() => (calls.length === 1 ? true : undefined));
    await sleep(150);
    expect(calls).toEqual(['porto-wines']);
    expect(trigger.stats().shops['porto-wines']!.topics).toEqual({ 'order.updated': 1 });
  });

  it('accepts the previous secret during a rotation, and a URL-encoded shop name', async () => {
    const { trigger, calls } = await start();
    const body = orderBody(7);
    expect((await post(trigger.hookUrl('shopify', 'oslo-outdoor'), body, shopifyHeaders(body, SHOPIFY_PREVIOUS))).status).toBe(200);
    const url = trigger.hookUrl('shopify', 'lyon céramiques/2');
    expect(url).toContain('/hooks/shopify/lyon%20c%C3%A9ramiques%2F2');
    expect((await post(url, body, shopifyHeaders(body))).status).toBe(200);
    await waitFor(() => (calls.length === 2 ? true : undefined));
    expect(calls.sort()).toEqual(['lyon céramiques/2', 'oslo-outdoor']);
  });

  it('a burst of 200 deliveries makes one trigger call at once and one per coalescing window it lasted (2 on a quiet machine)', async () => {
    const { trigger, calls } = await start({ coalesceMs: 2000 });
    const url = trigger.hookUrl('shopify', 'oslo-outdoor');
    const sentAt = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => {
        const body = orderBody(5000 + i);
        return post(url, body, shopifyHeaders(body));
      }),
    );
    // A loaded machine may take longer than one window to take 200 deliveries: one more call per
    // window the burst itself lasted.
    const windows = 2 + Math.floor((Date.now() - sentAt) / 2000);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    // The first call at once, one trailing call after the window for the rest, then nothing.
    await waitFor(() => (calls.length >= 2 ? true : undefined), { timeoutMs: 5000 });
    await sleep(2200);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.length).toBeLessThanOrEqual(windows);
    expect(trigger.stats().shops['oslo-outdoor']).toMatchObject({ received: 200, verified: 200, triggersCalled: calls.length });
  });

  it('a bad or missing signature answers 401, says nothing secret and triggers nothing', async () => {
    const { trigger, calls, log } = await start();
    const body = orderBody(31337);
    const bad = await post(trigger.hookUrl('shopify', 'oslo-outdoor'), body, shopifyHeaders(body, STRANGER));
    expect(bad.status).toBe(401);
    expect(bad.json).toEqual({ error: 'signature mismatch' });
    const { 'x-shopify-hmac-sha256': _, ...unsigned } = shopifyHeaders(body);
    const missing = await post(trigger.hookUrl('shopify', 'oslo-outdoor'), body, unsigned);
    expect(missing.status).toBe(401);
    expect(missing.json).toEqual({ error: 'missing signature' });
    const wooBad = await post(trigger.hookUrl('woocommerce', 'porto-wines'), body, wooHeaders(body, STRANGER));
    expect(wooBad.status).toBe(401);
    // A Shopify shop has no unsigned ping.
    expect((await post(trigger.hookUrl('shopify', 'oslo-outdoor'), 'webhook_id=3', {})).status).toBe(401);

    await sleep(150);
    expect(calls).toEqual([]);
    const stats = trigger.stats();
    expect(stats.shops['oslo-outdoor']).toMatchObject({ received: 3, verified: 0, rejected: 3, triggersCalled: 0 });
    expect(stats.shops['porto-wines']).toMatchObject({ rejected: 1 });
    for (const text of [bad.text, missing.text, wooBad.text, log.text()]) {
      for (const secret of [SHOPIFY_SECRET, SHOPIFY_PREVIOUS, WOO_SECRET, STRANGER, 'kari@example.com', '31337']) {
        expect(text).not.toContain(secret);
      }
    }
    expect(log.lines.filter((l) => l.level === 'warn' && l.message.includes('refused'))).toHaveLength(4);
  });

  it('a repeated X-Shopify-Event-Id answers 200 without a second trigger', async () => {
    const { trigger, calls } = await start();
    const url = trigger.hookUrl('shopify', 'oslo-outdoor');
    const body = orderBody(42);
    expect((await post(url, body, shopifyHeaders(body, SHOPIFY_SECRET, 'evt-same'))).json).toEqual({ result: 'accepted' });
    await waitFor(() => (calls.length === 1 ? true : undefined));
    await sleep(100); // past the coalescing window, so only de-duplication can hold a call back
    expect((await post(url, body, shopifyHeaders(body, SHOPIFY_SECRET, 'evt-same'))).json).toEqual({ result: 'duplicate' });
    await sleep(150);
    expect(calls).toHaveLength(1);
    // Another event of the same order is news.
    expect((await post(url, body, shopifyHeaders(body, SHOPIFY_SECRET, 'evt-other'))).json).toEqual({ result: 'accepted' });
    await waitFor(() => (calls.length === 2 ? true : undefined));
    expect(trigger.stats().shops['oslo-outdoor']).toMatchObject({ verified: 3, duplicates: 1, triggersCalled: 2 });
  });

  it("answers WooCommerce's unsigned ping with 200 and triggers nothing", async () => {
    const { trigger, calls, log } = await start();
    const answer = await post(trigger.hookUrl('woocommerce', 'porto-wines'), 'webhook_id=17', {
      'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
      'user-agent': 'WooCommerce/9.4.0 Hookshot (WordPress/6.7)',
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ result: 'ping' });
    await sleep(150);
    expect(calls).toEqual([]);
    expect(trigger.stats().shops['porto-wines']).toMatchObject({ pings: 1, verified: 0, rejected: 0, triggersCalled: 0 });
    expect(log.lines.some((l) => l.level === 'info' && l.message.includes('ping') && l.fields.webhookId === '17')).toBe(true);
  });

  it('refuses a body over maxBodyBytes with 413, declared or streamed, and triggers nothing', async () => {
    const { trigger, calls } = await start({ maxBodyBytes: 1024 });
    const url = trigger.hookUrl('shopify', 'oslo-outdoor');
    const big = 'x'.repeat(4096);
    const declared = await post(url, big, shopifyHeaders(big));
    expect(declared.status).toBe(413);
    expect(declared.headers.get('connection')).toBe('close');

    // Chunked, no Content-Length: refused once the count passes the limit.
    const chunk = new TextEncoder().encode('y'.repeat(512));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        sent += 1;
        if (sent > 4) return controller.close();
        await sleep(20);
        controller.enqueue(chunk);
      },
    });
    const streamed = await fetch(url, {
      method: 'POST',
      body: stream,
      headers: shopifyHeaders('irrelevant'),
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    expect(streamed.status).toBe(413);
    await streamed.text();

    await sleep(100);
    expect(calls).toEqual([]);
    expect(trigger.stats().shops['oslo-outdoor']).toMatchObject({ received: 2, tooLarge: 2, verified: 0 });
  });

  it('a body refused on its declared length leaves no read bound running behind its answer', async () => {
    const { trigger } = await start({ maxBodyBytes: 1024, readTimeoutMs: 200 });
    const big = 'x'.repeat(4096);
    expect((await post(trigger.hookUrl('shopify', 'oslo-outdoor'), big, shopifyHeaders(big))).status).toBe(413);
    // Past the read bound: a timer still running would fail a body nobody reads (an uncaught error).
    await sleep(400);
    expect(trigger.stats().shops['oslo-outdoor']).toMatchObject({ received: 1, tooLarge: 1, timedOut: 0 });
  });

  it('refuses a body that does not arrive within readTimeoutMs with 408', async () => {
    const { trigger, calls } = await start({ readTimeoutMs: 200 });
    const socket = connect(trigger.port, '127.0.0.1');
    const answer = new Promise<string>((resolve, reject) => {
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    socket.write(
      'POST /hooks/woocommerce/porto-wines HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":',
    );
    const text = await answer;
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(calls).toEqual([]);
    expect(trigger.stats().shops['porto-wines']).toMatchObject({ received: 1, timedOut: 1 });
  });

  it('a sender that hangs up mid-body is counted as aborted, triggers nothing, and the next delivery is served', async () => {
    const { trigger, calls } = await start();
    const socket = connect(trigger.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      'POST /hooks/shopify/oslo-outdoor HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":',
    );
    await sleep(100);
    socket.destroy();
    await sleep(200);
    expect(trigger.stats().shops['oslo-outdoor']).toMatchObject({ received: 1, aborted: 1, verified: 0 });
    const body = orderBody();
    expect((await post(trigger.hookUrl('shopify', 'oslo-outdoor'), body, shopifyHeaders(body))).status).toBe(200);
    await sleep(150);
    expect(calls).toEqual(['oslo-outdoor']);
  });

  it('answers 404 for unknown shops, the wrong platform and other paths, and 405 for other methods', async () => {
    const { trigger, calls } = await start();
    const body = orderBody();
    const headers = shopifyHeaders(body);
    expect((await post(trigger.hookUrl('shopify', 'nobody'), body, headers)).json).toEqual({ error: 'unknown shop' });
    expect((await post(trigger.hookUrl('shopify', 'nobody'), body, headers)).status).toBe(404);
    expect((await post(trigger.hookUrl('shopify', 'porto-wines'), body, headers)).status).toBe(404);
    expect((await post(`${trigger.url}/hooks/magento/oslo-outdoor`, body, headers)).status).toBe(404);
    expect((await post(`${trigger.url}/hooks/shopify/oslo-outdoor/extra`, body, headers)).status).toBe(404);
    expect((await post(`${trigger.url}/hooks/shopify/%E0%A4%A`, body, headers)).status).toBe(404);
    expect((await post(`${trigger.url}/`, body, headers)).status).toBe(404);
    const get = await post(trigger.hookUrl('shopify', 'oslo-outdoor'), '', {}, 'GET');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    await sleep(100);
    expect(calls).toEqual([]);
    const stats = trigger.stats();
    expect(stats.totals).toMatchObject({ notFound: 7, methodNotAllowed: 1, received: 0 });
    // Strangers' names never become stats keys.
    expect(Object.keys(stats.shops)).toEqual([]);
  });

  it('a throwing trigger still answers 200, is counted and logged, and the next webhook triggers again', async () => {
    const { trigger, calls, log } = await start({}, async (_shop, n) => {
      if (n === 1) throw new Error('schedule not found');
    });
    const url = trigger.hookUrl('shopify', 'oslo-outdoor');
    const first = orderBody(1);
    expect((await post(url, first, shopifyHeaders(first))).status).toBe(200);
    await waitFor(() => (trigger.stats().shops['oslo-outdoor']!.triggerFailures === 1 ? true : undefined));
    const warning = log.lines.find((l) => l.level === 'warn' && l.message.includes('trigger failed'));
    expect(warning?.fields).toEqual({ shop: 'oslo-outdoor', error: 'schedule not found' });

    const second = orderBody(2);
    expect((await post(url, second, shopifyHeaders(second))).status).toBe(200);
    await waitFor(() => (calls.length === 2 ? true : undefined));
    await sleep(100);
    expect(trigger.stats().shops['oslo-outdoor']).toMatchObject({ triggersCalled: 2, triggerFailures: 1 });
  });

  it('a trigger that throws synchronously or hangs is a failure too, and the shop is not stuck', async () => {
    const hanging = new Promise<void>(() => undefined);
    const { trigger, calls } = await start({ triggerTimeoutMs: 100 }, (_shop, n) => {
      if (n === 1) throw new TypeError('not a function');
      if (n === 2) return hanging;
      return Promise.resolve();
    });
    const url = trigger.hookUrl('woocommerce', 'porto-wines');
    for (let n = 1; n <= 3; n++) {
      const body = JSON.stringify({ id: n });
      expect((await post(url, body, wooHeaders(body))).status).toBe(200);
      await waitFor(() => (calls.length === n ? true : undefined), { timeoutMs: 2000 });
      await waitFor(() => (n < 3 && trigger.stats().shops['porto-wines']!.triggerFailures < n ? undefined : true));
    }
    expect(trigger.stats().shops['porto-wines']).toMatchObject({ triggersCalled: 3, triggerFailures: 2 });
  });

  it('close() runs the call still due and waits for the calls under way', async () => {
    const finished: number[] = [];
    const { trigger, calls } = await start({ coalesceMs: 60_000 }, async (_shop, n) => {
      await sleep(200);
      finished.push(n);
    });
    const url = trigger.hookUrl('shopify', 'oslo-outdoor');
    for (const id of [1, 2]) {
      const body = orderBody(id);
      expect((await post(url, body, shopifyHeaders(body))).status).toBe(200);
    }
    expect(calls).toHaveLength(1); // the second is due in a minute
    await trigger.close();
    expect(finished).toEqual([1, 2]);
    await expect(fetch(url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('close() gives up on a hanging trigger after closeTimeoutMs and aborts it', async () => {
    let signal: AbortSignal | undefined;
    const { trigger, calls } = await start({ closeTimeoutMs: 100, logger: pino({ level: 'silent' }) }, (_shop, _n, context) => {
      signal = context.signal;
      return new Promise<void>(() => undefined);
    });
    for (const id of [1, 2]) {
      const body = orderBody(id);
      expect((await post(trigger.hookUrl('shopify', 'oslo-outdoor'), body, shopifyHeaders(body))).status).toBe(200);
      await waitFor(() => signal);
    }
    const t0 = Date.now();
    await trigger.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(signal!.aborted).toBe(true);
    // The second delivery's call was due behind the hanging one: once close gives up, it never starts.
    await sleep(100);
    expect(calls).toHaveLength(1);
    expect(trigger.stats().shops['oslo-outdoor']).toMatchObject({ triggersCalled: 1, triggerFailures: 1 });
  });

  it('refuses option values that would disable a bound', async () => {
    const base = { host: '127.0.0.1', port: 0, shops: () => null, trigger: async () => undefined, logger: pino({ level: 'silent' }) };
    await expect(startShopTrigger({ ...base, maxBodyBytes: 0 })).rejects.toThrow(/maxBodyBytes/);
    await expect(startShopTrigger({ ...base, readTimeoutMs: Infinity })).rejects.toThrow(/readTimeoutMs/);
    await expect(startShopTrigger({ ...base, coalesceMs: -1 })).rejects.toThrow(/coalesceMs/);
  });
});

describe('the order a verified webhook names', () => {
  /** Sends each body under its topic to the shop, then the calls' contexts (coalesced: one window). */
  async function named(platform: 'shopify' | 'woocommerce', deliveries: { topic: string; body: string }[], overrides = {}) {
    const contexts: Omit<TriggerContext, 'signal'>[] = [];
    const { trigger } = await start({ coalesceMs: 300, ...overrides }, async (_shop, _n, { signal: _, ...wanted }) => {
      contexts.push(wanted);
    });
    const shop = platform === 'shopify' ? 'oslo-outdoor' : 'porto-wines';
    for (const { topic, body } of deliveries) {
      const headers =
        platform === 'shopify'
          ? { ...shopifyHeaders(body), 'x-shopify-topic': topic }
          : { ...wooHeaders(body), 'x-wc-webhook-topic': topic };
      expect((await post(trigger.hookUrl(platform, shop), body, headers)).status).toBe(200);
    }
    await sleep(450);
    return { contexts, stats: trigger.stats().shops[shop]! };
  }

  it("passes a Shopify order's id, and a refund's order_id, to the trigger", async () => {
    const { contexts, stats } = await named('shopify', [
      { topic: 'orders/updated', body: orderBody(5_912_345_678_901) },
      { topic: 'refunds/create', body: JSON.stringify({ id: 77, order_id: 450789469, restock: true }) },
      { topic: 'orders/cancelled', body: orderBody(5_912_345_678_901) },
    ]);
    expect(contexts).toEqual([
      { orderIds: ['5912345678901'], fromCursor: false },
      { orderIds: ['450789469', '5912345678901'], fromCursor: false },
    ]);
    expect(stats.namedOrders).toBe(3);
  });

  it("passes a WooCommerce order's id to the trigger", async () => {
    const { contexts } = await named('woocommerce', [{ topic: 'order.updated', body: JSON.stringify({ id: 4711, status: 'cancelled' }) }]);
    expect(contexts).toEqual([{ orderIds: ['4711'], fromCursor: false }]);
  });

  it('a body naming no usable order asks for a pull from the cursor', async () => {
    const hold = JSON.stringify({ fulfillment_order: { id: 'gid://shopify/FulfillmentOrder/1', status: 'on_hold' } });
    const { contexts, stats } = await named('shopify', [
      // A fulfillment order's webhook names the fulfillment order only.
      { topic: 'fulfillment_orders/placed_on_hold', body: hold },
      { topic: 'orders/updated', body: 'not json' },
      { topic: 'orders/updated', body: JSON.stringify([{ id: 1 }]) },
      { topic: 'orders/updated', body: JSON.stringify({ id: 'abc' }) },
      { topic: 'orders/updated', body: JSON.stringify({ id: -5 }) },
      { topic: 'orders/updated', body: JSON.stringify({ id: 0 }) },
      { topic: 'orders/updated', body: JSON.stringify({ id: 1.5 }) },
      // Shopify's test notification's id is past 2^53: JSON cannot carry it exactly.
      { topic: 'orders/updated', body: '{"id":820982911946154508}' },
      { topic: 'orders/updated', body: JSON.stringify({ id: '1'.repeat(21) }) },
      { topic: 'orders/updated', body: JSON.stringify({ order_id: 12 }) },
      { topic: 'products/update', body: JSON.stringify({ id: 12 }) },
      { topic: 'orders/updated', body: JSON.stringify({ id: { $gt: 1 } }) },
      { topic: 'orders/updated', body: `${'['.repeat(100_000)}${']'.repeat(100_000)}` },
    ]);
    expect(contexts).toEqual([
      { orderIds: [], fromCursor: true },
      { orderIds: [], fromCursor: true },
    ]);
    expect(stats.namedOrders).toBe(0);
    // Not an order topic: where an id would be is unknown, so nothing is read.
    const woo = await named('woocommerce', [{ topic: 'product.updated', body: JSON.stringify({ id: 9 }) }]);
    expect(woo.contexts).toEqual([{ orderIds: [], fromCursor: true }]);
  });

  it('gathers at most maxOrderIds per call; beyond them the call asks for a pull from the cursor', async () => {
    const { contexts } = await named(
      'shopify',
      [1, 2, 3, 4, 2].map((id) => ({ topic: 'orders/updated', body: orderBody(id) })),
      { maxOrderIds: 2 },
    );
    expect(contexts).toEqual([
      { orderIds: ['1'], fromCursor: false },
      { orderIds: ['2', '3'], fromCursor: true },
    ]);
  });
});
