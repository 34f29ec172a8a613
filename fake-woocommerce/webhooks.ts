/**
 * WooCommerce webhooks for orders (order.created, order.updated), following WC_Webhook:
 * - Creating one POSTs the unsigned ping `webhook_id=N` (form-encoded) and waits for it, as the
 *   REST create does; only a 200 counts as a good ping, and a bad one is recorded, not fatal.
 * - An order event queues a delivery; Action Scheduler runs it later, after the request, so
 *   deliveries never hold up an API answer. While one is waiting, the same order's next event
 *   for the same webhook is not queued again (wc_webhook_process_delivery's uniqueness check).
 * - The payload is built when the delivery runs (build_payload), so it shows the order as it is
 *   then: the JSON of GET /orders/{id}, encoded by wp_json_encode, signed over those bytes.
 * - One attempt, no retries. 200–302 is a success and clears the failure count; any other
 *   answer or none counts a failure, and a failure met with the count already above
 *   maxFailures (the 7th in a row by default) sets the webhook "disabled" for good.
 * - order.created is only sent for an order at most createdMaxAgeSeconds old when the event
 *   fires. In WooCommerce that 10-second check sits on the admin's save path
 *   (is_valid_processing_action); whether it stops other new orders is not certain, so the
 *   age is an option (null: no check).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mulberry32 } from '../fake-shipping-api/faults';
import { gmtWall } from './clock';
import { DEFAULTS, WEBHOOK_DEFAULTS } from './defaults';
import type { ParsedWebhookInput, WEBHOOK_STATUSES, WEBHOOK_TOPICS } from './inputs';
import { orderJson, type JsonContext } from './order-json';
import type { OrderEvent, StoredOrder, WooStore } from './store';
import type { WooTraffic } from './stats';
import type { FakeWooWebhookDelivery, FakeWooWebhookOptions, FakeWooWebhookView } from './types';
import { Outgoing, phpJsonEncode, webhookSignature } from './webhook-send';

type Topic = (typeof WEBHOOK_TOPICS)[number];
type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

interface StoredWebhook {
  id: number;
  name: string;
  topic: Topic;
  event: OrderEvent;
  deliveryUrl: string;
  secret: string;
  status: WebhookStatus;
  failureCount: number;
  createdAt: number;
  ping: FakeWooWebhookView['ping'];
  deliveries: FakeWooWebhookDelivery[];
}

interface Job {
  webhookId: number;
  orderId: number;
  key: string;
}

export interface WebhookDeps {
  store: WooStore;
  traffic: WooTraffic;
  json(): JsonContext;
  /** home_url('/'): the store's URL with a trailing slash. */
  sourceUrl(): string;
  faults(): { dropRate: number; disabled: boolean };
}

export type WebhookSettings = Omit<{ [K in keyof typeof WEBHOOK_DEFAULTS]: number }, 'createdMaxAgeSeconds'> & {
  createdMaxAgeSeconds: number | null;
};

export const USER_AGENT = `WooCommerce/${DEFAULTS.wcVersion} Hookshot (WordPress/${DEFAULTS.wpVersion})`;

export function webhookSettings(options: FakeWooWebhookOptions = {}): WebhookSettings {
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const settings = { ...WEBHOOK_DEFAULTS, ...given } as WebhookSettings;
  for (const [name, value] of Object.entries(settings)) {
    if (value !== null && !(Number.isInteger(value) && value >= 0))
      throw new Error(`fake WooCommerce: webhooks.${name} must be a whole number ≥ 0`);
  }
  if (settings.concurrency < 1) throw new Error('fake WooCommerce: webhooks.concurrency must be at least 1');
  return settings;
}

export class WooWebhooks {
  private readonly hooks = new Map<number, StoredWebhook>();
  private nextId = 1;
  private jobs: Job[] = [];
  private head = 0;
  private readonly waiting = new Set<string>();
  private running = 0;
  private pings = 0;
  private scheduled = false;
  private closed = false;
  private idleWaiters: Array<() => void> = [];
  private readonly outgoing = new Outgoing();
  private readonly random: () => number;
  /** wp_hash's salt: delivery ids are keyed hashes of the webhook id and the second. */
  private readonly salt = randomBytes(16);

  constructor(
    private readonly deps: WebhookDeps,
    readonly settings: WebhookSettings,
    seed: number,
  ) {
    // A PRNG of its own: deliveries run asynchronously and must not shift the request faults' draws.
    this.random = mulberry32(seed ^ 0x5eed);
    deps.store.onOrderEvent = (order, event) => this.orderEvent(order, event);
  }

  async create(input: ParsedWebhookInput): Promise<FakeWooWebhookView> {
    const [, event] = input.topic.split('.') as ['order', OrderEvent];
    const hook: StoredWebhook = {
      id: this.nextId++,
      name: input.name ?? `Webhook created on ${gmtWall(this.deps.store.nowSec())}`,
      topic: input.topic,
      event,
      deliveryUrl: input.deliveryUrl,
      secret: input.secret,
      status: input.status,
      failureCount: 0,
      createdAt: this.deps.store.nowSec(),
      ping: null,
      deliveries: [],
    };
    this.hooks.set(hook.id, hook);
    await this.ping(hook);
    return this.view(hook);
  }

  list(): FakeWooWebhookView[] {
    return [...this.hooks.values()].map((h) => this.view(h));
  }

  /** Its waiting deliveries are dropped when their turn comes. */
  remove(id: number): FakeWooWebhookView | null {
    const hook = this.hooks.get(id);
    if (!hook) return null;
    this.hooks.delete(id);
    return this.view(hook);
  }

  /** Resolves once nothing is queued, sending or pinging. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    this.jobs = [];
    this.head = 0;
    this.waiting.clear();
    this.outgoing.close();
    this.settle();
  }

  private async ping(hook: StoredWebhook): Promise<void> {
    this.pings += 1;
    const headers = { 'User-Agent': USER_AGENT, 'Content-Type': 'application/x-www-form-urlencoded' };
    const attempt = await this.outgoing.post(hook.deliveryUrl, `webhook_id=${hook.id}`, headers, this.settings.pingTimeoutMs);
    this.pings -= 1;
    const error =
      attempt.status === null
        ? `Error: Delivery URL cannot be reached: ${attempt.error ?? 'no answer'}`
        : attempt.status !== 200
          ? `Error: Delivery URL returned response code: ${attempt.status}`
          : undefined;
    hook.ping = { status: attempt.status, ok: error === undefined, ...(error ? { error } : {}) };
    this.settle();
  }

  private orderEvent(order: StoredOrder, event: OrderEvent): void {
    if (this.closed || this.hooks.size === 0) return;
    const age = this.deps.store.nowSec() - order.createdAt;
    const maxAge = this.settings.createdMaxAgeSeconds;
    if (event === 'created' && maxAge !== null && age > maxAge) return;
    for (const hook of this.hooks.values()) {
      if (hook.status === 'active' && hook.event === event) this.enqueue(hook, order.id);
    }
  }

  private enqueue(hook: StoredWebhook, orderId: number): void {
    const key = `${hook.id}:${orderId}`;
    if (this.waiting.has(key)) return;
    const faults = this.deps.faults();
    const queued = this.jobs.length - this.head;
    if (faults.disabled || (faults.dropRate > 0 && this.random() < faults.dropRate) || queued >= this.settings.queueLimit) {
      this.deps.traffic.bump('webhookDeliveriesDropped');
      return;
    }
    this.waiting.add(key);
    this.jobs.push({ webhookId: hook.id, orderId, key });
    if (!this.scheduled) {
      this.scheduled = true;
      // After the current request is answered, as Action Scheduler runs after the page load.
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    }
  }

  private pump(): void {
    while (!this.closed && this.running < this.settings.concurrency && this.head < this.jobs.length) {
      const job = this.jobs[this.head++]!;
      this.waiting.delete(job.key);
      this.running += 1;
      void this.deliver(job).finally(() => {
        this.running -= 1;
        this.pump();
      });
    }
    if (this.head > 1024 && this.head * 2 > this.jobs.length) {
      this.jobs = this.jobs.slice(this.head);
      this.head = 0;
    }
    this.settle();
  }

  private async deliver(job: Job): Promise<void> {
    const hook = this.hooks.get(job.webhookId);
    const order = this.deps.store.orders.get(job.orderId);
    // wc_deliver_webhook_async does not look at the status again: a delivery queued while the
    // webhook was active goes out even if it was paused or disabled since. A deleted one cannot.
    if (!hook || !order) return;
    const now = this.deps.store.nowSec();
    const body = phpJsonEncode(orderJson(order, this.deps.json()));
    // wp_hash( id . time() ): two deliveries of one webhook within a second share it.
    const deliveryId = createHmac('md5', this.salt).update(`${hook.id}${now}`).digest('hex');
    const headers = {
      'User-Agent': USER_AGENT,
      'Content-Type': 'application/json',
      'X-WC-Webhook-Source': this.deps.sourceUrl(),
      'X-WC-Webhook-Topic': hook.topic,
      'X-WC-Webhook-Resource': 'order',
      'X-WC-Webhook-Event': hook.event,
      'X-WC-Webhook-Signature': webhookSignature(body, hook.secret),
      'X-WC-Webhook-ID': String(hook.id),
      'X-WC-Webhook-Delivery-ID': deliveryId,
    };
    this.deps.traffic.bump('webhookDeliveriesAttempted');
    const attempt = await this.outgoing.post(hook.deliveryUrl, body, headers, this.settings.timeoutMs);
    if (this.closed) return;
    const ok = attempt.status !== null && attempt.status >= 200 && attempt.status < 303;
    hook.deliveries.push({
      delivery_id: deliveryId,
      order_id: order.id,
      event: hook.event,
      at: gmtWall(now),
      status: attempt.status,
      ok,
      ...(attempt.error ? { error: attempt.error } : {}),
      duration_ms: attempt.durationMs,
    });
    if (hook.deliveries.length > this.settings.logSize) hook.deliveries.shift();
    this.recordOutcome(hook, ok);
  }

  /** log_delivery and failed_delivery. */
  private recordOutcome(hook: StoredWebhook, ok: boolean): void {
    const traffic = this.deps.traffic;
    if (ok) {
      traffic.bump('webhookDeliveriesSucceeded');
      hook.failureCount = 0;
      return;
    }
    traffic.bump('webhookDeliveriesFailed');
    if (hook.failureCount > this.settings.maxFailures) {
      if (hook.status !== 'disabled') traffic.bump('webhooksDisabled');
      hook.status = 'disabled';
    } else {
      hook.failureCount += 1;
    }
  }

  private isIdle(): boolean {
    return this.closed || (!this.scheduled && this.running === 0 && this.pings === 0 && this.head >= this.jobs.length);
  }

  private settle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private view(hook: StoredWebhook): FakeWooWebhookView {
    return {
      id: hook.id,
      name: hook.name,
      status: hook.status,
      topic: hook.topic,
      resource: 'order',
      event: hook.event,
      delivery_url: hook.deliveryUrl,
      secret: hook.secret,
      failure_count: hook.failureCount,
      date_created_gmt: gmtWall(hook.createdAt),
      ping: hook.ping === null ? null : { ...hook.ping },
      deliveries: hook.deliveries.map((d) => ({ ...d })),
    };
  }
}
