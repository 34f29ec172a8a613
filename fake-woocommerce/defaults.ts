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
