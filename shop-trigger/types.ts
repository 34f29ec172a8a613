/** The shop trigger's public shapes and defaults. */

export type TriggerPlatform = 'shopify' | 'woocommerce';

export interface TriggerShop {
  /** Our name for the shop: what `trigger` receives and what stats and logs are keyed by. */
  shop: string;
  platform: TriggerPlatform;
  /**
   * Signing secrets, current first; a delivery signed with any of them is accepted. Keep the
   * previous one for a while after rotating: Shopify may take up to 1 h to sign with a new one.
   * Empty strings are ignored (anyone can sign with an empty key).
   */
  secrets: readonly string[];
}

/** Pino's Logger fits; anything with these three methods does. */
export interface TriggerLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

export interface TriggerContext {
  /** Aborted when the call passes `triggerTimeoutMs` or `close()` gives up waiting for it. */
  signal: AbortSignal;
  /**
   * The platform ids of the orders the verified deliveries since the last call named (order-id.ts),
   * at most `maxOrderIds`: hints for a pull that reads those orders from the platform.
   */
  orderIds: readonly string[];
  /** A delivery named no order, or more orders were named than `maxOrderIds`: a pull from the cursor is due. */
  fromCursor: boolean;
}

export interface ShopTriggerOptions {
  host: string;
  /** 0 picks a free port (see the returned `port`). */
  port: number;
  /**
   * The shop named by a URL's last segment (URL-decoded), or null when there is none. A shop
   * whose platform differs from the URL's is treated as unknown (404).
   */
  shops: (shop: string) => TriggerShop | null;
  /**
   * Runs the shop's pull now (e.g. triggers its Temporal Schedule). Called with `TriggerShop.shop`,
   * at most once per shop per `coalesceMs`, never twice at once for one shop. A rejection is
   * logged and counted, never retried here: the next webhook or the schedule runs the pull.
   */
  trigger: (shop: string, context: TriggerContext) => Promise<void>;
  logger: TriggerLogger;
  /** Default 2 MiB. A larger body is refused with 413 (at once when Content-Length says so). */
  maxBodyBytes?: number;
  /** Default 1000. The shortest time between two trigger calls for one shop. */
  coalesceMs?: number;
  /** Default 10 s. A body not complete by then is refused with 408. */
  readTimeoutMs?: number;
  /** Default 30 s. A trigger call still pending then counts as failed and is aborted. */
  triggerTimeoutMs?: number;
  /** Default 10 s. How long `close()` waits for trigger calls under way or still due. */
  closeTimeoutMs?: number;
  /** Default 10,000. Shopify event ids remembered per shop for de-duplication. */
  dedupeIds?: number;
  /** Default 100. Order ids gathered per shop for one call; beyond them the call asks for a pull from the cursor. */
  maxOrderIds?: number;
}

export const SHOP_TRIGGER_DEFAULTS = {
  maxBodyBytes: 2 * 1024 * 1024,
  coalesceMs: 1000,
  readTimeoutMs: 10_000,
  triggerTimeoutMs: 30_000,
  closeTimeoutMs: 10_000,
  dedupeIds: 10_000,
  maxOrderIds: 100,
} as const;

/** Counters of one shop; `totals` sums them over all shops. */
export interface ShopTriggerCounts {
  /** Requests to a known shop's hook URL with the right method. */
  received: number;
  /** Deliveries whose signature matched one of the shop's secrets (duplicates included). */
  verified: number;
  /** Missing or mismatching signature (401). */
  rejected: number;
  /** Shopify deliveries whose X-Shopify-Event-Id was already seen (200, no trigger). */
  duplicates: number;
  /** WooCommerce's unsigned `webhook_id=N` ping (200, no trigger). */
  pings: number;
  /** Bodies over `maxBodyBytes` (413). */
  tooLarge: number;
  /** Bodies not complete within `readTimeoutMs` (408). */
  timedOut: number;
  /** Senders that hung up before the body was complete (no answer possible). */
  aborted: number;
  /** Calls made to `trigger`. */
  triggersCalled: number;
  /** Calls that rejected, threw or passed `triggerTimeoutMs`. */
  triggerFailures: number;
  /** Accepted deliveries whose body named an order (its id went to the trigger); the rest ask for a pull from the cursor. */
  namedOrders: number;
}

export interface ShopTriggerShopStats extends ShopTriggerCounts {
  /** Verified deliveries by topic header (X-Shopify-Topic / X-WC-Webhook-Topic). */
  topics: Record<string, number>;
}

export interface ShopTriggerStats {
  totals: ShopTriggerCounts & {
    /** Other paths, unknown shops, a platform not the shop's (404). */
    notFound: number;
    /** A hook path with a method other than POST (405). */
    methodNotAllowed: number;
    /** Requests answered 500 (a throwing `shops` lookup). */
    errors: number;
  };
  /** Only shops that were looked up successfully, so a stranger cannot grow this map. */
  shops: Record<string, ShopTriggerShopStats>;
}

export interface ShopTrigger {
  /** e.g. http://127.0.0.1:8095; hooks are at `${url}/hooks/<platform>/<shop>`. */
  url: string;
  port: number;
  /** The delivery URL to register for a shop (its name percent-encoded). */
  hookUrl(platform: TriggerPlatform, shop: string): string;
  stats(): ShopTriggerStats;
  /**
   * Stops listening (open connections are closed), runs the trigger calls still due from
   * coalescing at once, and waits for them and those under way, at most `closeTimeoutMs`.
   * Idempotent.
   */
  close(): Promise<void>;
}
