/**
 * The root value: Query fields read the store (only what the app may see, the 60-day window
 * included), Mutation fields run the mutations and report the ones that changed something.
 */
import { GraphQLError } from 'graphql';
import { SHOP } from './defaults';
import { fulfillmentCreate, type FulfillmentInput } from './fulfil';
import { fulfillmentOrderMove, type MoveLineInput } from './fo-move';
import { parseGid, type OrderRecord } from './model';
import {
  fulfillmentEventCreate,
  fulfillmentTrackingInfoUpdate,
  orderUpdate,
  tagsAdd,
  type FulfillmentEventInput,
  type OrderInput,
} from './mutations';
import type { TrackingInput } from './carriers';
import { eventNode, fulfillmentNode, fulfillmentOrderNode, locationNode, orderNode } from './nodes';
import { idNumber, paginate, type PageArgs, type SortKey } from './paging';
import { matches, parseSearch } from './search';
import type { Store } from './store';

export interface ExecContext {
  store: Store;
  shopName: string;
  /** Counts a mutation that changed the store (stats.mutationsApplied). */
  applied(name: string): void;
}

type Obj = Record<string, unknown>;

/** Shopify rejects an id that is not a global id instead of answering null. */
function globalId(raw: string): string {
  if (!parseGid(raw))
    throw new GraphQLError(`Invalid global id '${raw}'`, {
      extensions: { code: 'argumentLiteralsIncompatible', typeName: 'CoercionError' },
    });
  return raw.replace(/\?.*$/, '');
}

function orderSortKey(sortKey: string | null | undefined): (o: OrderRecord) => SortKey {
  const id = (o: OrderRecord) => idNumber(o.id);
  switch (sortKey) {
    case 'CREATED_AT':
    case 'PROCESSED_AT':
      return (o) => ({ value: o.createdAt, id: id(o) });
    case 'UPDATED_AT':
      return (o) => ({ value: o.updatedAt, id: id(o) });
    case 'ORDER_NUMBER':
      return (o) => ({ value: Number(o.name.replace(/\D/g, '')) || 0, id: id(o) });
    default:
      return (o) => ({ value: 0, id: id(o) });
  }
}

function orders(store: Store, args: PageArgs & { query?: string | null; sortKey?: string | null }): unknown {
  const search = args.query ? parseSearch(args.query) : null;
  const rows = store.all().filter((o) => store.visible(o) && (search === null || matches(search, o)));
  return paginate(rows, orderSortKey(args.sortKey), args, (o) => orderNode(store, o));
}

function node(store: Store, id: string): Obj | null {
  const found = store.node(globalId(id));
  if (!found) return locationNode(id);
  const { type, record } = found;
  if (type === 'Order') return orderNode(store, record as OrderRecord);
  if (type === 'FulfillmentOrder') return fulfillmentOrderNode(store, record as Parameters<typeof fulfillmentOrderNode>[1]);
  return fulfillmentNode(store, record as Parameters<typeof fulfillmentNode>[1]);
}

const queries = {
  shop: (_: unknown, ctx: ExecContext) => ({ __typename: 'Shop', id: 'gid://shopify/Shop/1', name: ctx.shopName, ...SHOP }),
  node: ({ id }: { id: string }, ctx: ExecContext) => node(ctx.store, id),
  order: ({ id }: { id: string }, { store }: ExecContext) => {
    const o = store.order(globalId(id));
    return o ? orderNode(store, o) : null;
  },
  orders: (args: PageArgs & { query?: string | null; sortKey?: string | null }, { store }: ExecContext) => orders(store, args),
  fulfillment: ({ id }: { id: string }, { store }: ExecContext) => {
    const f = store.fulfillment(globalId(id));
    return f ? fulfillmentNode(store, f) : null;
  },
  fulfillmentOrder: ({ id }: { id: string }, { store }: ExecContext) => {
    const fo = store.fulfillmentOrder(globalId(id));
    return fo ? fulfillmentOrderNode(store, fo) : null;
  },
  location: ({ id }: { id?: string | null }) => locationNode(id == null ? 'gid://shopify/Location/1' : globalId(id)),
};

/** Runs a mutation and counts it when it answered without userErrors. */
function counted<T extends { userErrors: unknown[] }>(ctx: ExecContext, name: string, result: T): T {
  if (result.userErrors.length === 0) ctx.applied(name);
  return result;
}

const mutations = {
  fulfillmentCreate: ({ fulfillment }: { fulfillment: FulfillmentInput }, ctx: ExecContext) => {
    for (const group of fulfillment.lineItemsByFulfillmentOrder) {
      globalId(group.fulfillmentOrderId);
      for (const line of group.fulfillmentOrderLineItems ?? []) globalId(line.id);
    }
    const r = counted(ctx, 'fulfillmentCreate', fulfillmentCreate(ctx.store, fulfillment));
    return { ...r, fulfillment: r.fulfillment && fulfillmentNode(ctx.store, r.fulfillment) };
  },
  fulfillmentTrackingInfoUpdate: (
    args: { fulfillmentId: string; trackingInfoInput: TrackingInput; notifyCustomer?: boolean | null },
    ctx: ExecContext,
  ) => {
    const result = fulfillmentTrackingInfoUpdate(ctx.store, globalId(args.fulfillmentId), args.trackingInfoInput, args.notifyCustomer);
    const r = counted(ctx, 'fulfillmentTrackingInfoUpdate', result);
    return { ...r, fulfillment: r.fulfillment && fulfillmentNode(ctx.store, r.fulfillment) };
  },
  fulfillmentEventCreate: ({ fulfillmentEvent }: { fulfillmentEvent: FulfillmentEventInput }, ctx: ExecContext) => {
    const input = { ...fulfillmentEvent, fulfillmentId: globalId(fulfillmentEvent.fulfillmentId) };
    const r = counted(ctx, 'fulfillmentEventCreate', fulfillmentEventCreate(ctx.store, input));
    return { ...r, fulfillmentEvent: r.fulfillmentEvent && eventNode(r.fulfillmentEvent) };
  },
  tagsAdd: ({ id, tags }: { id: string; tags: string[] }, ctx: ExecContext) => {
    const r = counted(ctx, 'tagsAdd', tagsAdd(ctx.store, globalId(id), tags));
    return { ...r, node: r.node && orderNode(ctx.store, r.node) };
  },
  fulfillmentOrderMove: (
    args: { id: string; newLocationId: string; fulfillmentOrderLineItems?: MoveLineInput[] | null },
    ctx: ExecContext,
  ) => {
    const lines = args.fulfillmentOrderLineItems?.map((l) => ({ ...l, id: globalId(l.id) }));
    const r = counted(ctx, 'fulfillmentOrderMove', fulfillmentOrderMove(ctx.store, globalId(args.id), globalId(args.newLocationId), lines));
    const fo = (record: typeof r.movedFulfillmentOrder) => record && fulfillmentOrderNode(ctx.store, record);
    return { ...r, movedFulfillmentOrder: fo(r.movedFulfillmentOrder), originalFulfillmentOrder: fo(r.originalFulfillmentOrder) };
  },
  orderUpdate: ({ input }: { input: OrderInput }, ctx: ExecContext) => {
    const r = counted(ctx, 'orderUpdate', orderUpdate(ctx.store, { ...input, id: globalId(input.id) }));
    return { ...r, order: r.order && orderNode(ctx.store, r.order) };
  },
};

export const ROOT_VALUE = { ...queries, ...mutations };
