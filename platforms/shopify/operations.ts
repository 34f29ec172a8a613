/**
 * The GraphQL the Shopify connector sends (Admin API 2026-10), each with the zod schema of what
 * it reads back. Reads come before writes whose answer may have been lost: an order's
 * fulfillments and open fulfillment orders, a fulfillment's tracking and events.
 */
import { z } from 'zod';
import type { Operation } from './client';

const UserErrors = z.array(z.object({ field: z.array(z.string()).nullable().optional(), message: z.string() })).max(50);
export type UserErrors = z.infer<typeof UserErrors>;

const TrackingInfo = z.object({ company: z.string().nullable(), number: z.string().nullable(), url: z.string().nullable() });

const FulfillmentSummary = z.object({
  id: z.string(),
  status: z.string(),
  trackingInfo: z.array(TrackingInfo).max(50),
});
export type FulfillmentSummary = z.infer<typeof FulfillmentSummary>;

/** OPEN and IN_PROGRESS have lines left to fulfil (CLOSED once none is), so lines need not be read. */
const FulfillmentOrder = z.object({
  id: z.string(),
  status: z.string(),
  assignedLocation: z.object({ location: z.object({ id: z.string() }).nullable() }),
});
export type FulfillmentOrder = z.infer<typeof FulfillmentOrder>;

const FulfillmentOrderPage = z.object({
  pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().max(1000).nullable().optional() }),
  nodes: z.array(FulfillmentOrder).max(50),
});
type FulfillmentOrderPage = z.infer<typeof FulfillmentOrderPage>;

/**
 * Kept under 40 requested points (37 on the fake's cost rules), a development store's whole
 * bucket: a query that costs more than the bucket holds is throttled for ever. 4 fulfillment
 * orders (one per location), 5 fulfillments.
 */
export const readOrder: Operation<{
  order: null | {
    id: string;
    tags: string[];
    note: string | null;
    fulfillments: FulfillmentSummary[];
    fulfillmentOrders: FulfillmentOrderPage;
  };
}> = {
  name: 'order',
  estimatedCost: 37,
  document: `query ShipmentOrder($id: ID!) {
  order(id: $id) {
    id
    tags
    note
    fulfillments(first: 5) { id status trackingInfo(first: 1) { company number url } }
    fulfillmentOrders(first: 4) { pageInfo { hasNextPage endCursor } nodes { id status assignedLocation { location { id } } } }
  }
}`,
  data: z.object({
    order: z
      .object({
        id: z.string(),
        tags: z.array(z.string()).max(250),
        note: z.string().nullable(),
        fulfillments: z.array(FulfillmentSummary).max(250),
        fulfillmentOrders: FulfillmentOrderPage,
      })
      .nullable(),
  }),
};

/** The order's further fulfillment orders, after readOrder's first 4 (about 32 points a page). */
export const readFulfillmentOrders: Operation<{ order: null | { fulfillmentOrders: FulfillmentOrderPage } }> = {
  name: 'orderFulfillmentOrders',
  estimatedCost: 32,
  document: `query ShipmentOrderFulfillmentOrders($id: ID!, $after: String) {
  order(id: $id) {
    fulfillmentOrders(first: 10, after: $after) { pageInfo { hasNextPage endCursor } nodes { id status assignedLocation { location { id } } } }
  }
}`,
  data: z.object({ order: z.object({ fulfillmentOrders: FulfillmentOrderPage }).nullable() }),
};

/**
 * Where the order's fulfillments were made (13 points): read only to tell a split order's parcels'
 * fulfillments apart when neither carries a tracking number (write-back.ts findOurs).
 */
export const readFulfillmentLocations: Operation<{
  order: null | { fulfillments: Array<{ id: string; location: { id: string } | null }> };
}> = {
  name: 'orderFulfillmentLocations',
  estimatedCost: 13,
  document: `query ShipmentFulfillmentLocations($id: ID!) {
  order(id: $id) {
    fulfillments(first: 5) { id location { id } }
  }
}`,
  data: z.object({
    order: z
      .object({
        fulfillments: z.array(z.object({ id: z.string(), location: z.object({ id: z.string() }).nullable() })).max(250),
      })
      .nullable(),
  }),
};

const FulfillmentEvent = z.object({ status: z.string(), happenedAt: z.string().nullable() });
export type FulfillmentEvent = z.infer<typeof FulfillmentEvent>;

/** The newest 10 events are enough: a repeat is of a recent one, DELIVERED and the newest time are among them. */
export const readFulfillment: Operation<{
  fulfillment: null | {
    id: string;
    status: string;
    createdAt: string;
    trackingInfo: z.infer<typeof TrackingInfo>[];
    events: { nodes: FulfillmentEvent[] };
  };
}> = {
  name: 'fulfillment',
  estimatedCost: 17,
  document: `query ShipmentFulfillment($id: ID!) {
  fulfillment(id: $id) {
    id
    status
    createdAt
    trackingInfo(first: 2) { company number url }
    events(first: 10, sortKey: HAPPENED_AT, reverse: true) { nodes { status happenedAt } }
  }
}`,
  data: z.object({
    fulfillment: z
      .object({
        id: z.string(),
        status: z.string(),
        createdAt: z.iso.datetime({ offset: true }),
        trackingInfo: z.array(TrackingInfo).max(50),
        events: z.object({ nodes: z.array(FulfillmentEvent).max(250) }),
      })
      .nullable(),
  }),
};

export const fulfillmentCreate: Operation<{ fulfillmentCreate: { fulfillment: { id: string } | null; userErrors: UserErrors } | null }> = {
  name: 'fulfillmentCreate',
  estimatedCost: 12,
  document: `mutation ShipmentFulfillmentCreate($fulfillment: FulfillmentInput!) {
  fulfillmentCreate(fulfillment: $fulfillment) { fulfillment { id } userErrors { field message } }
}`,
  data: z.object({
    fulfillmentCreate: z.object({ fulfillment: z.object({ id: z.string() }).nullable(), userErrors: UserErrors }).nullable(),
  }),
};

export const fulfillmentTrackingInfoUpdate: Operation<{
  fulfillmentTrackingInfoUpdate: { fulfillment: { id: string } | null; userErrors: UserErrors } | null;
}> = {
  name: 'fulfillmentTrackingInfoUpdate',
  estimatedCost: 12,
  document: `mutation ShipmentTrackingUpdate($fulfillmentId: ID!, $trackingInfoInput: FulfillmentTrackingInput!, $notifyCustomer: Boolean) {
  fulfillmentTrackingInfoUpdate(fulfillmentId: $fulfillmentId, trackingInfoInput: $trackingInfoInput, notifyCustomer: $notifyCustomer) {
    fulfillment { id }
    userErrors { field message }
  }
}`,
  data: z.object({
    fulfillmentTrackingInfoUpdate: z.object({ fulfillment: z.object({ id: z.string() }).nullable(), userErrors: UserErrors }).nullable(),
  }),
};

export const fulfillmentEventCreate: Operation<{
  fulfillmentEventCreate: { fulfillmentEvent: { id: string } | null; userErrors: UserErrors } | null;
}> = {
  name: 'fulfillmentEventCreate',
  estimatedCost: 12,
  document: `mutation ShipmentFulfillmentEvent($fulfillmentEvent: FulfillmentEventInput!) {
  fulfillmentEventCreate(fulfillmentEvent: $fulfillmentEvent) { fulfillmentEvent { id } userErrors { field message } }
}`,
  data: z.object({
    fulfillmentEventCreate: z.object({ fulfillmentEvent: z.object({ id: z.string() }).nullable(), userErrors: UserErrors }).nullable(),
  }),
};

export const tagsAdd: Operation<{ tagsAdd: { userErrors: UserErrors } | null }> = {
  name: 'tagsAdd',
  estimatedCost: 11,
  document: `mutation ShipmentOrderTag($id: ID!, $tags: [String!]!) {
  tagsAdd(id: $id, tags: $tags) { userErrors { field message } }
}`,
  data: z.object({ tagsAdd: z.object({ userErrors: UserErrors }).nullable() }),
};

export const orderNoteUpdate: Operation<{ orderUpdate: { userErrors: UserErrors } | null }> = {
  name: 'orderUpdate',
  estimatedCost: 11,
  document: `mutation ShipmentOrderNote($input: OrderInput!) {
  orderUpdate(input: $input) { userErrors { field message } }
}`,
  data: z.object({ orderUpdate: z.object({ userErrors: UserErrors }).nullable() }),
};
