/**
 * What a test, the admin routes or the CLI may ask of the fake beyond seeding one order: an
 * order edit, a bulk generation and a webhook. One zod schema each, so a bad value is refused
 * with its field named wherever it comes from.
 */
import { z } from 'zod';
import { fieldProblems } from '../shipping-api/contract';
import { DEFAULTS, ORDER_STATUSES } from './defaults';
import { AddressFields, GmtDate } from './seed';

export const OrderEditSchema = z.strictObject({
  customerNote: z.string().optional(),
  shipping: z.strictObject(AddressFields).partial().optional(),
  status: z.enum(ORDER_STATUSES).optional(),
  /** Line quantities by line item id, as the admin's item editor saves them (0 removes the line). */
  lineItems: z
    .array(z.strictObject({ id: z.number().int().positive(), quantity: z.number().int().min(0).max(10_000) }))
    .max(500)
    .optional(),
});
export type FakeWooOrderEdit = z.input<typeof OrderEditSchema>;

export const GenerateOrdersSchema = z.strictObject({
  count: z.number().int().min(1).max(DEFAULTS.maxGeneratedOrders),
  /** Seed of the generator's PRNG: the same seed on the same store makes the same orders. Default 1. */
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 32 - 1)
    .default(1),
  status: z.enum(ORDER_STATUSES).default('processing'),
  /** date_created_gmt is spread over this many seconds before `endGmt`. Default one day. */
  spreadSeconds: z
    .number()
    .int()
    .min(0)
    .max(10 * 365 * 86_400)
    .default(86_400),
  /** The latest date_created_gmt. Default: the fake's clock. */
  endGmt: GmtDate.optional(),
});
export type FakeWooGenerateOptions = z.input<typeof GenerateOrdersSchema>;
export type ParsedGenerate = z.output<typeof GenerateOrdersSchema>;

export const WEBHOOK_TOPICS = ['order.created', 'order.updated'] as const;
/** WooCommerce's webhook statuses: paused by the merchant, disabled after failed deliveries. */
export const WEBHOOK_STATUSES = ['active', 'paused', 'disabled'] as const;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

export const WebhookInputSchema = z.strictObject({
  topic: z.enum(WEBHOOK_TOPICS),
  deliveryUrl: z.string().refine(isHttpUrl, 'must be an http(s) URL'),
  secret: z.string().min(1),
  status: z.enum(WEBHOOK_STATUSES).default('active'),
  name: z.string().optional(),
});
export type FakeWooWebhookInput = z.input<typeof WebhookInputSchema>;
export type ParsedWebhookInput = z.output<typeof WebhookInputSchema>;

export class InvalidWooInputError extends Error {
  override readonly name = 'InvalidWooInputError';
  constructor(
    what: string,
    readonly details: Array<{ field: string; message: string }>,
  ) {
    super(`invalid ${what}: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`);
  }
}

/** The schema's output for `value`; throws InvalidWooInputError naming each bad field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new InvalidWooInputError(what, fieldProblems(parsed.error));
}
