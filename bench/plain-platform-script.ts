/**
 * The way the field's users wire a platform: one write per event, sent again when its answer is
 * lost, nothing read first. Run against the fakes under the same cut-off answers as the worker,
 * for the bench to show its duplicates beside ours.
 */
import type { FakeShopify } from '../fake-shopify';
import type { FakeWooCommerce } from '../fake-woocommerce';
import { countDuplicates, type DuplicateCounts } from './platform-duplicates';

export interface PlainScriptCounts extends DuplicateCounts {
  orders: number;
  answersCutOff: number;
  throttledCalls: number;
  ordersLeftWithoutTracking: number;
}

/** Orders handled at once, as a small queue worker would (unbounded, the store throttles nearly every call). */
const CONCURRENCY = 8;

/** A shipment's changes as the script receives them: the label with its number, then three tracking stages. */
const STAGES = [
  { status: 'IN_TRANSIT', note: 'In transit', minutes: 60 },
  { status: 'OUT_FOR_DELIVERY', note: 'Out for delivery', minutes: 600 },
  { status: 'DELIVERED', note: 'Delivered', minutes: 700 },
] as const;

/** A call sent again until an answer arrives (up to 5 times): what a queue worker or a cron retry does. */
async function retried(call: () => Promise<Response>): Promise<Response | null> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await call();
    } catch {
      // the answer was lost: send it again
    }
  }
  return null;
}

export async function plainScript(
  shopify: FakeShopify,
  woo: FakeWooCommerce,
  orders: number,
  cutOffRate: number,
): Promise<PlainScriptCounts> {
  // A full bucket, as the worker had: the worker's run before spent it at the restore rate.
  for (let i = 0; i < 600 && shopify.throttleStatus().currentlyAvailable < shopify.throttleStatus().maximumAvailable; i++)
    await new Promise((r) => setTimeout(r, 100));
  shopify.resetStats();
  woo.resetStats();
  shopify.setFaults({ commitThenDropRate: cutOffRate });
  woo.setFaults({ commitThenDropRate: cutOffRate });
  const created: Array<{ shop: string; platformOrderId: string }> = [];
  let leftWithoutTracking = 0;
  let next = 0;
  const one = async (i: number) => {
    const number = `PLAIN${String(i).padStart(6, '0')}`;
    if (i % 2 === 0) {
      const order = shopify.createOrder({ lineItems: [{ sku: 'BENCH-1', quantity: 1 }] });
      created.push({ shop: 'shopify-shop', platformOrderId: order.legacyResourceId });
      if (!(await shopifyOrder(shopify.baseUrl, order.id, number))) leftWithoutTracking++;
    } else {
      const order = woo.createOrder({ status: 'processing', lineItems: [{ sku: 'BENCH-1', quantity: 1 }] });
      created.push({ shop: 'woo-shop', platformOrderId: String(order.id) });
      await wooOrder(woo.baseUrl, order.id, number);
    }
  };
  try {
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < orders) await one(next++);
      }),
    );
  } finally {
    shopify.setFaults({ commitThenDropRate: 0 });
    woo.setFaults({ commitThenDropRate: 0 });
  }
  return {
    orders,
    answersCutOff: shopify.stats().dropped + woo.stats().droppedAfterCommit,
    throttledCalls: shopify.stats().throttled + shopify.stats().http429,
    ordersLeftWithoutTracking: leftWithoutTracking,
    ...countDuplicates(shopify, woo, created),
  };
}

/** The parts of the answers the script reads. */
interface Answer {
  data?: {
    order?: { fulfillmentOrders?: { nodes?: Array<{ id: string }> } };
    fulfillmentCreate?: { fulfillment?: { id: string } | null };
  };
}

/** fulfillmentCreate on the label, fulfillmentEventCreate per stage; false when the fulfillment's id never came back. */
async function shopifyOrder(baseUrl: string, orderId: string, number: string): Promise<boolean> {
  const gql = (query: string, variables: Record<string, unknown>) =>
    retried(() =>
      fetch(`${baseUrl}/admin/api/2026-10/graphql.json`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-shopify-access-token': 'shpat_fake_dev_token' },
        body: JSON.stringify({ query, variables }),
      }),
    ).then(async (r) => (r ? ((await r.json()) as Answer) : null));
  const read = await gql('query($id: ID!) { order(id: $id) { fulfillmentOrders(first: 5) { nodes { id } } } }', { id: orderId });
  const fulfillmentOrders = read?.data?.order?.fulfillmentOrders?.nodes ?? [];
  const create = await gql(
    'mutation($f: FulfillmentInput!) { fulfillmentCreate(fulfillment: $f) { fulfillment { id } userErrors { message } } }',
    {
      f: {
        lineItemsByFulfillmentOrder: fulfillmentOrders.map((fo) => ({ fulfillmentOrderId: fo.id })),
        trackingInfo: { company: 'DHL Express', number },
      },
    },
  );
  const fulfillmentId = create?.data?.fulfillmentCreate?.fulfillment?.id;
  if (!fulfillmentId) return false; // the retry met the closed fulfillment order: the script has no id to attach events to
  for (const stage of STAGES) {
    await gql('mutation($e: FulfillmentEventInput!) { fulfillmentEventCreate(fulfillmentEvent: $e) { userErrors { message } } }', {
      e: { fulfillmentId, status: stage.status, happenedAt: new Date(Date.UTC(2026, 10, 1, 0, stage.minutes)).toISOString() },
    });
  }
  return true;
}

/** A tracking item on the label, a note per stage, completed on delivery. */
async function wooOrder(baseUrl: string, id: number, number: string): Promise<void> {
  const auth = `Basic ${Buffer.from('ck_fake_dev_key:cs_fake_dev_secret').toString('base64')}`;
  const send = (method: string, path: string, body: unknown) =>
    retried(() =>
      fetch(`${baseUrl}/wp-json/${path}`, {
        method,
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
  await send('POST', `wc-shipment-tracking/v3/orders/${id}/shipment-trackings`, { tracking_number: number, tracking_provider: 'DHL' });
  for (const stage of STAGES) await send('POST', `wc/v3/orders/${id}/notes`, { note: `Tracking ${number}: ${stage.note}.` });
  await send('PUT', `wc/v3/orders/${id}`, { status: 'completed' });
}
