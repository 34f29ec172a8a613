/**
 * The fake WooCommerce store's public shapes: what it is started with and what a test, the
 * admin routes or the CLI get back to steer and observe it.
 */
import type { WooFaultsPatch } from './faults';
import type { FakeWooGenerateOptions, FakeWooOrderEdit, FakeWooWebhookInput } from './inputs';
import type { SeedOrder } from './seed';

/**
 * Which saves move date_modified. 'always': HPOS's OrdersTableDataStore::persist_updates stamps
 * it on every save. 'post-fields': the posts-table store (Abstract_WC_Order_Data_Store_CPT::update)
 * rewrites post_modified only when the status, a date, the parent or the customer note changed,
 * so a save touching only addresses or meta leaves it. Read from WooCommerce's source, not
 * checked against a live store.
 */
export type ModifiedOnSave = 'always' | 'post-fields';

/**
 * How the Shipment Tracking extension stores its items. 'save': `$order->save()`, a save like
 * any other (order.updated fires; date_modified per ModifiedOnSave, and under 'post-fields' a
 * meta-only save does not move it). 'save-meta-data': `$order->save_meta_data()`, as copies of
 * the extension's older code do: no save, so neither a new date_modified nor order.updated.
 * Which one the current (closed-source) extension uses is not known.
 */
export type TrackingSave = 'save' | 'save-meta-data';

export interface FakeWooCommerceOptions {
  /**
   * Keep the orders and products in this file across restarts (written at most once a second and at close, 0600;
   * local-http/state-file.ts). Unset: memory only.
   */
  stateFile?: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Default 'ck_fake_dev_key'. */
  consumerKey?: string;
  /** Default 'cs_fake_dev_secret'. */
  consumerSecret?: string;
  /** The Shipment Tracking extension is installed (its routes exist). Default true. */
  shipmentTracking?: boolean;
  /** The store's IANA time zone (Settings → General). Default 'UTC'. */
  timezone?: string;
  /** HPOS quirk: every read of one order bumps its date_modified. Default false. */
  hpos?: boolean;
  /** The host drops the Authorization header, so only query-string auth works. Default false. */
  stripAuthorization?: boolean;
  /** Clock in epoch milliseconds. Default Date.now. */
  now?: () => number;
  /** Shown on the HTML page. Default 'Fake Woo Store'. */
  storeName?: string;
  /** Seed of the PRNG behind every fault rate. Default 1. */
  seed?: number;
  /** Faults from the start (same schema as setFaults). */
  faults?: WooFaultsPatch;
  /**
   * Which saves move date_modified: 'always' (HPOS, the default) or 'post-fields' (the posts
   * table: only a status, date or customer-note change). See ModifiedOnSave above.
   */
  modifiedOnSave?: ModifiedOnSave;
  /** How the Shipment Tracking extension saves its items: 'save' (default) or 'save-meta-data'. */
  trackingSave?: TrackingSave;
  /**
   * Order of list results tied on the sort key: 'id' (default: the id, in the same direction)
   * or 'random' (a fresh order per request: MySQL leaves ties unordered, see list-orders.ts).
   */
  listTies?: 'id' | 'random';
  /** Webhook delivery settings (defaults in WEBHOOK_DEFAULTS). */
  webhooks?: FakeWooWebhookOptions;
}

export interface FakeWooWebhookOptions {
  /** One delivery's deadline. Default 60 000 (WooCommerce's 60 s). */
  timeoutMs?: number;
  /** The ping's deadline. Default 5 000 (WordPress's HTTP default). */
  pingTimeoutMs?: number;
  /** order.created only for orders at most this old at the event; null = always. Default 10. */
  createdMaxAgeSeconds?: number | null;
  /** A failure met with more than this many before it disables the webhook. Default 5. */
  maxFailures?: number;
  /** Deliveries sent at once. Default 1 (Action Scheduler runs one after another). */
  concurrency?: number;
  /** Waiting deliveries beyond this are dropped (and counted). Default 50 000. */
  queueLimit?: number;
  /** Deliveries each webhook's view keeps. Default 50. */
  logSize?: number;
}

/** One delivery attempt, as the webhook's view records it. */
export interface FakeWooWebhookDelivery {
  delivery_id: string;
  order_id: number;
  event: 'created' | 'updated';
  /** GMT `YYYY-MM-DDTHH:MM:SS` of the fake's clock when it was sent. */
  at: string;
  /** The receiver's HTTP status, or null when none came. */
  status: number | null;
  /** 200–302. */
  ok: boolean;
  error?: string;
  duration_ms: number;
}

export interface FakeWooWebhookView {
  id: number;
  name: string;
  /** 'disabled' once deliveries kept failing. */
  status: 'active' | 'paused' | 'disabled';
  topic: 'order.created' | 'order.updated';
  resource: 'order';
  event: 'created' | 'updated';
  delivery_url: string;
  secret: string;
  /** Consecutive failed deliveries (a success clears it). */
  failure_count: number;
  date_created_gmt: string;
  /** The ping sent on creation: ok only on a 200, as WooCommerce judges it. */
  ping: { status: number | null; ok: boolean; error?: string } | null;
  /** The latest deliveries, oldest first. */
  deliveries: FakeWooWebhookDelivery[];
}

/** What generateOrders made (ids are consecutive). */
export interface FakeWooGenerated {
  count: number;
  firstId: number;
  lastId: number;
  /** The generator's catalogue products, for GET /products/{id}. */
  productIds: number[];
}

/** A tracking item as the merchant and the customer see it (the extension's formatted view). */
export interface FakeWooTrackingItemView {
  tracking_id: string;
  /** The provider's display name; "" for a name the extension does not know. */
  tracking_provider: string;
  custom_tracking_provider: string;
  /** The link built from the provider's template, or the custom link as sent. */
  tracking_link: string;
  tracking_number: string;
  /** YYYY-MM-DD (UTC). */
  date_shipped: string;
}

/** The customer emails WooCommerce sends on the fake's transitions and notes. */
export type FakeWooEmailTemplate =
  'customer_completed_order' | 'customer_note' | 'customer_on_hold_order' | 'customer_processing_order' | 'customer_refunded_order';

/** An email WooCommerce would have sent. Dates here are GMT `YYYY-MM-DDTHH:MM:SS`, like date_*_gmt. */
export interface FakeWooEmail {
  template: FakeWooEmailTemplate;
  at: string;
  to: string;
  /** customer_completed_order: the tracking items the email showed (none when the extension is absent). */
  trackingItems?: FakeWooTrackingItemView[];
  /** customer_note: the note's text. */
  note?: string;
}

export interface FakeWooOrderView {
  id: number;
  number: string;
  status: string;
  date_created_gmt: string;
  date_modified_gmt: string;
  shippingMethod: { methodId: string; methodTitle: string };
  statusHistory: Array<{ from: string; to: string; at: string }>;
  emailsSent: FakeWooEmail[];
  /** Oldest first (the API lists them newest first). */
  notes: Array<{ id: number; note: string; customer_note: boolean; added_by: string; date_created_gmt: string }>;
  trackingItems: FakeWooTrackingItemView[];
}

export interface FakeWooStats {
  /** API requests (under /wp-json), whatever became of them; admin routes and the page are not counted. */
  requests: number;
  /** Per route key ('GET orders', 'POST notes', 'PUT order', …; '(unmatched)' for rest_no_route). */
  byRoute: Record<string, number>;
  /** 'GET orders' by what it asks: 'include' (orders by id) or 'modified_after' (changes since), with its status filter. */
  orderLists: Record<string, number>;
  /** Per HTTP status sent. */
  byStatus: Record<string, number>;
  /** Injected faults. */
  rateLimited: number;
  unavailable: number;
  gatewayTimeouts: number;
  serverErrors: number;
  /** Connections destroyed without an answer (down, drop-before-commit, commit-then-drop). */
  dropped: number;
  /** Of those, the ones whose write had been applied. */
  droppedAfterCommit: number;
  hung: number;
  slow: number;
  /** Writes a slow host queued or answered late (lateWriteRate, failNext `queued`). */
  lateWrites: number;
  /** Requests of an order that came before the Retry-After it was given had ended. */
  callsBeforeRetryAfter: number;
  /** Requests that came before a Retry-After of the store had ended, leaving out those already on their way (100 ms). */
  storeCallsBeforeRetryAfter: number;
  /** Writes that changed the store, per route key, counted whether or not the client saw the answer. */
  writesApplied: Record<string, number>;
  /** Webhook deliveries sent (pings not counted), and how they ended. */
  webhookDeliveriesAttempted: number;
  webhookDeliveriesSucceeded: number;
  webhookDeliveriesFailed: number;
  /** Deliveries never sent: webhookDropRate, webhooksDisabled, or the queue full. */
  webhookDeliveriesDropped: number;
  /** Webhooks set "disabled" after failed deliveries. */
  webhooksDisabled: number;
}

export interface FakeWooCommerce {
  /** http://127.0.0.1:PORT; the API is under `${baseUrl}/wp-json/`. */
  baseUrl: string;
  port: number;
  /** The orders were read back from `stateFile`. */
  restored: boolean;
  /** Throws InvalidSeedError naming the field. Fires order.created (see webhooks.ts). */
  createOrder(seed: SeedOrder): FakeWooOrderView;
  /**
   * `count` (≤ 20 000) deterministic orders from `seed`; throws InvalidWooInputError naming the
   * field. See generate.ts.
   */
  generateOrders(options: FakeWooGenerateOptions): FakeWooGenerated;
  /**
   * An edit saved as the merchant's admin would: date_modified moves (fake clock, never
   * backwards) and order.updated fires. Null for an unknown id; throws InvalidWooInputError.
   */
  editOrder(id: number, edit: FakeWooOrderEdit): FakeWooOrderView | null;
  order(id: number): FakeWooOrderView | null;
  orders(): FakeWooOrderView[];
  /** Registers a webhook and resolves after its ping was answered or gave up. */
  createWebhook(input: FakeWooWebhookInput): Promise<FakeWooWebhookView>;
  webhooks(): FakeWooWebhookView[];
  /** False for an unknown id. */
  deleteWebhook(id: number): boolean;
  /** Resolves once no delivery or ping is waiting or in flight. */
  webhooksIdle(): Promise<void>;
  /** Zod-checked partial patch; throws InvalidWooFaultsError naming the field. */
  setFaults(patch: WooFaultsPatch): void;
  setShipmentTracking(installed: boolean): void;
  stats(): FakeWooStats;
  resetStats(): void;
  close(): Promise<void>;
}
