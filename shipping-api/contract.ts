/**
 * The shipping API contract (spec version 1.0.0), written once as zod schemas.
 * Every TypeScript type of the API is inferred from here; nothing is declared twice.
 *
 * Request schemas are strict on the objects the spec lists field by field, so a typo in an
 * import file ("postcode" for "postalCode") is an error naming the field rather than data
 * silently dropped. Objects whose fields the spec does not show (customs, dangerousGoods,
 * pickup, courierOptions beyond two fields) accept any JSON object.
 *
 * Response schemas follow the spec's own strictness: the order detail has "no additional
 * properties"; other responses tolerate extra fields. Enumerations the spec says may grow
 * (order status, exceptionState) and the tracking tag are open strings.
 */
import { z } from 'zod';

// ---------------------------------------------------------------- shared pieces

const dateTime = z.iso.datetime({ offset: true });
/** A JSON object whose fields the spec does not show: passed through as supplied. */
const unspecifiedObject = z.record(z.string(), z.unknown());

export const LabelErrorObject = z.object({ code: z.string(), message: z.string() });
export type LabelErrorObject = z.infer<typeof LabelErrorObject>;

// ---------------------------------------------------------------- shop and order ids

/**
 * C0 and C1 control characters (NUL, line breaks, the ESC of terminal sequences) and the Unicode
 * line and paragraph separators: none belongs in an id, and any of them lets an id forge a line
 * of human output or blur where one part of a hashed identity ends.
 */
const CONTROL_CHARACTERS = '\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029';
export const CONTROL_CHARACTER = new RegExp(`[${CONTROL_CHARACTERS}]`);
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A shop id or an order id as supplied from outside (import file, CLI, code that starts a
 * shipment). Refusing control characters keeps the label's hashed idempotencyKey input
 * (shop NUL orderId) and the shipment event id unambiguous without changing the key or id of
 * any order that was valid before; refusing unpaired surrogates keeps UTF-8 encoding (which
 * would replace each with the same U+FFFD) one-to-one.
 */
export const ExternalId = z
  .string()
  .min(1)
  .max(200)
  // A pattern (not a refinement) so the published event JSON schema carries it too.
  .regex(new RegExp(`^[^${CONTROL_CHARACTERS}]*$`), 'must not contain control characters (U+0000-U+001F, U+007F-U+009F, U+2028, U+2029)')
  .refine((text) => !UNPAIRED_SURROGATE.test(text), 'must be well-formed Unicode (it holds an unpaired surrogate)');

// ---------------------------------------------------------------- label creation request

export const Contact = z.strictObject({
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  // Type and format of phone/postalCode are not shown in the spec: any string.
  phone: z.string().optional(),
  email: z.string().optional(),
});

export const Address = z.strictObject({
  streetLines: z.array(z.string()).optional(),
  city: z.string().optional(),
  state: z.string().optional(),
  postalCode: z.string().optional(),
  countryCode: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code (two capital letters)')
    .optional(),
});

export const Party = z.strictObject({ contact: Contact.optional(), address: Address.optional() });

export const Money = z.strictObject({ amount: z.number(), currency: z.string().min(1) });

export const Item = z.strictObject({
  descriptionEn: z.string().optional(),
  descriptionLocal: z.string().optional(),
  quantity: z.number().int().optional(),
  unitPrice: Money.optional(),
  unitWeight: z.number().optional(),
});

export const Dimension = z.strictObject({ length: z.number(), width: z.number(), height: z.number() });

export const Parcel = z.strictObject({
  weight: z.number().optional(),
  dimension: Dimension.optional(),
  items: z.array(Item).optional(),
});

export const Shipment = z.strictObject({
  shipTo: Party.optional(),
  shipFrom: Party.optional(),
  parcels: z.array(Parcel).optional(),
});

/** Carrier-specific options of one integration; fields beyond these two are not shown. */
export const CourierOptionsRequest = z.looseObject({
  sourceCode: z.string().optional(),
  sensitiveType: z.string().optional(),
});

export const IdempotencyKey = z.string().min(1).max(100);

/** The label's service as an order gives it. */
const OrderService = z.strictObject({ productCode: z.string().min(1) });

export const LabelRequest = z.strictObject({
  idempotencyKey: IdempotencyKey,
  courier: z.string().min(1),
  /**
   * `shipperAccountId` goes with the Bearer scheme only (spec, Authentication 5): the client adds
   * it from the account's settings, never from an order.
   */
  service: OrderService.extend({ shipperAccountId: z.string().min(1).optional() }),
  shipment: Shipment,
  // Allowed values of label.format and units.* are not shown: any non-empty string.
  label: z.strictObject({ format: z.string().min(1) }).optional(),
  units: z
    .strictObject({ weight: z.string().min(1), dimension: z.string().min(1) })
    .partial()
    .optional(),
  order: z
    .strictObject({
      customerOrderNumber: z.string().min(1).optional(),
      orderNumbers: z
        .strictObject({
          platformOrderNumber: z.string().optional(),
          referenceNumbers: z.array(z.string()).optional(),
        })
        .optional(),
    })
    .optional(),
  customs: unspecifiedObject.optional(),
  serviceOptions: z.array(z.strictObject({ code: z.string().min(1), value: z.string() })).optional(),
  dangerousGoods: unspecifiedObject.optional(),
  pickup: unspecifiedObject.optional(),
  /** Keyed by the courier integration code. */
  courierOptions: z.record(z.string().min(1), CourierOptionsRequest).optional(),
});
export type LabelRequest = z.infer<typeof LabelRequest>;

/** What an order import supplies: the system derives the idempotencyKey, the account's settings the shipper account, never the file. */
export const LabelRequestWithoutKey = LabelRequest.omit({ idempotencyKey: true }).extend({ service: OrderService });
export type LabelRequestWithoutKey = z.infer<typeof LabelRequestWithoutKey>;

// ---------------------------------------------------------------- label result

export const LabelStatus = z.enum(['created', 'failed']);

export const LabelResult = z.object({
  id: z.uuid(),
  status: LabelStatus,
  courier: z.string(),
  customerOrderNumber: z.string(),
  courierOrderNumber: z.string().nullable(),
  courierTrackingNumber: z.string().nullable(),
  error: LabelErrorObject.nullable(),
});
export type LabelResult = z.infer<typeof LabelResult>;

// ---------------------------------------------------------------- order detail

/** Listed in ladder order. The spec says new values may be added: the schema accepts any string. */
export const KNOWN_ORDER_STATUSES = [
  'created',
  'fetched',
  'first_mile_received',
  'transit_to_consolidation',
  'arrive_consolidation',
  'in_transit_last_mile',
  'shipping_to_destination',
  'delivered',
  'failed',
] as const;

export const KNOWN_EXCEPTION_STATES = ['trashed', 'hold', 'carrier_hold', 'refund_requested', 'returned', 'refund_rejected'] as const;

export const ParcelMeasurements = z.strictObject({
  weightUnit: z.string().nullable(),
  dimensionUnit: z.string().nullable(),
  parcels: z.array(
    z.strictObject({
      parcelId: z.string().nullable(),
      weight: z.number(),
      dimension: Dimension.nullable(),
    }),
  ),
});

export const Order = z
  .strictObject({
    id: z.uuid(),
    status: z.string(),
    exceptionState: z.string().nullable(),
    exceptionStateAt: dateTime.nullable(),
    exceptionReason: z.string().nullable(),
    courier: z.string(),
    customerOrderNumber: z.string().min(1),
    courierOrderNumber: z.string().nullable(),
    courierTrackingNumber: z.string().nullable(),
    serviceProductCode: z.string().nullable(),
    shipToCountryCode: z.string().nullable(),
    shipToPostalCode: z.string().nullable(),
    shipFromCountryCode: z.string().nullable(),
    parcelMeasurements: ParcelMeasurements.nullable(),
    maskedRecipientName: z.string().nullable(),
    error: LabelErrorObject.nullable(),
    createdAt: dateTime,
  })
  .superRefine((order, ctx) => {
    if ((order.exceptionState === null) !== (order.exceptionStateAt === null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['exceptionStateAt'],
        message: 'must be null exactly when exceptionState is null',
      });
    }
  });
export type Order = z.infer<typeof Order>;

const nullableString = z.string().nullable();

export const CarrierCourierOptions = z.strictObject({
  sourceCode: nullableString,
  platformAccountCode: nullableString,
  sensitiveType: nullableString,
  signatureService: nullableString,
  houseNumber: nullableString,
  packageCount: z.number().int().nullable(),
  senderUsci: nullableString,
  platformName: nullableString,
  platformState: nullableString,
  platformAddress: nullableString,
  platformPostalCode: nullableString,
  platformPhone: nullableString,
  platformEmail: nullableString,
  platformSalesUrl: nullableString,
  cargoType: nullableString,
  paymentPlatform: nullableString,
  paymentPlatformAccount: nullableString,
  paymentTransactionNumber: nullableString,
  labelUrl: nullableString,
});

export const CarrierDetails = z.strictObject({
  // The single allowed value (the integration code) is not shown in the spec: any non-empty string.
  integration: z.string().min(1),
  orderNumbers: z.strictObject({
    platformOrderNumber: nullableString,
    trackingNumber: nullableString,
    referenceNumbers: z.array(z.string()),
  }),
  customs: z.strictObject({ taxNumber: nullableString, ioss: nullableString, vat: nullableString, eori: nullableString }),
  iossApplied: nullableString,
  serviceOptions: z.array(z.strictObject({ code: z.string(), value: nullableString, cost: z.number().nullable() })),
  courierOptions: CarrierCourierOptions,
});
export type CarrierDetails = z.infer<typeof CarrierDetails>;

export const OrderDetail = z.strictObject({ order: Order, carrierDetails: CarrierDetails });
export type OrderDetail = z.infer<typeof OrderDetail>;

// ---------------------------------------------------------------- tracking

export const KNOWN_TRACKING_TAGS = ['Pending', 'InfoReceived', 'InTransit', 'Delivered', 'Exception', 'Cancelled', 'Unknown'] as const;
export type KnownTrackingTag = (typeof KNOWN_TRACKING_TAGS)[number];

export const Checkpoint = z.object({
  checkpointTime: dateTime,
  city: z.string(),
  state: z.string(),
  countryRegion: z.string(),
  location: z.string(),
  message: z.string(),
  tag: z.string(),
  subtag: z.string(),
  subtagMessage: z.string(),
  slug: z.string(),
});
export type Checkpoint = z.infer<typeof Checkpoint>;

export const TrackingRecord = z.object({
  id: z.string(),
  trackingNumber: z.string().nullable(),
  tag: z.string(),
  subtag: z.string(),
  subtagMessage: z.string(),
  slug: z.string(),
  checkpoints: z.array(Checkpoint),
});
export type TrackingRecord = z.infer<typeof TrackingRecord>;

/** Path parameter of GET /tracking/{id}: a label UUID or a customerOrderNumber. */
export const TrackingId = z.string().min(1);
export const OrderId = z.uuid();

// ---------------------------------------------------------------- couriers and products

export const Courier = z.object({ code: z.string(), name: z.string() });
export type Courier = z.infer<typeof Courier>;
export const CourierList = z.object({ couriers: z.array(Courier) });

export const Product = z.object({ code: z.string(), name: z.string() });
export type Product = z.infer<typeof Product>;
export const ProductList = z.object({ products: z.array(Product) });

// ---------------------------------------------------------------- error bodies

export const StandardErrorBody = z.object({ error: z.string(), code: z.string().optional() });
export const ValidationErrorBody = z.object({
  error: z.string(),
  details: z.array(z.object({ field: z.string(), message: z.string() })),
});
export type ValidationErrorBody = z.infer<typeof ValidationErrorBody>;
export const TrackingFailureBody = z.object({
  error: z.string(),
  errorCode: z.string(),
  errorMessage: z.string(),
});

/** The machine-readable code the spec names for courier-related failures. */
export const COURIER_ERROR_CODE = 'COURIER_ERROR';

/** Dotted path of a zod issue, as the validation error body names fields (e.g. `service.productCode`). */
export function dottedPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out === '' ? '(root)' : out;
}

export interface FieldProblem {
  field: string;
  message: string;
}

/** Every issue of a failed parse as {field, message}, the shape of the validation error body. */
export function fieldProblems(error: z.ZodError, prefix: ReadonlyArray<PropertyKey> = []): FieldProblem[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: dottedPath([...prefix, ...issue.path, key]), message: 'unknown field' }))
      : [{ field: dottedPath([...prefix, ...issue.path]), message: issue.message }],
  );
}
