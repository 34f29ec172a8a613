/**
 * A platform shop's `import` settings, beside its connector in SHOP_CONNECTORS: how often the
 * schedule pulls, how far a pull reaches back, and the mapping from a platform order to a label
 * request. Validated with zod by platforms/connectors.ts, which names each problem with its JSON
 * path (SHOP_CONNECTORS.acme.import.mapping.shippingMethods.Express.courier: ...).
 */
import { z } from 'zod';
import { duration, type DurationBounds } from './settings';
import { Address, Contact, CONTROL_CHARACTER } from '../shipping-api/contract';

/** A pull at most every 30 s (webhooks trigger faster ones), at least once a day. */
const EVERY_BOUNDS: DurationBounds = { minMs: 30_000, maxMs: 86_400_000 };
/** The overlap covers the platform's search index lag and same-second ties; a day at most. */
const OVERLAP_BOUNDS: DurationBounds = { minMs: 0, maxMs: 86_400_000 };
/** How far the first pull (no cursor yet) reaches back; Shopify shows 60 days without read_all_orders. */
const FIRST_PULL_BOUNDS: DurationBounds = { minMs: 60_000, maxMs: 365 * 86_400_000 };

const Code = z.string().min(1).max(100);

/** The shipping API's courier and product for one shipping method. */
const Service = z.strictObject({ courier: Code, productCode: Code });

/** Which platform value feeds an order field: `name` (#1001), `number` (1001) or the platform id. */
const OrderValue = z.enum(['name', 'number', 'id']);

const Measure = z.number().positive().max(10_000);

export const ImportMapping = z.strictObject({
  /** Shipping method title or code (case-insensitive) → courier and product. */
  shippingMethods: z.record(z.string().min(1).max(200), Service).default({}),
  /** For a method not in shippingMethods; null: such an order is reported until it is added. */
  defaultService: Service.nullable().default(null),
  /**
   * Where parcels leave from. Shopify: the fulfillment order's location unless set here (a contact
   * may be given alone, the location's address is kept). WooCommerce: required (REST orders carry
   * no store address).
   */
  shipFrom: z.strictObject({ contact: Contact.optional(), address: Address.optional() }).optional(),
  /** Units of the label request; weights are converted into `weight`. */
  units: z.strictObject({ weight: z.enum(['kg', 'g', 'lb', 'oz']).default('kg'), dimension: z.enum(['cm', 'in']).default('cm') }).default({
    weight: 'kg',
    dimension: 'cm',
  }),
  /** WooCommerce's store weight unit (WooCommerce → Settings → Products); Shopify sends each weight's unit. */
  productWeightUnit: z.enum(['kg', 'g', 'lbs', 'oz']).default('kg'),
  /** Added to the items' weight for the box and filling. */
  packagingWeight: z.number().min(0).max(1000).default(0),
  /** The parcel's size when the platform does not know it (neither platform has box sizes). */
  parcelDimension: z.strictObject({ length: Measure, width: Measure, height: Measure }).optional(),
  label: z.strictObject({ format: z.string().min(1).max(20) }).default({ format: 'PDF' }),
  /** The shipment's orderId (with orderIdPrefix): stable values only, it names the workflow. */
  orderId: OrderValue.default('number'),
  orderIdPrefix: z
    .string()
    .max(50)
    .refine((t) => !CONTROL_CHARACTER.test(t), 'must not contain control characters')
    .default(''),
  customerOrderNumber: OrderValue.default('name'),
  /** orderNumbers.platformOrderNumber; null leaves it out. */
  platformOrderNumber: OrderValue.nullable().default('id'),
  /** Customs data the spec does not detail, passed as given: to every cross-border label, or always. */
  customs: z.record(z.string().min(1).max(100), z.unknown()).optional(),
  customsWhen: z.enum(['cross-border', 'always']).default('cross-border'),
});
export type ImportMapping = z.infer<typeof ImportMapping>;

export const ShopImportSettings = z.strictObject({
  /** The schedule's interval; webhooks (shop-trigger) start a pull sooner. */
  every: duration('5m', EVERY_BOUNDS),
  /** Each pull reads again what changed this long before its cursor. */
  overlap: duration('10m', OVERLAP_BOUNDS),
  /** How far back a shop's first pull reads (a known cursor is never older than the orders it saw). */
  firstPull: duration('7d', FIRST_PULL_BOUNDS),
  /** Orders per page: each adds about 117 requested points on Shopify (a query over 1,000 is refused), WooCommerce allows 100. */
  pageSize: z.number().int().min(1).max(100).optional(),
  /** Shopify: the share of the store's restore rate a pull may use, so write-back and other apps keep room. */
  budgetShare: z.number().min(0.01).max(1).default(0.5),
  /** Pages one pull reads at most: a store whose paging does not end stops the pull here (Shopify 10,000 orders at 5 a page). */
  maxPages: z.number().int().min(10).max(100_000).default(2_000),
  /**
   * Shopify: an order's fulfillment orders and lines are read in pages up to these bounds; a
   * larger order is a rejection naming the setting (Shopify makes one fulfillment order per
   * location and delivery group, and a merchant's splits add more).
   */
  maxFulfillmentOrders: z.number().int().min(1).max(250).default(50),
  maxOrderLines: z.number().int().min(1).max(10_000).default(1_000),
  /**
   * Right before a pulled order's label is bought, ask the shop whether the order changed since
   * the shipment read it (shop-import/label-check.ts): a cancel, hold or edit of the last seconds gets no label.
   * About one light request per label (checks of one shop within 50 ms share one).
   */
  checkBeforeLabel: z.boolean().default(true),
  /** Leave the schedule paused when the worker creates it. */
  paused: z.boolean().default(false),
  mapping: ImportMapping,
});
export type ShopImportSettings = z.infer<typeof ShopImportSettings>;

/** Unset settings of `pageSize` per platform. */
export const DEFAULT_PAGE_SIZE = { shopify: 5, woocommerce: 100 } as const;
/** Shopify refuses a query over 1,000 requested points; the page query asks about 117 an order. */
export const MAX_SHOPIFY_PAGE_SIZE = 8;
