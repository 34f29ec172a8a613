/**
 * Seed orders: the shape a test or the admin route gives createOrder (zod-checked, errors name
 * the field), and the demo orders the CLI's --seed-orders makes.
 */
import { z } from 'zod';
import { fieldProblems } from '../shipping-api/contract';
import { parseGmtSeed } from './clock';
import { ORDER_STATUSES } from './defaults';

const Money = z.string().regex(/^\d+(\.\d{1,2})?$/, 'must be a decimal string such as "12.50"');
const Measure = z.string().regex(/^\d*(\.\d+)?$/, 'must be a decimal string such as "0.5" (or empty)');
export const GmtDate = z.string().refine((s) => parseGmtSeed(s) !== null, 'must be a GMT date-time such as "2026-11-05T08:30:00"');

export const AddressFields = {
  first_name: z.string(),
  last_name: z.string(),
  company: z.string(),
  address_1: z.string(),
  address_2: z.string(),
  city: z.string(),
  state: z.string(),
  postcode: z.string(),
  country: z.string(),
  phone: z.string(),
};

export const SeedOrderSchema = z.strictObject({
  status: z.enum(ORDER_STATUSES).optional(),
  lineItems: z
    .array(
      z.strictObject({
        sku: z.string().min(1),
        name: z.string().optional(),
        quantity: z.number().int().min(1),
        /** Default: the product seeded for this sku (made on first use). */
        productId: z.number().int().positive().optional(),
        /** Unit price; default "10.00". */
        price: Money.optional(),
        /** The product's weight and dimensions, when this line creates the product. */
        weight: Measure.optional(),
        dimensions: z.strictObject({ length: Measure, width: Measure, height: Measure }).optional(),
      }),
    )
    .min(1),
  billing: z
    .strictObject({ ...AddressFields, email: z.string() })
    .partial()
    .optional(),
  /** shipping.phone defaults to "": classic checkout does not collect it. */
  shipping: z.strictObject(AddressFields).partial().optional(),
  /** Default: now. */
  dateCreatedGmt: GmtDate.optional(),
  /** Default: the creation date. */
  dateModifiedGmt: GmtDate.optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .optional(),
  shippingTotal: Money.optional(),
  customerNote: z.string().optional(),
  /** shipping_lines[0]; default flat_rate / "Flat rate". */
  shippingMethod: z.strictObject({ methodId: z.string().min(1), methodTitle: z.string() }).optional(),
});

export type SeedOrder = z.input<typeof SeedOrderSchema>;
export type ParsedSeed = z.output<typeof SeedOrderSchema>;

export class InvalidSeedError extends Error {
  override readonly name = 'InvalidSeedError';
  constructor(readonly details: Array<{ field: string; message: string }>) {
    super(`invalid seed order: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`);
  }
}

export function parseSeed(seed: unknown): ParsedSeed {
  const parsed = SeedOrderSchema.safeParse(seed);
  if (parsed.success) return parsed.data;
  throw new InvalidSeedError(fieldProblems(parsed.error));
}

const PEOPLE = [
  { first_name: 'Jane', last_name: 'Doe', city: 'Springfield', state: 'IL', postcode: '62701', country: 'US' },
  { first_name: 'Lena', last_name: 'Schmidt', city: 'Hamburg', state: 'HH', postcode: '20095', country: 'DE' },
  { first_name: 'Tom', last_name: 'Baker', city: 'London', state: '', postcode: 'SW1A 1AA', country: 'GB' },
  { first_name: 'Mia', last_name: 'Nguyen', city: 'Sydney', state: 'NSW', postcode: '2000', country: 'AU' },
];
const PRODUCTS = [
  { sku: 'MUG-BLUE', name: 'Ceramic mug (blue)', price: '12.50' },
  { sku: 'TEE-M', name: 'T-shirt, size M', price: '19.00' },
  { sku: 'POSTER-A2', name: 'Poster A2', price: '25.00' },
];

/** `count` processing orders, one every ten minutes up to now, for the CLI's --seed-orders. */
export function demoSeeds(count: number, nowMs: number): SeedOrder[] {
  return Array.from({ length: count }, (_, i) => {
    const person = PEOPLE[i % PEOPLE.length]!;
    const product = PRODUCTS[i % PRODUCTS.length]!;
    const email = `${person.first_name.toLowerCase()}.${i + 1}@example.com`;
    return {
      status: 'processing',
      lineItems: [{ ...product, quantity: 1 + (i % 3) }],
      billing: { ...person, address_1: `${10 + i} High Street`, email, phone: '+1 555 0100' },
      shipping: { ...person, address_1: `${10 + i} High Street` },
      dateCreatedGmt: new Date(nowMs - (count - i) * 600_000).toISOString().slice(0, 19),
    };
  });
}
