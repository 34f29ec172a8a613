/**
 * The WooCommerce client against the local fake over loopback, without Temporal: what a host's
 * 429 and 503 pages, WordPress error bodies and query-string auth become.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { loadShopConnectors, type WooCommerceConnector } from '../platforms/connectors';
import { StopDelivery } from '../platforms/connection/result';
import { WooClient } from '../platforms/woocommerce/client';

let fake: FakeWooCommerce | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function client(entry: Record<string, unknown> = {}): WooClient {
  const shops = {
    w: {
      type: 'woocommerce',
      url: fake!.baseUrl,
      consumerKey: 'ck_fake_dev_key',
      consumerSecret: 'cs_fake_dev_secret',
      timeout: '2s',
      ...entry,
    },
  };
  return new WooClient(loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(shops) }).connectorFor('w') as WooCommerceConnector);
}

const Order = z.object({ id: z.number(), status: z.string() }).loose();
const signal = () => new AbortController().signal;

async function failure(call: Promise<unknown>): Promise<StopDelivery['result']> {
  try {
    await call;
  } catch (err) {
    if (err instanceof StopDelivery) return err.result;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('WooClient', () => {
  it("a host's 504 backs off; its 429 holds the site for its Retry-After; a 503 page without one for the default", async () => {
    fake = await startFakeWooCommerce();
    const id = fake.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] }).id;
    fake.setFaults({
      failNext: [
        { route: 'GET order', kind: '504' },
        { route: 'GET order', kind: '429', retryAfterSeconds: 1 },
        { route: 'GET order', kind: '503' },
      ],
    });
    const c = client();
    const read = (maxWaitMs?: number) => c.call('GET', `wc/v3/orders/${id}`, Order, signal(), { maxWaitMs });
    expect(await failure(read())).toMatchObject({ kind: 'retry', status: 504 });
    expect(await failure(read())).toEqual({ kind: 'retry_after', status: 429, retryAfterMs: 1_000 });
    // Nothing goes to the site before the Retry-After ends: a call that may wait waits, then is sent.
    const before = Date.now();
    expect(await failure(read())).toMatchObject({ kind: 'retry_after', status: 503, retryAfterMs: 30_000 });
    expect(Date.now() - before).toBeGreaterThanOrEqual(950);
    // A call that may not wait that long is given what is left, unsent.
    const requests = fake.stats().requests;
    const held = await failure(read(1_000));
    expect(held).toMatchObject({ kind: 'retry_after', status: 503 });
    expect((held as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(25_000);
    expect(fake.stats().requests).toBe(requests);
    expect(fake.stats().callsBeforeRetryAfter).toBe(0);
  });

  it("WordPress's error code and message name what is wrong; a 404 the caller expects is an answer", async () => {
    fake = await startFakeWooCommerce();
    const c = client();
    expect(await failure(c.call('PUT', 'wc/v3/orders/999999', Order, signal(), { body: { status: 'completed' } }))).toMatchObject({
      kind: 'rejected',
      status: 400,
      bodyExcerpt: expect.stringContaining('woocommerce_rest_shop_order_invalid_id'),
    });
    const missing = await c.call('GET', 'wc/v3/orders/999999', Order, signal(), { expect: [404] });
    expect(missing).toEqual({ status: 404, data: null, errorCode: 'woocommerce_rest_shop_order_invalid_id' });
  });

  it('a host that strips Authorization needs auth "query-string"; with it the calls pass', async () => {
    fake = await startFakeWooCommerce({ stripAuthorization: true });
    const id = fake.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] }).id;
    expect(await failure(client().call('GET', `wc/v3/orders/${id}`, Order, signal()))).toMatchObject({ kind: 'rejected', status: 401 });
    expect((await client({ auth: 'query-string' }).call('GET', `wc/v3/orders/${id}`, Order, signal())).data).toMatchObject({ id });
  });
});
