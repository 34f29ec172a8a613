/**
 * The last N ids seen, least recently seen dropped first: Shopify delivers at least once, and
 * a repeat of an X-Shopify-Event-Id needs no second pull. A Map keeps insertion order, so
 * re-inserting an id on each sighting makes its first key the least recent.
 */
export class RecentIds {
  private readonly ids = new Map<string, true>();

  constructor(private readonly capacity: number) {}

  /** True when `id` was seen before; records it either way. */
  seen(id: string): boolean {
    const known = this.ids.delete(id);
    this.ids.set(id, true);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.keys().next();
      if (oldest.done !== true) this.ids.delete(oldest.value);
    }
    return known;
  }

  get size(): number {
    return this.ids.size;
  }
}
