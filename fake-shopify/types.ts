/** The programmatic face of the fake Shopify store: options, the running fake, an order's view. */
import type { BucketSettings, ThrottleStatus } from './bucket';
import type { ShopifyFaults, ShopifyFaultsPatch } from './faults';
import type { GenerateOptions } from './generate';
import type { MailingAddress } from './model';
import type { HoldRequest, RefundRequest } from './holds-and-refunds';
import type { OrderEdit } from './order-edits';
import type { WebhookSettings, WebhookSubscription, WebhookSubscriptionView } from './webhooks';
import type { SeedOrder } from './seed';
import type { FakeShopifyStats } from './stats';

export interface FakeShopifyOptions {
  /**
   * Keep the orders in this file across restarts (written at most once a second and at close, 0600;
   * local-http/state-file.ts). Unset: memory only.
   */
  stateFile?: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** The static X-Shopify-Access-Token accepted; default 'shpat_fake_dev_token'. */
  accessToken?: string;
  /** The client-credentials app; default 'fake-client-id' / 'fake-client-secret'. */
  clientId?: string;
  clientSecret?: string;
  /** Lifetime of client-credentials tokens; default 86399. */
  tokenLifetimeSeconds?: number;
  /** Default the Standard plan: 2000 points, 100 a second. */
  bucket?: BucketSettings;
  /** How THROTTLED is answered; default 'graphql-200' (Shopify's way), 'http-429' as forums claim. */
  throttleAs?: 'graphql-200' | 'http-429';
  /** Orders older than this many days are invisible (no read_all_orders scope); default 60, null = all. */
  orderVisibilityDays?: number | null;
  /** Clock for timestamps, the bucket and token expiry; default Date.now. */
  now?: () => number;
  /** Shown on the page and in Query.shop; default 'Fake Shopify store'. */
  shopName?: string;
  /** Seed of the PRNG behind the fault rates; default 1. */
  seed?: number;
  /** Webhook delivery settings (backoff base, retries, deletion, timeout, queue, concurrency); see DEFAULTS.webhooks. */
  webhooks?: Partial<WebhookSettings>;
}

export interface FakeOrderView {
  id: string;
  legacyResourceId: string;
  name: string;
  email: string | null;
  tags: string[];
  note: string | null;
  updatedAt: string;
  createdAt: string;
  displayFulfillmentStatus: string;
  /** PAID, PENDING or AUTHORIZED. */
  financialStatus: string;
  currency: string;
  closed: boolean;
  closedAt: string | null;
  cancelledAt: string | null;
  /** Grams, over every line. */
  totalWeight: number;
  shippingLine: { title: string; code: string | null; price: string } | null;
  shippingAddress: MailingAddress;
  /** Whether the app can see it (inside the visibility window). */
  visible: boolean;
  fulfillmentOrders: Array<{
    id: string;
    status: string;
    locationId: string;
    deliveryMethod: string;
    updatedAt: string;
    lineItems: Array<{ id: string; sku: string; totalQuantity: number; remainingQuantity: number }>;
  }>;
  fulfillments: Array<{
    id: string;
    name: string;
    /** The location its fulfillment orders were at (`gid://shopify/Location/n`). */
    locationId: string;
    status: string;
    createdAt: string;
    updatedAt: string;
    displayStatus: string | null;
    deliveredAt: string | null;
    notifyCustomer: boolean;
    trackingInfo: Array<{ company: string | null; number: string | null; url: string | null }>;
    events: Array<{
      id: string;
      status: string;
      happenedAt: string;
      message: string | null;
      city: string | null;
      province: string | null;
      country: string | null;
      zip: string | null;
      address1: string | null;
    }>;
  }>;
}

export interface FakeShopify {
  /** http://127.0.0.1:PORT; GraphQL at `${baseUrl}/admin/api/${version}/graphql.json`. */
  baseUrl: string;
  port: number;
  /** The orders were read back from `stateFile`. */
  restored: boolean;
  /** Adds an order (zod-validated; throws InvalidInputError naming the field). */
  createOrder(seed: SeedOrder): FakeOrderView;
  /**
   * Adds `count` (≤ 20,000) generated orders, deterministic from `seed`, spread over
   * createdFrom..createdTo (default the last 30 days); throws InvalidInputError on bad options.
   */
  generateOrders(options: GenerateOptions): FakeOrderView[];
  /** By global id or legacy numeric id, visible or not. */
  order(id: string): FakeOrderView | null;
  orders(): FakeOrderView[];
  /** A merchant's edit: a real change bumps updatedAt and fires orders/updated. Throws InvalidInputError (unknown order, bad edit). */
  editOrder(id: string, edit: OrderEdit): FakeOrderView;
  /** Cancels (refused once anything is fulfilled); fires orders/cancelled and orders/updated. */
  cancelOrder(id: string): FakeOrderView;
  /** Closes (archives): status:open no longer matches it. */
  closeOrder(id: string): FakeOrderView;
  /** Puts the order's open fulfillment orders (or one) on hold; fires fulfillment_orders/placed_on_hold and orders/updated. */
  holdOrder(id: string, request?: HoldRequest): FakeOrderView;
  /**
   * The merchant's fulfillmentOrderMove (fo-move.ts): a fulfillment order (by global id), or the
   * given quantities of its lines, to another location (`gid://shopify/Location/n`); throws
   * InvalidInputError with the mutation's userErrors (a closed one cannot move). Fires orders/updated.
   */
  moveFulfillmentOrder(fulfillmentOrderId: string, newLocationId: string, lines?: Array<{ id: string; quantity: number }>): FakeOrderView;
  /** Releases the held fulfillment orders (or one); fires fulfillment_orders/hold_released and orders/updated. */
  releaseHold(id: string, request?: HoldRequest): FakeOrderView;
  /** Refunds items not shipped yet (default all); fires refunds/create and orders/updated. */
  refundOrder(id: string, request?: RefundRequest): FakeOrderView;
  /** Validated; throws InvalidInputError. Signs with `secret` or the fake's clientSecret. */
  subscribeWebhook(subscription: WebhookSubscription): WebhookSubscriptionView;
  /** By global or legacy id; false when there was none. */
  unsubscribeWebhook(id: string): boolean;
  webhookSubscriptions(): WebhookSubscriptionView[];
  /** Resolves when no webhook delivery is queued, waiting for a retry or in flight. */
  webhooksIdle(): Promise<void>;
  /** zod-validated partial patch; throws InvalidInputError naming the field. Returns the faults now. */
  setFaults(patch: ShopifyFaultsPatch): ShopifyFaults;
  setBucket(bucket: BucketSettings): void;
  throttleStatus(): ThrottleStatus;
  stats(): FakeShopifyStats;
  resetStats(): void;
  /** Stops listening and drops every queued webhook delivery, cutting those in flight. */
  close(): Promise<void>;
}
