/** The trigger's counters: per known shop, with topics bounded, summed into totals on read. */
import type { ShopTriggerCounts, ShopTriggerStats } from './types';

/** Topic headers are not covered by the signature (it signs the body only), so bound them. */
const MAX_TOPICS_PER_SHOP = 50;
const MAX_TOPIC_LENGTH = 100;
const OTHER_TOPIC = '(other)';

const zeroCounts = (): ShopTriggerCounts => ({
  received: 0,
  verified: 0,
  rejected: 0,
  duplicates: 0,
  pings: 0,
  tooLarge: 0,
  timedOut: 0,
  aborted: 0,
  triggersCalled: 0,
  triggerFailures: 0,
  namedOrders: 0,
});

export class TriggerStats {
  // Maps, not objects: a shop named "__proto__" is just a key.
  private readonly shops = new Map<string, { counts: ShopTriggerCounts; topics: Map<string, number> }>();
  notFound = 0;
  methodNotAllowed = 0;
  errors = 0;

  /** The counters of a known shop (created on first use). */
  of(shop: string): ShopTriggerCounts {
    return this.entry(shop).counts;
  }

  countTopic(shop: string, topic: string | undefined): void {
    const { topics } = this.entry(shop);
    let key = topic === undefined || topic === '' ? '(none)' : topic.slice(0, MAX_TOPIC_LENGTH);
    if (!topics.has(key) && topics.size >= MAX_TOPICS_PER_SHOP) key = OTHER_TOPIC;
    topics.set(key, (topics.get(key) ?? 0) + 1);
  }

  snapshot(): ShopTriggerStats {
    const totals = { ...zeroCounts(), notFound: this.notFound, methodNotAllowed: this.methodNotAllowed, errors: this.errors };
    const shops: ShopTriggerStats['shops'] = {};
    for (const [shop, { counts, topics }] of this.shops) {
      for (const key of Object.keys(counts) as (keyof ShopTriggerCounts)[]) totals[key] += counts[key];
      // defineProperty, not assignment: "__proto__" must become a key, not a prototype.
      Object.defineProperty(shops, shop, {
        value: { ...counts, topics: Object.fromEntries(topics) },
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return { totals, shops };
  }

  private entry(shop: string) {
    let entry = this.shops.get(shop);
    if (!entry) {
      entry = { counts: zeroCounts(), topics: new Map() };
      this.shops.set(shop, entry);
    }
    return entry;
  }
}
