/**
 * `import --from <shop>`: the orders of a Shopify or WooCommerce shop that need a label, read
 * page by page from the platform (the same readers and mapping as the scheduled pull) and fed to
 * the import pipeline as records. It reads from `--since` (a time, or a duration back from now)
 * or the shop's `import.firstPull`, and does not move the schedule's cursor.
 */
import { CliError, EXIT, messageOf, usageError } from '../cli-support';
import { ConfigError, parseDuration } from '../../config/settings';
import { loadShopConnectors } from '../../shop-sync/connectors';
import { PlatformConnections } from '../../shop-sync/platform/connections';
import { describeStop, StopDelivery } from '../../shop-sync/platform/result';
import { firstChangesPosition, type PullPosition } from '../../shop-import/cursor';
import { pageRecords } from '../../shop-import/records';
import { importShops } from '../../shop-import/schedule';
import { OrderSource, type ImportConnector } from '../../shop-import/source';
import type { SourceRecord } from '../../order-import/source';

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

export function readShop(connector: ImportConnector, sinceMs: number, signal: AbortSignal): ShopInput {
  const since = new Date(Math.floor(sinceMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  let skipped = 0;
  async function* records(): AsyncGenerator<SourceRecord> {
    const source = new OrderSource(new PlatformConnections());
    // From `since` itself: the cursor-less position less no overlap.
    let position: PullPosition | null = firstChangesPosition(
      connector.type,
      { since, retry: [] },
      { overlap: 0, firstPull: 0 },
      Date.now(),
    );
    // An order changed during the read comes again at the end; the pipeline would call it a duplicate.
    const seen = new Set<string>();
    let line = 1;
    while (position !== null) {
      let page;
      try {
        page = await source.read(connector, { since, retry: [] }, position, signal);
      } catch (err) {
        throw readFailure(connector, err);
      }
      const fresh = page.orders.filter((o) => !seen.has(o.platformOrderId));
      for (const o of fresh) seen.add(o.platformOrderId);
      const mapped = pageRecords(connector.shop, fresh, connector.import.mapping, line);
      skipped += mapped.skipped.length;
      line += mapped.records.length;
      yield* mapped.records;
      position = page.next;
    }
  }
  return { connector, records: records(), skipped: () => skipped, since };
}

function readFailure(connector: ImportConnector, err: unknown): CliError {
  const where = connector.type === 'shopify' ? connector.storeDomain : connector.siteUrl;
  if (!(err instanceof StopDelivery)) return new CliError(`reading ${where}: ${messageOf(err)}`, EXIT.unavailable);
  const { result } = err;
  const said = `reading ${where}: ${describeStop(result)}`;
  if (result.kind === 'retry_after' || result.kind === 'retry') return new CliError(`${said}; try again later`, EXIT.unavailable);
  return new CliError(`${said}. Check the shop's credentials and scopes.`, EXIT.usage);
}
