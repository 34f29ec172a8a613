/**
 * The Shopify client against the local fake over loopback, without Temporal: the client
 * credentials grant and its refresh, refused credentials, THROTTLED answered as a 429, and a
 * misspelt field refused by the fake's real GraphQL validation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { loadShopConnectors, type ShopifyConnector } from '../platforms/connectors';
import { StopDelivery } from '../platforms/connection/result';
import { ShopifyClient, type Operation } from '../platforms/shopify/client';
import * as op from '../platforms/shopify/operations';

let fake: FakeShopify | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function connector(entry: Record<string, unknown>): ShopifyConnector {
  const shops = { s: { type: 'shopify', storeDomain: 'fake-store.myshopify.com', adminUrl: fake!.baseUrl, timeout: '2s', ...entry } };
  return loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(shops) }).connectorFor('s') as ShopifyConnector;
}

const signal = () => new AbortController().signal;

async function refusal(call: Promise<unknown>): Promise<StopDelivery['result']> {
  try {
    await call;
  } catch (err) {
    if (err instanceof StopDelivery) return err.result;
    throw err;
  }
  throw new Error('expected the call to be refused');
}

describe('ShopifyClient', () => {
  it('gets a token with the client credentials grant, reuses it, and fetches a new one before it expires', async () => {
    fake = await startFakeShopify({ clientId: 'app-1', clientSecret: 'shpss_right', tokenLifetimeSeconds: 2 });
    const order = fake.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] });
    const client = new ShopifyClient(connector({ clientId: 'app-1', clientSecret: 'shpss_right' }));
    expect((await client.call(op.readOrder, { id: order.id }, signal(), 1_000)).order?.id).toBe(order.id);
    await client.call(op.readOrder, { id: order.id }, signal(), 1_000);
    expect(fake.stats().tokensIssued).toBe(1);
    await new Promise((r) => setTimeout(r, 1_900)); // past 90 % of the lifetime
    await client.call(op.readOrder, { id: order.id }, signal(), 1_000);
    expect(fake.stats().tokensIssued).toBe(2);
    expect(fake.stats().unauthorized).toBe(0);
  });

  it('refused app credentials stop the delivery with a message naming the settings, not the secret', async () => {
    fake = await startFakeShopify({ clientId: 'app-1', clientSecret: 'shpss_right' });
    const client = new ShopifyClient(connector({ clientId: 'app-1', clientSecret: 'shpss_wrong_value' }));
    const result = await refusal(client.call(op.readOrder, { id: 'gid://shopify/Order/1' }, signal(), 1_000));
    expect(result).toMatchObject({ kind: 'rejected' });
    expect(JSON.stringify(result)).toContain('check clientId and clientSecret');
    expect(JSON.stringify(result)).not.toContain('shpss_wrong_value');
  });

  it('THROTTLED as an HTTP 429 is waited for from the bucket and sent again', async () => {
    fake = await startFakeShopify({ throttleAs: 'http-429', bucket: { maximumAvailable: 40, restoreRate: 20 } });
    const order = fake.createOrder({ lineItems: [{ sku: 'A', quantity: 1 }] });
    // Two clients share the store's bucket without sharing a view of it: one of them is throttled.
    const a = new ShopifyClient(connector({ accessToken: 'shpat_fake_dev_token' }));
    const b = new ShopifyClient(connector({ accessToken: 'shpat_fake_dev_token' }));
    const reads = await Promise.all([a, b, a, b].map((c) => c.call(op.readOrder, { id: order.id }, signal(), 10_000)));
    expect(reads.every((r) => r.order?.id === order.id)).toBe(true);
    expect(fake.stats().http429).toBeGreaterThan(0);
  });

  it('a misspelt field is refused by the GraphQL validation, as Shopify would, and stops the delivery', async () => {
    fake = await startFakeShopify();
    const client = new ShopifyClient(connector({ accessToken: 'shpat_fake_dev_token' }));
    const misspelt: Operation<unknown> = {
      name: 'order',
      estimatedCost: 5,
      document: 'query($id: ID!) { order(id: $id) { id fulfilmentOrders(first: 1) { nodes { id } } } }',
      data: z.unknown(),
    };
    const result = await refusal(client.call(misspelt, { id: 'gid://shopify/Order/1' }, signal(), 1_000));
    expect(result).toMatchObject({ kind: 'rejected', status: 200 });
    expect(JSON.stringify(result)).toContain('fulfilmentOrders');
  });
});
