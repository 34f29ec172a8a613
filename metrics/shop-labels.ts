/**
 * The `shop` metric label from a closed set: the shops the worker's connectors name (its
 * configuration, not order data), anything else `other`, so a shop's alert can name it while
 * an order for an unknown shop cannot add a series.
 */
export const MAX_SHOP_LABELS = 1000;

export class ShopLabels {
  private known: ReadonlySet<string> = new Set();

  label(shop: unknown): string {
    return typeof shop === 'string' && this.known.has(shop) ? shop : 'other';
  }

  replace(shops: readonly string[]): void {
    this.known = new Set(shops.slice(0, MAX_SHOP_LABELS));
  }

  values(): string[] {
    return [...this.known];
  }
}

export const shopLabels = new ShopLabels();
