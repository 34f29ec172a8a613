/**
 * A seed order, as tests and the admin route give it: zod-validated, so a typo in a test's
 * seed fails loudly instead of producing an order the test did not mean.
 */
import { z } from 'zod';
import { LOCATION_IDS } from './defaults';
import { isoSeconds } from './model';
import { CURRENCY_CODES } from './schema-sdl';

const Text = (max: number) => z.string().min(1).max(max);

const IsoDate = z
  .string()
  .refine((s) => /^\d{4}-\d{2}-\d{2}/.test(s) && !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 date-time')
  .transform((s) => isoSeconds(Date.parse(s)));

const Amount = z.string().regex(/^\d{1,9}(\.\d{1,2})?$/, 'must be a decimal amount such as "12.50"');

const SeedLine = z.strictObject({
  sku: Text(255),
  title: Text(255).optional(),
  quantity: z.number().int().min(1).max(10_000),
  grams: z.number().min(0).max(1_000_000).optional(),
  price: Amount.optional(),
});

/** The customer's chosen shipping method; absent = "Standard" / "standard" at 0.00. */
const SeedShippingLine = z.strictObject({
  title: Text(255),
  code: Text(255).nullable().optional(),
  price: Amount.optional(),
});

/** The address fields a seed or an edit may set. */
export const SeedAddress = z
  .strictObject({
    name: Text(255).nullable(),
    firstName: Text(255).nullable(),
    lastName: Text(255).nullable(),
    company: Text(255).nullable(),
    address1: Text(255).nullable(),
    address2: Text(255).nullable(),
    city: Text(255).nullable(),
    provinceCode: Text(10).nullable(),
    zip: Text(20).nullable(),
    countryCodeV2: z
      .string()
      .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code')
      .nullable(),
    phone: Text(40).nullable(),
  })
  .partial();

export const SeedOrderSchema = z.strictObject({
  name: Text(100).optional(),
  email: z.string().max(254).nullable().optional(),
  lineItems: z.array(SeedLine).min(1).max(250),
  locationId: z.enum(LOCATION_IDS).optional(),
  splitLocations: z.boolean().optional(),
  /**
   * The lines spread over this many fulfillment orders, taking turns between the two locations
   * (as Shopify has after a merchant splits fulfillment orders): an order larger than a page reads.
   */
  fulfillmentOrderCount: z.number().int().min(1).max(50).optional(),
  fulfillmentOrderStatus: z.enum(['OPEN', 'ON_HOLD', 'SCHEDULED', 'CANCELLED']).optional(),
  /** Every FO's deliveryMethod.methodType; default SHIPPING. */
  deliveryMethod: z.enum(['SHIPPING', 'PICK_UP', 'LOCAL']).optional(),
  /** Order.currencyCode (and presentmentCurrencyCode); default EUR. */
  currency: z.enum(CURRENCY_CODES).optional(),
  /** Order.displayFinancialStatus; default PAID (a PAID order also fires orders/paid). */
  financialStatus: z.enum(['PAID', 'PENDING', 'AUTHORIZED']).optional(),
  /** null = an order without shipping (Order.shippingLine null). */
  shippingLine: SeedShippingLine.nullable().optional(),
  createdAt: IsoDate.optional(),
  updatedAt: IsoDate.optional(),
  shippingAddress: SeedAddress.optional(),
  tags: z.array(Text(255)).max(250).optional(),
  note: z.string().max(5000).nullable().optional(),
});

/** What createOrder and POST /_fake/orders take. */
export type SeedOrder = z.input<typeof SeedOrderSchema>;
export type ParsedSeed = z.output<typeof SeedOrderSchema>;
