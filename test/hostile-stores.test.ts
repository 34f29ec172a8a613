/**
 * Hostile stores (issue 28): a real worker on the real dev server, pulling from and writing back
 * to Shopify and WooCommerce stores that answer absurdly. Each store is the local fake behind a
 * proxy (chaos/hostile-store.ts) that rewrites one thing at a time: an absurd throttleStatus, an
 * order dated 2999 or "garbage", paging that never ends, malformed and huge orders, two orders
 * mapping to one id, a firewall page that echoes the credentials. For each: the worker keeps
 * running, no pull is stuck for good, no order is lost without a rejection naming it, and no
 * secret reaches any text (failures, histories, log lines, the CLI).
 */
import { Runtime } from '@temporalio/worker';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { editJson, startHostileStore, type HostileStore, type StoreAnswer, type StoreRequest } from '../chaos/hostile-store';
import { startFakeShopify, type FakeShopify } from '../fake-shopify';
import { startFakeWooCommerce, type FakeWooCommerce } from '../fake-woocommerce';
import { shipmentWorkflowId } from '../domain/shipment';
import { startShipment } from '../order-import/start-shipment';
import { applySchedule, cursorOf, importShops } from '../shop-import/schedule';
import { loadShopConnectors } from '../platforms/connectors';
import { stateQuery, type ShipmentOutcome } from '../workflow-definitions/shipment';
import { shopPullScheduleId, type ShopPullResult } from '../workflow-definitions/shop-pull';
import { runCli } from './helpers/cli';
import { startHarness, type Harness } from './helpers/harness';
import { order } from './helpers/orders';
import { pullNow } from './helpers/shop-pulls';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

const SHOPIFY_TOKEN = 'shpat_fake_dev_token';
const CLIENT_SECRET = 'fake-client-secret';
const WOO_KEY = 'ck_fake_dev_key';
const WOO_SECRET = 'cs_fake_dev_secret';
const SECRETS = [SHOPIFY_TOKEN, CLIENT_SECRET, WOO_KEY, WOO_SECRET];

const MAPPING = {
  defaultService: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' },
  units: { weight: 'kg', dimension: 'cm' },
};
const SHIP_FROM = { address: { streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' } };
const IMPORT = { every: '1h', overlap: '0s', firstPull: '1d', maxPages: 10, paused: true };

let env: TestWorkflowEnvironment;
let shopify: FakeShopify;
let woo: FakeWooCommerce;
let hostileShopify: HostileStore;
let hostileWoo: HostileStore;
let h: Harness;
let client: Client;
/** Every line the worker logged (the SDK's and the activities'), for the secrets check. */
const logged: string[] = [];

function connectors() {
  return {
    maxBackoff: '1s',
    'h-shopify': {
      type: 'shopify',
      storeDomain: 'fake-store.myshopify.com',
      adminUrl: hostileShopify.url,
      accessToken: SHOPIFY_TOKEN,
      timeout: '2s',
      import: { ...IMPORT, mapping: { ...MAPPING, orderIdPrefix: 'HS-' } },
    },
    'h-shopify-cc': {
      type: 'shopify',
      // Another store: shops of one store share its client (and so the first one's credentials).
      storeDomain: 'cc-store.myshopify.com',
      adminUrl: hostileShopify.url,
      clientId: 'fake-client-id',
      clientSecret: CLIENT_SECRET,
      timeout: '2s',
    },
    'h-woo': {
      type: 'woocommerce',
      url: hostileWoo.url,
      consumerKey: WOO_KEY,
      consumerSecret: WOO_SECRET,
      auth: 'query-string',
      timeout: '2s',
      import: { ...IMPORT, pageSize: 5, mapping: { ...MAPPING, shipFrom: SHIP_FROM, orderIdPrefix: 'HW-' } },
    },
  };
}

beforeAll(async () => {
  env = await createTestEnv();
  shopify = await startFakeShopify();
  woo = await startFakeWooCommerce();
  hostileShopify = await startHostileStore(shopify.baseUrl);
  hostileWoo = await startHostileStore(woo.baseUrl);
  const logger = Runtime.instance().logger;
  const log = logger.log.bind(logger);
  logger.log = (level, message, meta) => {
    logged.push(`${message} ${JSON.stringify(meta ?? {})}`);
    log(level, message, meta);
  };
  const shopConnectors = loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(connectors()) });
  h = await startHarness({ env, shopConnectors, fake: { trackingStepPolls: 1 } });
  client = h.env.client;
  for (const connector of importShops(shopConnectors)) await applySchedule(client, connector, h.taskQueue);
});
afterEach(() => {
  hostileShopify?.tamper(null);
  hostileWoo?.tamper(null);
  // Whatever a store sent, the worker is still serving every shop.
  expect(h.worker.getState()).toBe('RUNNING');
});
afterAll(async () => {
  await h?.stop();
  await hostileShopify?.close();
  await hostileWoo?.close();
  await shopify?.close();
  await woo?.close();
  await env?.teardown();
});

// ---------------------------------------------------------------- what the stores send

/** Rewrites every Shopify order the store answers with (page nodes and single reads) whose id is in `edits`. */
function shopifyOrders(edits: Record<string, (node: Record<string, unknown>) => void>) {
  return (_req: StoreRequest, answer: StoreAnswer) =>
    editJson(answer, (json) => {
      const nodes = [...(json?.data?.orders?.nodes ?? []), ...(json?.data?.order ? [json.data.order] : [])];
      for (const node of nodes) edits[node.legacyResourceId]?.(node);
    });
}

/** The first line of a Shopify order node's first fulfillment order. */
function firstLine(o: Record<string, unknown>): Record<string, unknown> {
  return (o as { fulfillmentOrders: { nodes: Array<{ lineItems: { nodes: Array<Record<string, unknown>> } }> } }).fulfillmentOrders
    .nodes[0]!.lineItems.nodes[0]!;
}

/** Rewrites every WooCommerce order the store lists whose id is in `edits`. */
function wooOrders(edits: Record<string, (order: Record<string, unknown>) => void>) {
  return (req: StoreRequest, answer: StoreAnswer) =>
    /\/wc\/v3\/orders\?/.test(req.url)
      ? editJson(answer, (json) => {
          for (const o of Array.isArray(json) ? json : []) edits[String(o.id)]?.(o);
        })
      : undefined;
}

function shopifyOrder(extra: Parameters<FakeShopify['createOrder']>[0] | object = {}): string {
  return shopify.createOrder({ lineItems: [{ sku: 'BEAN-1', quantity: 1, grams: 500 }], ...extra }).legacyResourceId;
}

function wooOrder(): string {
  return String(woo.createOrder({ status: 'processing', lineItems: [{ sku: 'BEAN-1', quantity: 1, weight: '0.5' }] }).id);
}

async function cursor(shop: string) {
  return cursorOf(await client.schedule.getHandle(shopPullScheduleId(shop)).describe());
}

/** A pull expected to fail: its failure's message, cause by cause. */
async function failedPull(shop: string): Promise<string> {
  const err = await pullNow(client, shop).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const messages: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) messages.push(e.message);
  return messages.join(' / ');
}

function reasonsOf(result: ShopPullResult, platformOrderId: string): string[] {
  return result.rejections
    .filter((r) => r.platformOrderId === platformOrderId)
    .flatMap((r) => r.reasons.map((x) => `${x.field}: ${x.message}`));
}

// ---------------------------------------------------------------- finding 1: numbers

describe('an absurd throttleStatus (finding 1)', () => {
  it('the write-back does not stop the worker, and the shipment reaches the shop once the store is sane again', async () => {
    hostileShopify.tamper((_req, answer) =>
      editJson(answer, (json) => {
        if (json?.extensions?.cost)
          json.extensions.cost.throttleStatus = { maximumAvailable: 1000, currentlyAvailable: -1e308, restoreRate: 1e-300 };
      }),
    );
    const id = shopifyOrder();
    const started = await startShipment(client, h.taskQueue, { ...order('h-shopify', 'S-THROTTLE-1'), platformOrderId: id });
    // The worker used to stop at the first write ("Invalid millis Infinity"): wait well past it.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(h.worker.getState()).toBe('RUNNING');
    expect(logged.some((l) => l.includes('sent cost figures out of range: ignored'))).toBe(true);
    hostileShopify.tamper(null);
    const outcome = (await client.workflow.getHandle(started.workflowId).result()) as ShipmentOutcome;
    expect(outcome.shopSync).toMatchObject({ status: 'up_to_date' });
  });

  it('a pull reading through the same answers completes', async () => {
    hostileShopify.tamper((_req, answer) =>
      editJson(answer, (json) => {
        if (json?.extensions?.cost) json.extensions.cost.throttleStatus.currentlyAvailable = -1e308;
      }),
    );
    const id = shopifyOrder();
    const result = await pullNow(client, 'h-shopify');
    expect(result.counts.started).toBeGreaterThanOrEqual(1);
    expect(reasonsOf(result, id)).toEqual([]);
  });
});

// ---------------------------------------------------------------- findings 2-3: dates and the cursor

describe.each([
  ['Shopify', 'h-shopify', 'updatedAt', () => shopifyOrder(), shopifyOrders] as const,
  ['WooCommerce', 'h-woo', 'date_modified_gmt', () => wooOrder(), wooOrders] as const,
])('%s: dates the cursor must not believe (findings 2 and 3)', (_platform, shop, field, make, tamper) => {
  it.each([
    ['far in the future', '2999-01-01T00:00:00Z', /is in the future/],
    ['not a time', 'garbage', /is not a time/],
  ])(
    'an order dated %s is a rejection naming the field and value; the cursor stays sane and later orders are read',
    async (_what, date, said) => {
      const bad = make();
      hostileShopify.tamper(null);
      (shop === 'h-shopify' ? hostileShopify : hostileWoo).tamper(tamper({ [bad]: (o) => (o[field] = date) }));
      const first = await pullNow(client, shop);
      expect(reasonsOf(first, bad).join('\n')).toMatch(new RegExp(`${field}: .*${date.slice(0, 10)}.*`));
      expect(reasonsOf(first, bad).join('\n')).toMatch(said);
      const held = await cursor(shop);
      expect(held.retry).toContain(bad);
      expect(held.since === null || Date.parse(held.since) <= Date.now() + 60_000).toBe(true);
      // An order placed after the bad one becomes a shipment on the next pull.
      const later = make();
      const second = await pullNow(client, shop);
      expect(second.counts.started).toBeGreaterThanOrEqual(1);
      expect(reasonsOf(second, later)).toEqual([]);
      expect(reasonsOf(second, bad)).not.toEqual([]); // still reported, still in the retry list
    },
  );

  it('a cursor an older version let a wrong date into is repaired at the next pull, with a warning', async () => {
    for (const poisoned of ['2999-01-01T00:00:00Z', 'not-a-date']) {
      const handle = client.schedule.getHandle(shopPullScheduleId(shop));
      await handle.update((previous) => ({
        ...previous,
        action: { ...previous.action, args: [{ shop, cursor: { since: poisoned, retry: [] } }] },
      }));
      const missed = make();
      const result = await pullNow(client, shop);
      expect(result.counts.started).toBeGreaterThanOrEqual(1);
      expect(reasonsOf(result, missed)).toEqual([]);
      expect((await cursor(shop)).since).not.toBe(poisoned);
      expect(logged.some((l) => l.includes('pull cursor was unsound and is repaired') && l.includes(shop))).toBe(true);
    }
  });
});

// ---------------------------------------------------------------- finding 4: paging

describe('paging that never ends (finding 4)', () => {
  it('Shopify: hasNextPage with the same endCursor ends the pull with a failure naming the store; the next pull goes on', async () => {
    shopifyOrder();
    // Every page says there is another, after the first page's cursor (a real one: the store checks them).
    let repeated: string | null = null;
    hostileShopify.tamper((_req, answer) =>
      editJson(answer, (json) => {
        const pageInfo = json?.data?.orders?.pageInfo;
        if (!pageInfo) return;
        repeated ??= pageInfo.endCursor;
        json.data.orders.pageInfo = { hasNextPage: true, endCursor: repeated };
      }),
    );
    const began = Date.now();
    const message = await failedPull('h-shopify');
    expect(message).toMatch(/Shopify store fake-store\.myshopify\.com: the next page has the same cursor/);
    expect(Date.now() - began).toBeLessThan(20_000);
    hostileShopify.tamper(null);
    const next = await pullNow(client, 'h-shopify');
    expect(next.pages).toBeGreaterThanOrEqual(1);
    expect((await client.schedule.getHandle(shopPullScheduleId('h-shopify')).describe()).state.paused).toBe(true); // as configured, untouched
  });

  it('WooCommerce: full pages of ever-new ids end the pull after import.maxPages, naming the site', async () => {
    wooOrder();
    let next = 9_000_000;
    hostileWoo.tamper((req, answer) =>
      /\/wc\/v3\/orders\?/.test(req.url) && !req.url.includes('include=')
        ? editJson(answer, (json) => {
            const template = Array.isArray(json) ? json[0] : undefined;
            if (!template) return;
            json.length = 0;
            for (let i = 0; i < 5; i++) json.push({ ...template, id: next++, number: String(next) });
          })
        : undefined,
    );
    expect(await failedPull('h-woo')).toMatch(
      /WooCommerce site http:\/\/127\.0\.0\.1:\d+: more than 10 pages in one pull \(import\.maxPages\)/,
    );
  });
});

// ---------------------------------------------------------------- findings 5-6: one order, one unit of failure

describe('malformed and huge orders (findings 5 and 6)', () => {
  it('WooCommerce: a decimal quantity and an id past 2^53 are each one rejection with the field; the rest of the page is started', async () => {
    const [decimal, huge, fine] = [wooOrder(), wooOrder(), wooOrder()];
    hostileWoo.tamper(
      wooOrders({
        [decimal]: (o) => ((o.line_items as Array<Record<string, unknown>>)[0]!.quantity = 1.5),
        [huge]: (o) => (o.id = 2 ** 53 + 2),
      }),
    );
    const result = await pullNow(client, 'h-woo');
    expect(reasonsOf(result, decimal).join()).toMatch(/line_items\.0\.quantity: must be a whole number of items/);
    expect(reasonsOf(result, String(2 ** 53 + 2)).join()).toMatch(/^id: /);
    expect(reasonsOf(result, fine)).toEqual([]);
    expect(result.counts.started).toBeGreaterThanOrEqual(1);
    expect((await cursor('h-woo')).retry).toContain(decimal);
    // Read again on every pull (it is in the retry list): warned when first rejected, not again while its reasons stay.
    const again = await pullNow(client, 'h-woo');
    expect(reasonsOf(again, decimal).join()).toMatch(/quantity/);
    const about = (message: string) => logged.filter((l) => l.startsWith(message) && l.includes(`"platformOrderId":"${decimal}"`));
    expect(about('order not imported')).toHaveLength(1);
    // At debug (the retry list and the page behind the cursor both read it again).
    expect(about('order still not imported (reasons unchanged)').length).toBeGreaterThanOrEqual(1);
  });

  it('Shopify: a weight unit outside the four, a null productTitle and a non-numeric id are each one rejection; the rest is started', async () => {
    const [unit, title, id, fine] = [shopifyOrder(), shopifyOrder(), shopifyOrder(), shopifyOrder()];
    hostileShopify.tamper(
      shopifyOrders({
        [unit]: (o) => (firstLine(o).weight = { unit: 'STONES', value: 1 }),
        [title]: (o) => (firstLine(o).productTitle = null),
        [id]: (o) => (o.legacyResourceId = '77 OR id:1'),
      }),
    );
    const result = await pullNow(client, 'h-shopify');
    expect(reasonsOf(result, unit).join()).toMatch(/fulfillmentOrders\.nodes\.0\.lineItems\.nodes\.0\.weight\.unit/);
    expect(reasonsOf(result, title).join()).toMatch(/productTitle/);
    expect(reasonsOf(result, '77 OR id:1').join()).toMatch(/legacyResourceId: must be a numeric id/);
    expect(reasonsOf(result, fine)).toEqual([]);
    const held = await cursor('h-shopify');
    expect(held.retry).toEqual(expect.arrayContaining([unit, title]));
    expect(held.retry).not.toContain('77 OR id:1'); // an id that cannot be read again is reported, never queried
  });

  it('Shopify: the fields change detection reads (cancelledAt, displayFinancialStatus, totalQuantity) out of range are each one rejection', async () => {
    const [cancelled, financial, total, fine] = [shopifyOrder(), shopifyOrder(), shopifyOrder(), shopifyOrder()];
    hostileShopify.tamper(
      shopifyOrders({
        [cancelled]: (o) => (o.cancelledAt = 'C'.repeat(50_000)),
        [financial]: (o) => (o.displayFinancialStatus = 'PAID\u202eDEDNUFER'),
        [total]: (o) => (firstLine(o).totalQuantity = 1e12),
      }),
    );
    const result = await pullNow(client, 'h-shopify');
    expect(reasonsOf(result, cancelled).join()).toMatch(/^cancelledAt: /);
    expect(reasonsOf(result, financial).join()).toMatch(/^displayFinancialStatus: holds control or direction-override characters/);
    expect(reasonsOf(result, total).join()).toMatch(/fulfillmentOrders\.nodes\.0\.lineItems\.nodes\.0\.totalQuantity/);
    expect(reasonsOf(result, fine)).toEqual([]);
    expect((await cursor('h-shopify')).retry).toEqual(expect.arrayContaining([cancelled, financial, total]));
  });

  it('four orders with 450 KB names: each is rejected at read, the pull completes, its result stays small', async () => {
    // Four: five make a page over the 2 MB a platform answer may be (read as a failed answer).
    const ids = Array.from({ length: 4 }, () => wooOrder());
    const long = 'N'.repeat(450_000);
    hostileWoo.tamper(wooOrders(Object.fromEntries(ids.map((id) => [id, (o: Record<string, unknown>) => (o.number = long)]))));
    const result = await pullNow(client, 'h-woo');
    for (const id of ids) expect(reasonsOf(result, id).join()).toMatch(/^number: longer than 100 characters/);
    expect(JSON.stringify(result).length).toBeLessThan(20_000);
    expect((await cursor('h-woo')).since).not.toBeNull();
  });

  it('an order too large for a page that the store then does not give is a rejection, not dropped', async () => {
    const big = shopifyOrder({ lineItems: Array.from({ length: 12 }, (_, i) => ({ sku: `SKU-${i}`, quantity: 1, grams: 100 })) });
    hostileShopify.tamper((req, answer) =>
      req.body.includes('WholeOrderToLabel') ? editJson(answer, (json) => (json.data = { order: null })) : undefined,
    );
    const result = await pullNow(client, 'h-shopify');
    expect(reasonsOf(result, big).join()).toMatch(/gave no order when it was read alone/);
  });
});

// ---------------------------------------------------------------- finding 7: platform identity

describe('two platform orders, one order id (finding 7)', () => {
  it('both are kept apart: the second is a rejection naming both ids, on every pull, and schedule describe shows it', async () => {
    const first = shopify.createOrder({ name: '#5001', lineItems: [{ sku: 'BEAN-1', quantity: 1, grams: 500 }] }).legacyResourceId;
    const second = shopify.createOrder({ name: '5001', lineItems: [{ sku: 'BEAN-1', quantity: 1, grams: 500 }] }).legacyResourceId;
    const one = await pullNow(client, 'h-shopify');
    // In one page the import names both as duplicates; across a page boundary (fulfilled orders of earlier tests read again move it), the start does.
    expect(reasonsOf(one, second).join()).toMatch(
      new RegExp(
        `platform order ${first} there, ${second} here|already belongs to platform order ${first}'s shipment; platform order ${second}`,
      ),
    );
    const two = await pullNow(client, 'h-shopify');
    expect(reasonsOf(two, second).join()).toMatch(
      new RegExp(`already belongs to platform order ${first}'s shipment; platform order ${second}`),
    );
    expect(two.counts.alreadyKnown).toBeGreaterThanOrEqual(0);
    expect((await cursor('h-shopify')).retry).toContain(second);
    const described = await runCli(['schedule', 'describe', 'h-shopify'], { env: cliEnv() });
    expect(described.stdout).toMatch(new RegExp(`platform order ${second} \\(HS-5001\\): orderId: .*${first}`));
  });

  it("the other platform order's cancel in the shop does not reach the first one's shipment (shopOrderChanged names its order)", async () => {
    const lines = [{ sku: 'BEAN-1', quantity: 1, grams: 500 }];
    const first = shopify.createOrder({ name: '#5002', lineItems: lines }).legacyResourceId;
    const second = shopify.createOrder({ name: '5002', lineItems: lines }).legacyResourceId;
    await pullNow(client, 'h-shopify');
    shopify.cancelOrder(second);
    const after = await pullNow(client, 'h-shopify');
    expect(after.counts.changed).toBe(0);
    const state = await client.workflow.getHandle(shipmentWorkflowId({ shop: 'h-shopify', orderId: 'HS-5002' })).query(stateQuery);
    expect(state.platformOrderId).toBe(first);
    expect(state.shopOrder?.changes).toEqual([]);
    expect(state.outcome).not.toBe('cancelled_in_shop');
  });
});

// ---------------------------------------------------------------- finding 8: secrets in echoes

describe('stores that echo the request (finding 8)', () => {
  it('WooCommerce with query-string auth: a firewall 403 page quoting the URL leaves no key or secret in any text', async () => {
    wooOrder();
    hostileWoo.tamper((req) => ({
      status: 403,
      headers: { 'content-type': 'text/html' },
      text: `<html><body><h1>403 Forbidden</h1><p>Request blocked: GET ${req.url} (consumer_key in the query string)</p></body></html>`,
    }));
    const message = await failedPull('h-woo');
    expect(message).toMatch(/refused \(HTTP 403\)/);
    expect(message).toMatch(/consumer_key=\[redacted\]/);
    const cli = await runCli(['import', '--from', 'h-woo', '--dry-run'], { env: cliEnv() });
    expect(cli.stderr + cli.stdout).toMatch(/403/);
    expectNoSecret(message, cli.stdout, cli.stderr);
  });

  it('Shopify: a GraphQL error quoting the token, and a token endpoint echoing the request, leave no secret in any text', async () => {
    hostileShopify.tamper((req) =>
      req.url.includes('access_token')
        ? { status: 400, headers: { 'content-type': 'text/plain' }, text: `bad request: ${req.body}` }
        : { status: 401, headers: { 'content-type': 'text/plain' }, text: `token ${req.headers['x-shopify-access-token']} is not valid` },
    );
    const message = await failedPull('h-shopify');
    expect(message).toMatch(/\[redacted\]/);
    const id = shopifyOrder();
    const started = await startShipment(client, h.taskQueue, { ...order('h-shopify-cc', 'S-ECHO-1'), platformOrderId: id });
    const handle = client.workflow.getHandle(started.workflowId);
    const state = await waitFor(
      async () => ((await handle.query(stateQuery)).shopSync?.failure ? await handle.query(stateQuery) : undefined),
      {
        what: 'the refused token stopping the delivery',
        timeoutMs: 30_000,
        intervalMs: 200,
      },
    );
    expect(state.shopSync!.failure!.message).toMatch(/access token refused .*client_secret.*\[redacted\]/);
    const outcome = state.shopSync;
    expectNoSecret(message, JSON.stringify(outcome));
  });
});

// ---------------------------------------------------------------- finding 10: smaller points

describe('smaller points (finding 10)', () => {
  it('an HTML page from Shopify names what came instead of an empty message', async () => {
    hostileShopify.tamper(() => ({ status: 200, headers: { 'content-type': 'text/html' }, text: '<html><body>Maintenance</body></html>' }));
    expect(await failedPull('h-shopify')).toMatch(/ordersToLabel: \S/);
  });

  it("a Retry-After longer than the schedule's interval ends the pull at once instead of holding it", async () => {
    hostileWoo.tamper(() => ({ status: 429, headers: { 'retry-after': '86400' }, text: 'slow down' }));
    const began = Date.now();
    expect(await failedPull('h-woo')).toMatch(/longer than the schedule's interval/);
    expect(Date.now() - began).toBeLessThan(20_000);
  });
});

// ---------------------------------------------------------------- across the suite

it('no secret in any pull history, shipment history or worker log line of the whole suite', async () => {
  const texts: string[] = [...logged];
  for await (const wf of client.workflow.list({ query: `TaskQueue = '${h.taskQueue}'` })) {
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    texts.push(
      JSON.stringify(history, (_key, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value)),
    );
  }
  expect(texts.length).toBeGreaterThan(10);
  expectNoSecret(...texts);
});

function expectNoSecret(...texts: string[]): void {
  for (const text of texts) for (const secret of SECRETS) expect(text.includes(secret), `${secret} in ${text.slice(0, 200)}`).toBe(false);
}

function cliEnv(): Record<string, string> {
  return {
    ...h.shippingEnv,
    TEMPORAL_ADDRESS: h.env.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    SHOP_CONNECTORS: JSON.stringify(connectors()),
  };
}
