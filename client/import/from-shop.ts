/**
 * `import --from <shop>`: the orders of a Shopify or WooCommerce shop that need a label, read
 * page by page from the platform (the same readers and mapping as the scheduled pull) and fed to
 * the import pipeline as records. It reads from `--since` (a time, or a duration back from now)
 * or the shop's `import.firstPull`, and does not move the schedule's cursor. A read that fails
 * in passing is read again with the schedule's retry rules (workflow-definitions/shop-pull-retry.ts) until
 * `--deadline`; only a refusal retrying cannot fix, or the deadline, ends it.
 */
import { CliError, EXIT, messageOf, usageError } from '../cli-support';
import { ConfigError, parseDuration } from '../../config/settings';
import { loadShopConnectors } from '../../platforms/connectors';
import { PlatformConnections } from '../../platforms/connections';
import { describeStop, StopDelivery } from '../../platforms/connection/result';
import { firstChangesPosition, type PullPosition } from '../../workflow-definitions/shop-pull-cursor';
import { pullRetryDelayMs } from '../../workflow-definitions/shop-pull-retry';
import { pageRecords } from '../../shop-import/records';
import { importShops } from '../../shop-import/schedule';
import { OrderSource, type ImportConnector, type PageRead } from '../../platforms/order-source';
import type { SourceRecord } from '../../order-import/source';
import { readAgainUntil, type ReadAgainOptions } from '../../order-import/read-again';

export interface ShopInput {
  connector: ImportConnector;
  records: AsyncGenerator<SourceRecord>;
  /** Orders the platform listed that need no label from us (fulfilled elsewhere, picked up, …). */
  skipped: () => number;
  /** Where the read started (UTC). */
  since: string;
}

/** The shop's connector with its credentials; errors name the setting or the shop. */
export function shopConnector(env: Record<string, string | undefined>, shop: string): ImportConnector {
  let connectors;
  try {
    connectors = loadShopConnectors(env, { readSecretFiles: true });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`${err.message}\nnothing was started.`, EXIT.usage);
    throw err;
  }
  const found = importShops(connectors).find((c) => c.shop === shop);
  if (found) return found;
  const known = importShops(connectors).map((c) => c.shop);
  const type = connectors.connectorFor(shop)?.type;
  throw usageError(
    type === undefined
      ? `--from ${shop}: no such shop in SHOP_CONNECTORS${known.length > 0 ? ` (shops with import settings: ${known.join(', ')})` : ''}`
      : type === 'webhook'
        ? `--from ${shop}: the shop has a webhook connector; only shopify and woocommerce shops can be read`
        : `--from ${shop}: the shop has no "import" settings in SHOP_CONNECTORS (see docs/shop-import.md)`,
  );
}

/** `--since`: an ISO time, or a duration back from now (`2d`, `90m`). */
export function sinceOf(value: string | undefined, connector: ImportConnector, now: number): number {
  if (value === undefined) return now - connector.import.firstPull;
  if (/^\d{4}-\d\d-\d\d/.test(value)) {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms)) return ms;
  } else {
    const ms = parseDuration(value);
    if (ms !== undefined) return now - ms;
  }
  throw usageError(`--since must be an ISO 8601 time (2026-11-01T00:00:00Z) or a duration such as 2d or 90m (got "${value}")`);
}

/** A shop read's `--deadline` and the line it prints while it waits. */
export type ReadOptions = Omit<ReadAgainOptions, 'signal'>;

export function readShop(connector: ImportConnector, sinceMs: number, signal: AbortSignal, options: ReadOptions): ShopInput {
  const since = new Date(Math.floor(sinceMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const listing = new Listing();
  async function* records(): AsyncGenerator<SourceRecord> {
    const source = new OrderSource(new PlatformConnections());
    // From `since` itself: the cursor-less position less no overlap.
    let position: PullPosition | null = firstChangesPosition(
      connector.type,
      { since, retry: [] },
      { overlap: 0, firstPull: 0 },
      Date.now(),
    );
    let line = 1;
    while (position !== null) {
      const at: PullPosition = position;
      const page = await readAgain(connector, () => source.read(connector, { since, retry: [] }, at, signal), options, signal);
      const mapped = pageRecords(connector.shop, listing.unseen(page.orders), connector.import.mapping, line);
      listing.took(mapped);
      line += mapped.records.length;
      yield* mapped.records;
      position = page.next;
    }
  }
  return { connector, records: records(), skipped: () => listing.skipped(), since };
}

/**
 * What one read has given the pipeline. An order changed during the read is listed again at the
 * end (Shopify's cursors, WooCommerce's offsets): one already given is left out (the pipeline
 * would call it a duplicate; its shipment exists), one skipped before is taken again in its newer
 * version (an order released from hold mid-read then needs a label).
 */
export class Listing {
  private readonly given = new Set<string>();
  /** Orders whose last listing needed no label from us. */
  private readonly skippedIds = new Set<string>();

  unseen<T extends { platformOrderId: string }>(orders: T[]): T[] {
    return orders.filter((o) => !this.given.has(o.platformOrderId));
  }

  took(mapped: { records: Array<{ platformOrderId: string }>; skipped: Array<{ platformOrderId: string }> }): void {
    for (const o of mapped.skipped) this.skippedIds.add(o.platformOrderId);
    for (const r of mapped.records) {
      this.given.add(r.platformOrderId);
      this.skippedIds.delete(r.platformOrderId);
    }
  }

  skipped(): number {
    return this.skippedIds.size;
  }
}

/** One page, read again after each passing failure as the schedule's pull would be, until the deadline. */
function readAgain(
  connector: ImportConnector,
  read: () => Promise<PageRead>,
  options: ReadOptions,
  signal: AbortSignal,
): Promise<PageRead> {
  return readAgainUntil(
    read,
    {
      next: (err, failures) => {
        if (!(err instanceof StopDelivery)) return null;
        const wait = pullRetryDelayMs(err.result, failures);
        if (wait === null) return null;
        return {
          waitMs: wait,
          line: (deadline) =>
            `reading ${whereOf(connector)}: ${describeStop(err.result)}; reading again in ${Math.ceil(wait / 1000)} s (failure ${failures} in a row, deadline ${deadline})`,
        };
      },
      stop: (err, deadline) => readFailure(connector, err, deadline === null ? '' : ` and the --deadline (${deadline}) comes first`),
    },
    { ...options, signal },
  );
}

function whereOf(connector: ImportConnector): string {
  return connector.type === 'shopify' ? connector.storeDomain : connector.siteUrl;
}

function readFailure(connector: ImportConnector, err: unknown, giveUp = ''): CliError {
  const where = whereOf(connector);
  if (!(err instanceof StopDelivery)) return new CliError(`reading ${where}: ${messageOf(err)}`, EXIT.unavailable);
  const { result } = err;
  const said = `reading ${where}: ${describeStop(result)}`;
  if (result.kind === 'retry_after' || result.kind === 'retry') return new CliError(`${said}${giveUp}; try again later`, EXIT.unavailable);
  return new CliError(`${said}. Check the shop's credentials and scopes.`, EXIT.usage);
}
