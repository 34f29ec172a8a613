/**
 * The order checked with its shop right before its label is bought: a cancel, a hold or an
 * address corrected in the seconds before the label would otherwise still get a parcel. Only a
 * change that matters to the label stops the attempt, and the shipment takes it as a pulled
 * change. Cheap: checks of one shop within `BATCH_MS` go as one request, and Shopify reads an
 * order whole only when its `updatedAt` moved. A check that cannot be made in time lets the
 * label go on and is logged: a store's outage never stops labels. docs/shop-import.md,
 * "Checked with the shop right before the label".
 */
import { z } from 'zod';
import { differences, readBefore, type KnownReading, type ShopChangeKind, type ShopOrderChange } from '../domain/shop-order';
import type { PlatformConnections } from '../platforms/connections';
import type { Operation } from '../platforms/shopify/client';
import { changeOf } from './changes';
import { modifiedTime } from '../domain/platform-order-checks';
import { seenOf } from './facts';
import { isRefused, type PlatformOrder } from '../domain/platform-order';
import type { OrderSource, ImportConnector } from '../platforms/order-source';

/** Checks of one shop within this long share a request. */
export const BATCH_MS = 50;
/** The most ids one request names (Shopify's search string stays short; WooCommerce's page is 100). */
const IDS_PER_REQUEST = 25;
/** A check not answered by then lets the label go on. */
export const CHECK_TIMEOUT_MS = 5_000;

/** The label goes on (`unchanged`, or `unchecked` with why), or the order changed as `change` says (`kinds`: what differs). */
export type CheckAnswer =
  | { result: 'unchanged' }
  | { result: 'unchecked'; reason: string }
  | { result: 'changed'; change: ShopOrderChange; kinds: ShopChangeKind[] };

const ModifiedTimes = z.object({
  orders: z.object({
    nodes: z.array(z.object({ legacyResourceId: z.string().max(40), updatedAt: z.string().max(64) })).max(IDS_PER_REQUEST),
  }),
});

/** Only the orders' modified times: 1 point an order on Shopify's cost rules. */
const ordersModified: Operation<z.infer<typeof ModifiedTimes>> = {
  name: 'ordersModified',
  estimatedCost: 2 + IDS_PER_REQUEST,
  document: `query OrdersModified($first: Int!, $query: String!) {
  orders(first: $first, query: $query) { nodes { legacyResourceId updatedAt } }
}`,
  data: ModifiedTimes,
};

interface Waiter {
  known: KnownReading;
  resolve: (order: PlatformOrder | null) => void;
  reject: (err: unknown) => void;
}

interface Batch {
  connector: ImportConnector;
  waiters: Waiter[];
}

export class LabelOrderCheck {
  private readonly batches = new Map<string, Batch>();

  constructor(
    private readonly source: OrderSource,
    private readonly platforms: PlatformConnections,
    private readonly now: () => number = Date.now,
  ) {}

  /** The order as the shop has it now, compared with what the shipment knows. Never throws. */
  async check(connector: ImportConnector, known: KnownReading, signal: AbortSignal): Promise<CheckAnswer> {
    const timeout = AbortSignal.timeout(CHECK_TIMEOUT_MS);
    try {
      const order = await Promise.race([this.enqueue(connector, known), aborted(AbortSignal.any([signal, timeout]))]);
      // Same second as the known reading is compared too (modified times are to the second); older,
      // or of the same second and read before the known one, is a stale copy.
      if (order === null || readBefore(order, known)) return { result: 'unchanged' };
      // The facts first (digests): the order is mapped again only when it changed, as rarely as the merchant acts.
      const kinds = differences(known.facts, seenOf(order).facts);
      if (kinds.length === 0) return { result: 'unchanged' };
      return { result: 'changed', change: changeOf(connector.shop, order, connector.import.mapping), kinds };
    } catch (err) {
      if (signal.aborted) throw err;
      return {
        result: 'unchecked',
        reason: timeout.aborted ? `no answer from the shop within ${CHECK_TIMEOUT_MS} ms` : String((err as Error).message),
      };
    }
  }

  private enqueue(connector: ImportConnector, known: KnownReading): Promise<PlatformOrder | null> {
    return new Promise((resolve, reject) => {
      let batch = this.batches.get(connector.shop);
      if (!batch) {
        batch = { connector, waiters: [] };
        this.batches.set(connector.shop, batch);
        const started = batch;
        setTimeout(() => void this.send(started), BATCH_MS);
      }
      batch.waiters.push({ known, resolve, reject });
      if (batch.waiters.length >= IDS_PER_REQUEST) void this.send(batch);
    });
  }

  /** One request for the batch's orders; each waiter gets its order (null: not modified since it knew it, or not listed). */
  private async send(batch: Batch): Promise<void> {
    if (this.batches.get(batch.connector.shop) !== batch) return; // sent already (full before its timer)
    this.batches.delete(batch.connector.shop);
    const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
    try {
      const orders = await this.read(batch.connector, batch.waiters, signal);
      for (const w of batch.waiters) w.resolve(orders.get(w.known.platformOrderId) ?? null);
    } catch (err) {
      for (const w of batch.waiters) w.reject(err);
    }
  }

  private async read(connector: ImportConnector, waiters: Waiter[], signal: AbortSignal): Promise<Map<string, PlatformOrder>> {
    const ids = [...new Set(waiters.map((w) => w.known.platformOrderId))];
    const modified = connector.type === 'shopify' ? await this.modifiedOnShopify(connector, waiters, ids, signal) : ids;
    const orders = modified.length === 0 ? [] : await this.source.byIds(connector, modified, signal);
    return new Map(orders.filter((o): o is PlatformOrder => !isRefused(o)).map((o) => [o.platformOrderId, o]));
  }

  /** The ids whose order Shopify shows modified after the reading a waiter knows. */
  private async modifiedOnShopify(
    connector: Extract<ImportConnector, { type: 'shopify' }>,
    waiters: Waiter[],
    ids: string[],
    signal: AbortSignal,
  ): Promise<string[]> {
    const client = this.platforms.shopifyClient(connector);
    const query = ids.map((id) => `id:${id}`).join(' OR ');
    const { orders } = await client.call(ordersModified, { first: ids.length, query }, signal, CHECK_TIMEOUT_MS);
    const knownAt = new Map(waiters.map((w) => [w.known.platformOrderId, w.known.modifiedAt]));
    return orders.nodes
      .filter((o) => {
        const at = modifiedTime(o.updatedAt, this.now());
        const known = knownAt.get(o.legacyResourceId);
        // An unreadable time is read whole: the whole order's checks refuse or take it.
        return known !== undefined && (!at.ok || at.value > known);
      })
      .map((o) => o.legacyResourceId);
  }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) fail();
    signal.addEventListener('abort', fail, { once: true });
  });
}
