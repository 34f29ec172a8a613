/**
 * The shipment events a shop receives, written once as zod schemas: the sender validates what
 * it sends with them, the reference receiver validates what it gets, and
 * docs/shipment-event.schema.json is generated from them (npm run shop-sync:schema).
 *
 * Objects are not strict: a receiver must ignore fields it does not know, so fields can be
 * added within version 1 without breaking anyone. Removing or renaming one is a new version.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { Checkpoint, ExternalId, fieldProblems } from '../shipping-api/contract';

// ---------------------------------------------------------------- the event id

export const EVENT_ID_PATTERN = /^evt_[0-9a-f]{32}$/;

/**
 * The id of one shipment event: `evt_` + the first 32 hex characters of
 * sha256(shop + "\u0000" + orderId + "\u0000" + sequence), and for one parcel of an order that
 * ships from several locations + "\u0000" + its location.
 *
 * A pure function of (shop, orderId, sequence), so every retry, worker crash, reset or
 * continue-as-new that re-sends event N of an order sends the same id, and the receiver can
 * de-duplicate on it (it is also the `webhook-id` header).
 *
 * Unambiguous by construction: shop and order ids are ExternalIds (no control characters, so no
 * NUL; checked here and by the event schema) and the sequence is digits only, so each NUL is a
 * separator. ("a\u0000b", "c") is therefore refused rather than colliding with ("a", "b\u0000c").
 */
export function shipmentEventId({
  shop,
  orderId,
  sequence,
  parcel,
}: {
  shop: string;
  orderId: string;
  sequence: number;
  parcel?: { location: string };
}): string {
  for (const [field, value] of [
    ['shop', shop],
    ['orderId', orderId],
  ] as const) {
    const id = ExternalId.safeParse(value);
    if (!id.success) throw new Error(`shipmentEventId: ${field} ${id.error.issues[0]!.message}`);
  }
  if (!Number.isSafeInteger(sequence) || sequence < 1)
    throw new Error(`shipmentEventId: sequence must be an integer >= 1 (got ${sequence})`);
  // A parcel's events are numbered per parcel: its location keeps their ids apart from its siblings'.
  const location = parcel === undefined ? '' : `\u0000${parcel.location}`;
  const digest = createHash('sha256').update(`${shop}\u0000${orderId}\u0000${sequence}${location}`, 'utf8').digest('hex');
  return `evt_${digest.slice(0, 32)}`;
}

// ---------------------------------------------------------------- data of each type

const nullableString = z.string().nullable();

export const LabelCreatedData = z.object({
  labelId: z.string().min(1).meta({ description: 'Id of the label at the shipping API.' }),
  revision: z.number().int().min(1).meta({ description: 'Label revision: 1 for the first label, +1 per operator correction.' }),
  courier: z.string().min(1),
  customerOrderNumber: z.string(),
  courierOrderNumber: nullableString,
  trackingNumber: nullableString,
  labelUrl: nullableString.meta({ description: 'Link to the label document; may be null until the carrier provides it.' }),
  replaces: z
    .object({ labelId: z.string().min(1), revision: z.number().int().min(1), trackingNumber: nullableString })
    .optional()
    .meta({
      description:
        "Set when this label replaces the order's earlier label (an operator relabelled it to the address the shop has now): the earlier label is not voided, its tracking is no longer followed; show this label's tracking instead.",
    }),
});
export type LabelCreatedData = z.infer<typeof LabelCreatedData>;

export const LabelRejectedData = z.object({
  revision: z.number().int().min(1).meta({ description: 'The revision of the label data that was rejected.' }),
  kind: z.string().min(1).meta({ description: 'Error kind, e.g. courier_error or validation (an open set).' }),
  courierCode: nullableString,
  courierMessage: nullableString.meta({ description: "The carrier's wording, verbatim." }),
  message: z.string(),
  fields: z
    .array(z.object({ field: z.string(), message: z.string() }))
    .optional()
    .meta({ description: 'The label request fields the shipping API named, when it named any.' }),
  awaitingCorrection: z
    .literal(true)
    .meta({ description: 'The order waits for an operator to correct the label data; a label.created of a higher revision may follow.' }),
});
export type LabelRejectedData = z.infer<typeof LabelRejectedData>;

/** The last checkpoint as the shipping API reports it: a subset of its Checkpoint, not a copy. */
export const LastCheckpoint = Checkpoint.pick({
  checkpointTime: true,
  location: true,
  city: true,
  countryRegion: true,
  message: true,
  tag: true,
  subtag: true,
});
export type LastCheckpoint = z.infer<typeof LastCheckpoint>;

export const TrackingUpdatedData = z.object({
  tag: z
    .string()
    .meta({ description: 'Tracking tag, an open set: Pending, InfoReceived, InTransit, Delivered, Exception, Cancelled, ...' }),
  subtag: nullableString,
  subtagMessage: nullableString,
  trackingNumber: nullableString,
  lastCheckpoint: LastCheckpoint.nullable(),
});
export type TrackingUpdatedData = z.infer<typeof TrackingUpdatedData>;

export const Outcome = z.enum([
  'delivered',
  'exception',
  'cancelled',
  'ended_on_tag',
  'label_failed',
  'cancelled_by_operator',
  'tracking_timed_out',
  'cancelled_in_shop',
  'hold_timed_out',
]);
export type Outcome = z.infer<typeof Outcome>;

export const ShipmentCompletedData = z.object({
  outcome: Outcome,
  reason: nullableString.meta({ description: "Human-readable detail, e.g. the operator's reason or the timeout." }),
  tag: nullableString.meta({ description: 'The last tracking tag, when tracking started.' }),
  trackingNumber: nullableString,
});
export type ShipmentCompletedData = z.infer<typeof ShipmentCompletedData>;

// ---------------------------------------------------------------- the envelope

const envelope = {
  id: z.string().regex(EVENT_ID_PATTERN, 'must be evt_ followed by 32 lowercase hex characters').meta({
    description: 'Unique per event and the same on every retry (equals the webhook-id header): the de-duplication key.',
  }),
  sequence: z.number().int().min(1).meta({ description: 'Per order: 1, 2, 3, ... in the order the events happened.' }),
  occurredAt: z.iso.datetime({ offset: true }),
  shop: ExternalId,
  orderId: ExternalId,
  parcel: z
    .object({ location: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), name: z.string().min(1).max(200) })
    .optional()
    .meta({
      description:
        "Only for an order that ships from several locations (Shopify): the parcel this event is about, by the platform's location id and name. Its events are numbered per parcel.",
    }),
};

export const LabelCreatedEvent = z.object({ ...envelope, type: z.literal('label.created'), data: LabelCreatedData });
export const LabelRejectedEvent = z.object({ ...envelope, type: z.literal('label.rejected'), data: LabelRejectedData });
export const TrackingUpdatedEvent = z.object({ ...envelope, type: z.literal('tracking.updated'), data: TrackingUpdatedData });
export const ShipmentCompletedEvent = z.object({ ...envelope, type: z.literal('shipment.completed'), data: ShipmentCompletedData });

export const ShipmentEvent = z
  .discriminatedUnion('type', [LabelCreatedEvent, LabelRejectedEvent, TrackingUpdatedEvent, ShipmentCompletedEvent])
  .meta({
    title: 'Shipment event',
    description: 'One event of a shop order shipment, as POSTed to the shop webhook (Standard Webhooks v1).',
  });
export type ShipmentEvent = z.infer<typeof ShipmentEvent>;
export type LabelCreatedEvent = z.infer<typeof LabelCreatedEvent>;
export type LabelRejectedEvent = z.infer<typeof LabelRejectedEvent>;
export type TrackingUpdatedEvent = z.infer<typeof TrackingUpdatedEvent>;
export type ShipmentCompletedEvent = z.infer<typeof ShipmentCompletedEvent>;

export type ShipmentEventType = ShipmentEvent['type'];
export const SHIPMENT_EVENT_TYPES: readonly ShipmentEventType[] = ShipmentEvent.options.map((o) => o.shape.type.value);

/** The input of makeShipmentEvent: an event without its id, which is derived. */
export type ShipmentEventInput = ShipmentEvent extends infer E ? (E extends ShipmentEvent ? Omit<E, 'id'> : never) : never;

/**
 * Builds an event with its derived id and validates it: throws (naming the field) when it
 * breaks the schema, so an invalid event is never sent.
 */
export function makeShipmentEvent(input: ShipmentEventInput): ShipmentEvent {
  const id = shipmentEventId(input);
  const parsed = ShipmentEvent.safeParse({ ...input, id });
  if (!parsed.success) {
    const problems = fieldProblems(parsed.error)
      .map((p) => `${p.field}: ${p.message}`)
      .join('; ');
    throw new Error(`makeShipmentEvent: invalid ${input.type} event: ${problems}`);
  }
  return parsed.data;
}
