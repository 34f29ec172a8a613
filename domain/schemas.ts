/**
 * zod schemas of what crosses into the shipment workflow: its input, the tracking policy and
 * the operator's corrected label data. The import, the CLI and the worker's configuration
 * validate with them before anything reaches Temporal.
 *
 * Never imported by workflow code (only its types are): every module the workflow bundle loads
 * is evaluated again for each cached workflow, and zod with these schemas made a cached
 * shipment about thirty times heavier than a trivial workflow.
 */
import { z } from 'zod';
import { LabelRequestWithoutKey } from '../shipping-api/contract';

export const OrderIdentity = z.object({
  shop: z.string().min(1).max(200),
  orderId: z.string().min(1).max(200),
});

const durationMs = z.number().int().positive();

export const TrackingPolicy = z.object({
  pollIntervalMs: durationMs,
  pollIntervalsMs: z.record(z.string().min(1), durationMs).optional(),
  maxTrackingMs: durationMs,
  terminalTags: z.array(z.string().min(1)).min(1),
  correctionTimeoutMs: durationMs,
  shopHoldTimeoutMs: durationMs.optional(),
  historyEventLimit: z.number().int().min(10),
  /** Set by the worker from its shop connectors, never by an order. */
  shopSync: z
    .object({ connector: z.enum(['webhook', 'shopify', 'woocommerce']).nullable(), deliveryWindowMs: durationMs, maxBackoffMs: durationMs })
    .optional(),
});

/** The order's id on Shopify or WooCommerce: digits, or Shopify's gid://shopify/Order/<digits>. */
export const PlatformOrderId = z
  .string()
  .regex(
    /^(gid:\/\/shopify\/Order\/)?[1-9][0-9]{0,19}$/,
    "must be the platform's numeric order id (Shopify also takes gid://shopify/Order/<id>)",
  );

const Digest = z.string().regex(/^[0-9a-f]{16,64}$/, 'must be a hex digest');

/** The shop's order as a shipment knows it (domain/shop-order.ts): what change detection compares. */
export const ShopOrderSeen = z.object({
  facts: z.object({ status: z.enum(['open', 'on_hold', 'cancelled', 'refunded']), address: Digest, lines: Digest }),
  modifiedAt: z.iso.datetime(),
  /** When the reading was taken (the reader's clock, milliseconds): orders readings within one second. */
  readAt: z.iso.datetime().optional(),
});

/** A shipping account's name: it appears in workflow inputs, logs and the account workflow's id. */
export const AccountName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'must be 1-63 of A-Z a-z 0-9 . _ - (starting with a letter or digit)');

/**
 * Where one parcel of an order ships from: the platform's location id (Shopify's numeric
 * location id) and its name. Part of the parcel's workflow id, idempotencyKey and event ids.
 */
export const ParcelRef = z.object({
  location: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 _ -'),
  name: z.string().min(1).max(200),
});

/** An order ships as at most this many parcels (one per location); Shopify stores have far fewer locations. */
export const MAX_PARCELS = 20;

export const ShipmentInput = OrderIdentity.extend({
  /** Required for a shop whose connector is a platform (shopify, woocommerce): the order it writes to. */
  platformOrderId: PlatformOrderId.optional(),
  /** Set by a shop pull: the order as read when the shipment started; later changes are compared with it. */
  shopOrder: ShopOrderSeen.optional(),
  labelRequest: LabelRequestWithoutKey,
  /** Per-order overrides; otherwise the worker's configured policy applies. */
  tracking: TrackingPolicy.omit({ shopSync: true }).partial().optional(),
  /**
   * The shipping account every call of the shipment uses, by name (never credentials): the
   * shop's account when it started (config/shipping-accounts.ts). Absent: `default`.
   */
  account: AccountName.optional(),
  /**
   * Set by a shop pull for an order that ships from several locations: the order's workflow
   * starts one parcel workflow per location (workflows/shipment/split-order.ts); `labelRequest`
   * is then the first parcel's, for the summary.
   */
  parcels: z
    .array(ParcelRef.extend({ labelRequest: LabelRequestWithoutKey }))
    .min(2)
    .max(MAX_PARCELS)
    .refine((parcels) => new Set(parcels.map((p) => p.location)).size === parcels.length, 'each location once')
    .optional(),
  /** Set by the order's workflow on each parcel workflow it starts: the location this one ships from. */
  parcel: ParcelRef.optional(),
});

/** What a pull tells a shipment whose order changed (the update `shopOrderChanged`). */
export const ShopOrderChange = ShopOrderSeen.extend({
  platformOrderId: PlatformOrderId.optional(),
  labelRequest: LabelRequestWithoutKey.optional(),
  /**
   * Shopify: the locations the reading ships from. Of one location only its id (`labelRequest`
   * is its request); of several, each one's request: an order's workflow hands each parcel its own.
   */
  parcels: z
    .array(
      z.object({
        location: ParcelRef.shape.location,
        name: ParcelRef.shape.name.optional(),
        labelRequest: LabelRequestWithoutKey.optional(),
      }),
    )
    .max(MAX_PARCELS)
    .optional(),
  /** Shopify: every location holding a line of the order (a parcel whose location is not here had its lines moved away). */
  locations: z.array(ParcelRef.shape.location).max(250).optional(),
  problems: z
    .array(z.object({ field: z.string().max(200), message: z.string().max(1000) }))
    .max(50)
    .optional(),
});

export const ResubmitLabel = z.object({
  labelRequest: LabelRequestWithoutKey,
  reason: z.string().max(500).optional(),
  /** The shop and order the operator's file names, when it was a whole import record. */
  namedOrder: OrderIdentity.partial().optional(),
  /** The operator said the data may name another order or sender (domain/correction.ts). */
  acceptMismatch: z.boolean().optional(),
});
