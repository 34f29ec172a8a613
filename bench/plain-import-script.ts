/**
 * The polling import the field writes, for the bench to show its misses and doubles beside the
 * worker's under the same churn: each run reads what changed since the last run's wall-clock
 * start (no overlap, no platform cursor), WooCommerce by offset pages with `modified_after` in UTC
 * but without `dates_are_gmt` (so the store compares it with its local time), and starts a shipment
 * for each order it reads with nothing remembering what it started (a random id: a re-run doubles).
 * A run that fails or is killed saves nothing, so the next run reads its window again.
 */
export type PlainPlatform = 'shopify' | 'woo';

export interface PlainStores {
  shopifyUrl: string;
  wooUrl: string;
}

/** Orders per page: Shopify's query stays far under the 1,000-point cap; WooCommerce's maximum. */
export const PLAIN_PAGE_SIZE = { shopify: 25, woo: 100 } as const;

const SHOPIFY_QUERY = `query Orders($first: Int!, $after: String, $query: String!) {
  orders(first: $first, after: $after, query: $query, sortKey: UPDATED_AT) {
    pageInfo { hasNextPage endCursor }
    nodes { legacyResourceId name updatedAt shippingLine { title } shippingAddress { address1 city zip countryCodeV2 } lineItems(first: 10) { nodes { sku quantity } } }
  }
}`;

interface ShopifyAnswer {
  errors?: Array<{ extensions?: { code?: string } }>;
  data?: { orders: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: Array<{ legacyResourceId: string }> } };
}

export class PlainImportScript {
  /** Per platform: the wall-clock start of the last run that finished. */
  private readonly since: Record<PlainPlatform, number>;
  /** Per "platform/order id": shipments started (what the bench counts; the script itself keeps nothing). */
  readonly starts = new Map<string, number>();

  constructor(
    private readonly stores: PlainStores,
    firstReachMs: number,
    /** Called after each page with its number in the run (the bench's churn); not part of the script. */
    private readonly afterPage: (platform: PlainPlatform, page: number) => Promise<void> = async () => undefined,
  ) {
    const first = Date.now() - firstReachMs;
    this.since = { shopify: first, woo: first };
  }

  /** One run; throws when a request fails or `signal` aborts (the watermark is then not moved). */
  async run(platform: PlainPlatform, signal: AbortSignal): Promise<{ read: number; firstTime: number }> {
    const startedAt = Date.now();
    const tally = { read: 0, firstTime: 0, pages: 0 };
    // Each page's orders are started as it is read, as a script does: a run killed halfway has started some.
    const start = (ids: string[]) => {
      for (const id of ids) {
        const key = `${platform}/${id}`;
        if (!this.starts.has(key)) tally.firstTime++;
        this.starts.set(key, (this.starts.get(key) ?? 0) + 1);
      }
      tally.read += ids.length;
      return this.afterPage(platform, ++tally.pages);
    };
    if (platform === 'shopify') await this.shopifyPages(signal, start);
    else await this.wooPages(signal, start);
    this.since[platform] = startedAt;
    return { read: tally.read, firstTime: tally.firstTime };
  }

  private async shopifyPages(signal: AbortSignal, start: (ids: string[]) => Promise<void>): Promise<void> {
    const query = `status:open fulfillment_status:unshipped updated_at:>='${new Date(this.since.shopify).toISOString()}'`;
    for (let after: string | null = null, more = true; more;) {
      const answer = await fetch(`${this.stores.shopifyUrl}/admin/api/2026-10/graphql.json`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-shopify-access-token': 'shpat_fake_dev_token' },
        body: JSON.stringify({ query: SHOPIFY_QUERY, variables: { first: PLAIN_PAGE_SIZE.shopify, after, query } }),
        signal,
      });
      if (!answer.ok) throw new Error(`Shopify answered ${answer.status}`);
      const body = (await answer.json()) as ShopifyAnswer;
      if (body.errors?.some((e) => e.extensions?.code === 'THROTTLED')) {
        await new Promise((r) => setTimeout(r, 1000)); // the usual "wait a second and ask again"
        continue;
      }
      if (!body.data) throw new Error('Shopify answered without data');
      await start(body.data.orders.nodes.map((n) => n.legacyResourceId));
      more = body.data.orders.pageInfo.hasNextPage;
      after = body.data.orders.pageInfo.endCursor;
    }
  }

  private async wooPages(signal: AbortSignal, start: (ids: string[]) => Promise<void>): Promise<void> {
    const auth = `Basic ${Buffer.from('ck_fake_dev_key:cs_fake_dev_secret').toString('base64')}`;
    // UTC, written the way the REST docs show dates (no offset), and no dates_are_gmt: the time-zone trap.
    const modifiedAfter = new Date(this.since.woo).toISOString().slice(0, 19);
    for (let page = 1; ; page++) {
      const params = new URLSearchParams({
        status: 'processing',
        modified_after: modifiedAfter,
        orderby: 'modified',
        order: 'asc',
        per_page: String(PLAIN_PAGE_SIZE.woo),
        page: String(page),
      });
      const answer = await fetch(`${this.stores.wooUrl}/wp-json/wc/v3/orders?${params.toString()}`, {
        headers: { authorization: auth },
        signal,
      });
      if (!answer.ok) throw new Error(`WooCommerce answered ${answer.status}`);
      const orders = (await answer.json()) as Array<{ id: number; shipping_lines: Array<{ method_id: string }> }>;
      // Local pickup ships nothing: even a plain script leaves it out.
      await start(orders.filter((o) => o.shipping_lines[0]?.method_id !== 'local_pickup').map((o) => String(o.id)));
      if (orders.length < PLAIN_PAGE_SIZE.woo) return;
    }
  }
}
