/**
 * A Shopify order as the pull reads it: the GraphQL selections and the zod schemas of what comes
 * back, every value bounded (domain/platform-order-checks.ts). Shared by the page query (read.ts) and the paged
 * reading of an order larger than a page (whole-order.ts).
 */
import { z } from 'zod';
import { ORDER_LIMITS, RETRYABLE_ID, StoreCurrency, StoreText } from '../../domain/platform-order-checks';

export const PageInfo = z.object({ hasNextPage: z.boolean(), endCursor: z.string().max(1000).nullable().optional() });

const Text = StoreText();
const Short = StoreText(100);

export const FoLine = z.object({
  remainingQuantity: z.number().int().min(0).max(ORDER_LIMITS.quantity),
  totalQuantity: z.number().int().min(0).max(ORDER_LIMITS.quantity),
  sku: Text.nullable(),
  productTitle: Text,
  weight: z
    .object({
      unit: z.enum(['GRAMS', 'KILOGRAMS', 'OUNCES', 'POUNDS']),
      value: z
        .number()
        .min(0)
        .max(ORDER_LIMITS.unitWeightKg * 1000),
    })
    .nullable(),
  lineItem: z.object({ originalUnitPriceSet: z.object({ shopMoney: z.object({ amount: z.string().max(40) }) }) }),
});
export type FoLine = z.infer<typeof FoLine>;

export const FoLines = z.object({ pageInfo: PageInfo, nodes: z.array(FoLine).max(250) });

export const FulfillmentOrder = z.object({
  // Read again by id when its lines need more than one page.
  id: z.string().max(200),
  status: Short,
  deliveryMethod: z.object({ methodType: Short }).nullable(),
  assignedLocation: z.object({
    // The location's own id names the parcel it ships (null once the location was deleted).
    location: z.object({ legacyResourceId: z.string().regex(/^[0-9]{1,20}$/, 'must be a numeric id') }).nullable(),
    name: Text,
    address1: Text.nullable(),
    address2: Text.nullable(),
    city: Text.nullable(),
    province: Text.nullable(),
    zip: Short.nullable(),
    countryCode: Short,
    phone: Short.nullable(),
  }),
  lineItems: FoLines,
});
export type FulfillmentOrder = z.infer<typeof FulfillmentOrder>;

export const FulfillmentOrders = z.object({ pageInfo: PageInfo, nodes: z.array(FulfillmentOrder).max(250) });

export const MailingAddress = z.object({
  firstName: Text.nullable(),
  lastName: Text.nullable(),
  company: Text.nullable(),
  address1: Text.nullable(),
  address2: Text.nullable(),
  city: Text.nullable(),
  provinceCode: Short.nullable(),
  zip: Short.nullable(),
  countryCodeV2: Short.nullable(),
  phone: Short.nullable(),
});

export const Order = z.object({
  // Numeric: it goes into the retry list and the retry query's `id:` terms.
  legacyResourceId: z.string().regex(RETRYABLE_ID, 'must be a numeric id'),
  name: StoreText(ORDER_LIMITS.nameChars),
  email: Text.nullable(),
  updatedAt: z.string().max(40),
  // Only whether it is set is read (the order is cancelled); its value is never a cursor.
  cancelledAt: z.string().max(40).nullable(),
  displayFinancialStatus: Short.nullable(),
  currencyCode: StoreCurrency,
  shippingLine: z.object({ title: Text, code: Text.nullable() }).nullable(),
  shippingAddress: MailingAddress.nullable(),
  fulfillmentOrders: FulfillmentOrders,
});
export type Order = z.infer<typeof Order>;

export const LINE_FIELDS =
  'remainingQuantity totalQuantity sku productTitle weight { unit value } lineItem { originalUnitPriceSet { shopMoney { amount } } }';

/** A fulfillment order with its first `lines` lines. */
export const FO_FIELDS = (lines: number) => `
      id
      status
      deliveryMethod { methodType }
      assignedLocation { location { legacyResourceId } name address1 address2 city province zip countryCode phone }
      lineItems(first: ${lines}) {
        pageInfo { hasNextPage endCursor }
        nodes { ${LINE_FIELDS} }
      }`;

/** An order with `fulfillmentOrders` of its fulfillment orders (after the cursor variable `after`) of `lines` lines each. */
export const ORDER_FIELDS = (fulfillmentOrders: number, lines: number, after?: string) => `
  legacyResourceId name email updatedAt cancelledAt displayFinancialStatus currencyCode
  shippingLine { title code }
  shippingAddress { firstName lastName company address1 address2 city provinceCode zip countryCodeV2 phone }
  fulfillmentOrders(first: ${fulfillmentOrders}${after ? `, after: ${after}` : ''}) {
    pageInfo { hasNextPage endCursor }
    nodes { ${FO_FIELDS(lines)} }
  }`;
