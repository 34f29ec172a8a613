/**
 * The webhook emitter: subscriptions, and a bounded fire-and-forget queue of deliveries that
 * never holds up an API answer. Per Shopify (notes section 5): HMAC-SHA256 of the raw body in
 * X-Shopify-Hmac-Sha256, one X-Shopify-Event-Id per event and one X-Shopify-Webhook-Id per
 * delivery (its retries keep it and the original body), a 5 s timeout, 8 retries with
 * exponential backoff (about 4 h at the default 60 s base), and deletion of a subscription after
 * 8 consecutive failures. close() drops everything still queued and cuts attempts in flight.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { FaultInjector } from './faults';
import { parseOrThrow } from './invalid';
import { gid } from './model';
import type { WebhookStats } from './stats';
import { newAgents, post, type Agents } from './webhook-post';

export const WEBHOOK_TOPICS = [
  'orders/create',
  'orders/updated',
  'orders/paid',
  'orders/cancelled',
  'refunds/create',
  'fulfillment_orders/order_routing_complete',
  'fulfillment_orders/placed_on_hold',
  'fulfillment_orders/hold_released',
] as const;
export type WebhookTopic = (typeof WEBHOOK_TOPICS)[number];

const HttpUrl = z
  .string()
  .max(2048)
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), 'must be an absolute http(s) URL');

export const WebhookSubscribeSchema = z.strictObject({
  topic: z.enum(WEBHOOK_TOPICS),
  address: HttpUrl,
  /** Signs this subscription's deliveries; default the fake's clientSecret (Shopify signs with the app's). */
  secret: z.string().min(1).max(255).optional(),
  /** X-Shopify-API-Version of the deliveries; default 2026-10. Every version gets the same body. */
  apiVersion: z
    .string()
    .regex(/^\d{4}-\d{2}$/, 'must be YYYY-MM')
    .optional(),
});
export type WebhookSubscription = z.input<typeof WebhookSubscribeSchema>;

const Int = (min: number, max: number) => z.number().int().min(min).max(max);

export const WebhookSettings = z.strictObject({
  /** First retry waits this long, each next one twice as long. */
  backoffBaseMs: Int(1, 3_600_000),
  maxRetries: Int(0, 100),
  /**
   * Consecutive failed retries (attempts after an event's first) that delete the subscription.
   * Whether Shopify counts attempts, retries or whole deliveries is unverified: with one event
   * and the defaults, the subscription goes when that event's 8th retry fails.
   */
  deleteAfterFailures: Int(1, 1000),
  timeoutMs: Int(1, 600_000),
  /** Deliveries queued, waiting or in flight; more are dropped (stats.webhooks.droppedQueueFull). */
  queueLimit: Int(1, 1_000_000),
  /** Attempts in flight at once. */
  concurrency: Int(1, 256),
});
export type WebhookSettings = z.infer<typeof WebhookSettings>;

export interface WebhookSubscriptionView {
  id: string;
  legacyResourceId: string;
  topic: WebhookTopic;
  address: string;
  apiVersion: string;
  createdAt: string;
  /** Whether it signs with its own secret instead of the clientSecret. */
  ownSecret: boolean;
  consecutiveFailures: number;
  delivered: number;
  failedAttempts: number;
}

interface Subscription extends WebhookSubscriptionView {
  secret: string;
  url: URL;
}

interface WebhookEvent {
  topic: WebhookTopic;
  eventId: string;
  triggeredAt: string;
  body: Buffer;
}

interface Delivery {
  sub: Subscription;
  event: WebhookEvent;
  webhookId: string;
  hmac: string;
  /** Attempts made so far. */
  attempts: number;
}

export interface EmitterOptions {
  settings: WebhookSettings;
  defaultSecret: string;
  shopDomain: string;
  apiVersion: string;
  faults: FaultInjector;
  now: () => number;
  /** The current counters (resetStats swaps the object). */
  stats: () => WebhookStats;
  stamp: () => string;
}

export class WebhookEmitter {
  private readonly subs = new Map<string, Subscription>();
  private nextSub = 1_100_000_001;
  /** Deliveries ready to go, oldest first; `head` avoids shifting a long array. */
  private ready: Delivery[] = [];
  private head = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private inFlight = 0;
  /** Deliveries not finished yet: ready, waiting for a timer, or in flight. */
  private pending = 0;
  private idleWaiters: Array<() => void> = [];
  private closed = false;
  private readonly abort = new AbortController();
  private readonly agents: Agents;

  constructor(private readonly o: EmitterOptions) {
    this.agents = newAgents(o.settings.concurrency);
  }

  subscribe(raw: unknown): WebhookSubscriptionView {
    const input = parseOrThrow(WebhookSubscribeSchema, 'webhook subscription', raw);
    const n = this.nextSub++;
    const sub: Subscription = {
      id: gid('WebhookSubscription', n),
      legacyResourceId: String(n),
      topic: input.topic,
      address: input.address,
      url: new URL(input.address),
      apiVersion: input.apiVersion ?? this.o.apiVersion,
      createdAt: this.o.stamp(),
      secret: input.secret ?? this.o.defaultSecret,
      ownSecret: input.secret !== undefined,
      consecutiveFailures: 0,
      delivered: 0,
      failedAttempts: 0,
    };
    this.subs.set(sub.id, sub);
    return view(sub);
  }

  /** By global id or legacy number; false when there is none. Its waiting deliveries are dropped. */
  unsubscribe(id: string): boolean {
    return this.subs.delete(/^\d+$/.test(id) ? gid('WebhookSubscription', id) : id);
  }

  list(): WebhookSubscriptionView[] {
    return [...this.subs.values()].map(view);
  }

  /** Whether any subscription exists: without one, changes cost nothing. */
  listening(): boolean {
    return this.subs.size > 0;
  }

  queue(): { pending: number; inFlight: number } {
    return { pending: this.pending, inFlight: this.inFlight };
  }

  /** Resolves once nothing is queued, waiting or in flight (at once when idle or closed). */
  whenIdle(): Promise<void> {
    if (this.pending === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * One event: its body is built now (retries resend these bytes, as Shopify resends the payload
   * from the time of the trigger) and a delivery is queued per matching subscription.
   */
  trigger(topic: WebhookTopic, payload: () => unknown): void {
    const subs = [...this.subs.values()].filter((s) => s.topic === topic);
    if (subs.length === 0 || this.closed) return;
    const stats = this.o.stats();
    if (this.o.faults.webhooksDisabled()) {
      stats.suppressed += subs.length;
      return;
    }
    stats.events++;
    const event: WebhookEvent = {
      topic,
      eventId: randomUUID(),
      triggeredAt: new Date(this.o.now()).toISOString(),
      body: Buffer.from(JSON.stringify(payload())),
    };
    for (const sub of subs) {
      this.enqueue(sub, event);
      if (this.o.faults.duplicateWebhook()) {
        stats.duplicates++;
        this.enqueue(sub, event);
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.ready = [];
    this.head = 0;
    this.abort.abort();
    this.agents.http.destroy();
    this.agents.https.destroy();
    this.pending = 0;
    this.wakeIdle();
  }

  private enqueue(sub: Subscription, event: WebhookEvent): void {
    if (this.pending >= this.o.settings.queueLimit) {
      this.o.stats().droppedQueueFull++;
      return;
    }
    this.pending++;
    const hmac = createHmac('sha256', sub.secret).update(event.body).digest('base64');
    this.later({ sub, event, webhookId: randomUUID(), hmac, attempts: 0 }, this.o.faults.webhookDelay());
  }

  /** Ready now, or after `ms` on a timer that does not keep the process alive. */
  private later(d: Delivery, ms: number): void {
    if (ms <= 0) {
      this.ready.push(d);
      return this.pump();
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.ready.push(d);
      this.pump();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  private pump(): void {
    while (!this.closed && this.inFlight < this.o.settings.concurrency && this.head < this.ready.length) {
      const d = this.ready[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.ready.length) {
        this.ready = this.ready.slice(this.head);
        this.head = 0;
      }
      if (this.subs.get(d.sub.id) !== d.sub) {
        this.o.stats().abandoned++;
        this.finish();
        continue;
      }
      void this.attempt(d);
    }
  }

  private async attempt(d: Delivery): Promise<void> {
    this.inFlight++;
    const stats = this.o.stats();
    stats.attempted++;
    if (d.attempts > 0) stats.retries++;
    d.attempts++;
    const result = await post(d.sub.url, this.headers(d), d.event.body, {
      timeoutMs: this.o.settings.timeoutMs,
      signal: this.abort.signal,
      agents: this.agents,
    });
    this.inFlight--;
    if (this.closed) return;
    if (result.ok) this.succeeded(d);
    else this.failed(d);
    this.pump();
  }

  private headers(d: Delivery): Record<string, string> {
    return {
      'Content-Type': 'application/json',
      'User-Agent': 'Shopify-Captain-Hook',
      'X-Shopify-Topic': d.event.topic,
      'X-Shopify-Hmac-Sha256': d.hmac,
      'X-Shopify-Shop-Domain': this.o.shopDomain,
      'X-Shopify-API-Version': d.sub.apiVersion,
      'X-Shopify-Webhook-Id': d.webhookId,
      'X-Shopify-Event-Id': d.event.eventId,
      'X-Shopify-Triggered-At': d.event.triggeredAt,
    };
  }

  private succeeded(d: Delivery): void {
    this.o.stats().succeeded++;
    d.sub.delivered++;
    d.sub.consecutiveFailures = 0;
    this.finish();
  }

  private failed(d: Delivery): void {
    const { settings } = this.o;
    const stats = this.o.stats();
    stats.failed++;
    d.sub.failedAttempts++;
    if (d.attempts > 1) d.sub.consecutiveFailures++;
    if (d.sub.consecutiveFailures >= settings.deleteAfterFailures && this.subs.get(d.sub.id) === d.sub) {
      this.subs.delete(d.sub.id);
      stats.subscriptionsDeleted++;
    }
    const retriesDone = d.attempts - 1;
    if (retriesDone >= settings.maxRetries || this.subs.get(d.sub.id) !== d.sub) {
      stats.gaveUp++;
      return this.finish();
    }
    this.later(d, settings.backoffBaseMs * 2 ** retriesDone);
  }

  private finish(): void {
    this.pending--;
    if (this.pending === 0) this.wakeIdle();
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}

function view(sub: Subscription): WebhookSubscriptionView {
  const { id, legacyResourceId, topic, address, apiVersion, createdAt, ownSecret, consecutiveFailures, delivered, failedAttempts } = sub;
  return { id, legacyResourceId, topic, address, apiVersion, createdAt, ownSecret, consecutiveFailures, delivered, failedAttempts };
}
