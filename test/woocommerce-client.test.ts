/**
 * The WooCommerce client against the local fake over loopback, without Temporal: what a host's
 * 429 and 503 pages, WordPress error bodies and query-string auth become.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { loadShopConnectors, type WooCommerceConnector } from '../shop-sync/connectors';
import { StopDelivery } from '../shop-sync/platform/result';
import { WooClient } from '../shop-sync/woocommerce/client';

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
  it("a host's 429 waits its Retry-After; a 503 page without one waits the default; a 504 backs off", async () => {
    fake = await startFakeWooCommerce();
    const id = fake.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] }).id;
    fake.setFaults({
      failNext: [
        { route: 'GET order', kind: '429', retryAfterSeconds: 7 },
        { route: 'GET order', kind: '503' },
        { route: 'GET order', kind: '504' },
      ],
    });
    const c = client();
    expect(await failure(c.call('GET', `wc/v3/orders/${id}`, Order, signal()))).toEqual({
      kind: 'retry_after',
      status: 429,
      retryAfterMs: 7_000,
    });
    expect(await failure(c.call('GET', `wc/v3/orders/${id}`, Order, signal()))).toMatchObject({
      kind: 'retry_after',
      status: 503,
      retryAfterMs: 30_000,
    });
    expect(await failure(c.call('GET', `wc/v3/orders/${id}`, Order, signal()))).toMatchObject({ kind: 'retry', status: 504 });
    expect((await c.call('GET', `wc/v3/orders/${id}`, Order, signal())).data).toMatchObject({ id, status: 'processing' });
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
