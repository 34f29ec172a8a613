/**
 * The fake WooCommerce store's public shapes: what it is started with and what a test, the
 * admin routes or the CLI get back to steer and observe it.
 */
import type { WooFaultsPatch } from './faults';
import type { SeedOrder } from './seed';

export interface FakeWooCommerceOptions {
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
  /** Writes that changed the store, per route key, counted whether or not the client saw the answer. */
  writesApplied: Record<string, number>;
}

export interface FakeWooCommerce {
  /** http://127.0.0.1:PORT; the API is under `${baseUrl}/wp-json/`. */
  baseUrl: string;
  port: number;
  /** Throws InvalidSeedError naming the field. */
  createOrder(seed: SeedOrder): FakeWooOrderView;
  order(id: number): FakeWooOrderView | null;
  orders(): FakeWooOrderView[];
  /** Zod-checked partial patch; throws InvalidWooFaultsError naming the field. */
  setFaults(patch: WooFaultsPatch): void;
  setShipmentTracking(installed: boolean): void;
  stats(): FakeWooStats;
  resetStats(): void;
  close(): Promise<void>;
}
