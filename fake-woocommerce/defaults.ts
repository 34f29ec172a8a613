/** Defaults of the fake WooCommerce store, shared by the server, the admin routes and the CLI. */

export const DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  consumerKey: 'ck_fake_dev_key',
  consumerSecret: 'cs_fake_dev_secret',
  timezone: 'UTC',
  storeName: 'Fake Woo Store',
  currency: 'USD',
  /** Seed of the PRNG behind every fault rate. */
  seed: 1,
  /** Request bodies above this get the host's 413 page, as nginx's client_max_body_size does. */
  maxBodyBytes: 1024 * 1024,
  /** What `slow` (failNext) waits before answering when the entry gives no delayMs. */
  slowMs: 30_000,
  /**
   * Display name of the WordPress user the API key belongs to: the author of notes sent with
   * added_by_user and of the status-change notes a REST update writes.
   */
  apiUserName: 'admin',
  /** First ids: orders and products share wp_posts ids in a real store; here they only must not collide. */
  firstOrderId: 1001,
  firstProductId: 501,
  firstNoteId: 2001,
  /** The versions the store reports (order `version`, the webhook User-Agent). */
  wcVersion: '9.4.3',
  wpVersion: '6.7.1',
  /** An order's shipping method when its seed names none. */
  shippingMethod: { methodId: 'flat_rate', methodTitle: 'Flat rate' },
  /** generateOrders: the most orders one call makes. */
  maxGeneratedOrders: 20_000,
} as const;

/** Webhook delivery, as WC_Webhook does it (see webhooks.ts); each is an option of the fake. */
export const WEBHOOK_DEFAULTS = {
  /** deliver(): 'timeout' => MINUTE_IN_SECONDS. */
  timeoutMs: 60_000,
  /** deliver_ping() uses wp_safe_remote_post's default timeout, 5 s. */
  pingTimeoutMs: 5_000,
  /** order.created goes out only for an order at most this old when the event fires. */
  createdMaxAgeSeconds: 10,
  /** The woocommerce_max_webhook_delivery_failures filter's default. */
  maxFailures: 5,
  /** Action Scheduler's queue runner works one batch, one action after another. */
  concurrency: 1,
  /** The fake's own bound on waiting deliveries (Action Scheduler has none). */
  queueLimit: 50_000,
  /** Deliveries each webhook's view keeps (newest last). */
  logSize: 50,
} as const;

/** The order statuses of wc/v3 (slugs without the `wc-` prefix), in WooCommerce's own order. */
export const ORDER_STATUSES = [
  'pending',
  'processing',
  'on-hold',
  'completed',
  'cancelled',
  'refunded',
  'failed',
  'checkout-draft',
] as const;
export type WooStatus = (typeof ORDER_STATUSES)[number];

/** How the admin shows each status (wc_get_order_status_name), used in the status-change notes. */
export const STATUS_LABELS: Readonly<Record<WooStatus, string>> = {
  pending: 'Pending payment',
  processing: 'Processing',
  'on-hold': 'On hold',
  completed: 'Completed',
  cancelled: 'Cancelled',
  refunded: 'Refunded',
  failed: 'Failed',
  'checkout-draft': 'Draft',
};
