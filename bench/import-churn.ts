/**
 * What happens to the stores while the first pull pages through them, the same for the worker and
 * the plain script: 10 % of the orders created or changed (new orders, merchant edits and, on
 * WooCommerce, HPOS reads that bump the modified date), the reader killed once, and each store
 * down for a few seconds. Each event is tied to how far the reader is through its first pass over
 * the orders (pages read ÷ pages expected), so a fast reader and a paced one meet the same churn
 * at the same points.
 */
import { mulberry32 } from '../fake-shipping-api/faults';
import type { ImportStores } from './import-stores';
import { sleep } from './stack';

export type Platform = 'shopify' | 'woo';

export interface ChurnOptions {
  /** Generated orders per store. */
  orders: number;
  /** How far the reader is through its first pass over the platform's orders, 0 to 1. */
  progress: (platform: Platform) => number;
  outageSeconds: number;
  seed: number;
  /** Kills the reader (SIGKILL of the worker; an aborted run of the script) and starts it again. */
  kill: () => Promise<void>;
  log: (m: string) => void;
}

export interface PlatformChurn {
  created: number;
  edited: number;
  /** WooCommerce: GET /orders/{id} by another app, which bumps date_modified under HPOS. */
  hposReads: number;
}

export interface ChurnCounts extends Record<Platform, PlatformChurn> {
  kills: number;
  outages: number;
}

/** Churn is spread over this share of the first pull, so its last changes are still read in it. */
const CHURN_UNTIL = 0.9;
const KILL_AT = 0.4;
const OUTAGE_AT = 0.7;
/** Past this, the remaining churn is applied at once (a reader stuck in a failure must not hang the bench). */
const CHURN_DEADLINE_MS = 12 * 60_000;

/**
 * The churn of one run. `step()` applies what the readers' progress has made due; `run()` steps
 * every 100 ms until everything is done and both stores are back. A reader in this process may
 * also step after each page it reads, so a fast reader meets its changes between pages too.
 */
export class Churn {
  readonly counts: ChurnCounts = { shopify: none(), woo: none(), kills: 0, outages: 0 };
  private readonly total: number;
  /** One sequence per platform, so both readers meet the same changes whatever order the platforms step in. */
  private readonly random: Record<Platform, () => number>;
  private readonly targets: { shopify: string[]; woo: number[] };
  private readonly done: Record<Platform, number> = { shopify: 0, woo: 0 };
  private readonly outages: Array<Promise<void>> = [];
  private readonly outageStarted = new Set<Platform>();
  private readonly back = new Set<Platform>();
  private readonly endedAt: Record<Platform, number> = { shopify: Infinity, woo: Infinity };
  private readonly began = Date.now();
  private stepping: Promise<void> = Promise.resolve();
  private lateLogged = false;

  constructor(
    private readonly stores: ImportStores,
    private readonly o: ChurnOptions,
  ) {
    this.total = Math.round(o.orders * 0.1);
    this.random = { shopify: mulberry32(o.seed), woo: mulberry32(o.seed + 1) };
    this.targets = { shopify: stores.shopify.orders().map((v) => v.legacyResourceId), woo: stores.woo.orders().map((v) => v.id) };
  }

  /** One step at a time, whoever asks. */
  step(): Promise<void> {
    this.stepping = this.stepping.then(() => this.apply());
    return this.stepping;
  }

  async run(): Promise<ChurnCounts> {
    while (!this.finished()) {
      await this.step();
      await sleep(100);
    }
    await Promise.all(this.outages);
    return this.counts;
  }

  /** When the platform's churn was over: its changes made, the kill done, its store back (Infinity until then). */
  endOf(platform: Platform): number {
    return this.endedAt[platform];
  }

  private finished(): boolean {
    return this.endedAt.shopify < Infinity && this.endedAt.woo < Infinity;
  }

  private async apply(): Promise<void> {
    const late = Date.now() - this.began > CHURN_DEADLINE_MS;
    if (late && !this.lateLogged) this.o.log('import churn: past its deadline, the rest of the churn happens at once');
    this.lateLogged ||= late;
    const progress = { shopify: late ? 1 : this.o.progress('shopify'), woo: late ? 1 : this.o.progress('woo') };
    if (this.counts.kills === 0 && Math.max(progress.shopify, progress.woo) >= KILL_AT) {
      this.counts.kills++;
      this.o.log(
        `import churn: killing the reader at ${percent(progress.shopify)} (Shopify) / ${percent(progress.woo)} (WooCommerce) of the first pull`,
      );
      await this.o.kill();
    }
    for (const platform of ['shopify', 'woo'] as const) {
      const due = Math.min(this.total, Math.round((this.total * progress[platform]) / CHURN_UNTIL));
      for (; this.done[platform] < due; this.done[platform]++) await this.change(platform, this.done[platform]);
      if (!this.outageStarted.has(platform) && progress[platform] >= OUTAGE_AT) {
        this.outageStarted.add(platform);
        this.counts.outages++;
        this.outages.push(outage(this.stores, platform, this.o.outageSeconds, this.o.log).then(() => void this.back.add(platform)));
      }
      const over = this.done[platform] >= this.total && this.counts.kills > 0 && this.back.has(platform);
      if (over && this.endedAt[platform] === Infinity) this.endedAt[platform] = Date.now();
    }
  }

  /** Change number `i` of a platform: every other one a new order, the rest edits (and on WooCommerce HPOS reads). */
  private async change(platform: Platform, i: number): Promise<void> {
    const { shopify, woo } = this.stores;
    const counts = this.counts[platform];
    if (platform === 'shopify') {
      const id = this.targets.shopify[Math.floor(this.random.shopify() * this.targets.shopify.length)]!;
      if (i % 2 === 0) {
        shopify.createOrder({ lineItems: [{ sku: 'NEW-1', quantity: 1 + (i % 3), grams: 450, price: '19.90' }] });
        counts.created++;
      } else {
        shopify.editOrder(id, i % 4 === 1 ? { note: `edit ${i}` } : { shippingAddress: { address2: `Door ${i}` } });
        counts.edited++;
      }
      return;
    }
    const id = this.targets.woo[Math.floor(this.random.woo() * this.targets.woo.length)]!;
    if (i % 2 === 0) {
      woo.createOrder({ status: 'processing', lineItems: [{ sku: 'GEN-MUG', quantity: 1 + (i % 3) }] });
      counts.created++;
    } else if (i % 4 === 1) {
      woo.editOrder(id, { customerNote: `edit ${i}` });
      counts.edited++;
    } else if (await viewWooOrder(woo.baseUrl, id)) counts.hposReads++;
  }
}

const none = (): PlatformChurn => ({ created: 0, edited: 0, hposReads: 0 });

/** List requests the store answered ÷ the pages its orders make: a reader that goes on where it was (the worker's pull). */
export function listPagesRead(stores: ImportStores, platform: Platform, orders: number, pageSize: number): number {
  const read = platform === 'shopify' ? (stores.shopify.stats().byOperation.orders ?? 0) : (stores.woo.stats().byRoute['GET orders'] ?? 0);
  return read / Math.ceil(orders / pageSize);
}

const percent = (x: number) => `${Math.round(Math.min(1, x) * 100)} %`;

/** Another app opening the order: under HPOS that read alone moves date_modified. False when the store is down. */
async function viewWooOrder(baseUrl: string, id: number): Promise<boolean> {
  const auth = `Basic ${Buffer.from('ck_fake_dev_key:cs_fake_dev_secret').toString('base64')}`;
  try {
    const answer = await fetch(`${baseUrl}/wp-json/wc/v3/orders/${id}`, { headers: { authorization: auth } });
    await answer.arrayBuffer();
    return answer.ok;
  } catch {
    return false;
  }
}

async function outage(stores: ImportStores, platform: Platform, seconds: number, log: (m: string) => void): Promise<void> {
  const store = platform === 'shopify' ? stores.shopify : stores.woo;
  log(`import churn: ${platform === 'shopify' ? 'Shopify' : 'WooCommerce'} down for ${seconds} s`);
  store.setFaults({ down: true });
  await sleep(seconds * 1000);
  store.setFaults({ down: false });
}
