/**
 * GraphQL objects built from the store's records. Fields with arguments are functions, which
 * graphql-js's default resolver calls with the arguments; `__typename` lets Node resolve.
 */
import { DEFAULT_ADDRESS, LOCATIONS } from './defaults';
import { displayFulfillmentStatus } from './fo-state';
import { gid, type EventRecord, type FoLineRecord, type FulfillmentOrderRecord, type FulfillmentRecord, type OrderRecord } from './model';
import { idNumber, paginate, type PageArgs } from './paging';
import type { Store } from './store';

type Obj = Record<string, unknown>;

const byId = (row: { id: string }) => ({ value: 0, id: idNumber(row.id) });

/**
 * A MoneyBag: the fake has no conversion, so shop and presentment money are the same. Decimal
 * amounts are two-place strings ("12.50"); whether Shopify's own answers drop trailing zeros
 * ("10.0") is unverified, so a client should read them as numbers, not compare strings.
 */
function moneyBag(amount: string, currencyCode: string): Obj {
  const money = { amount, currencyCode };
  return { shopMoney: money, presentmentMoney: money };
}

/** Order.totalWeight in grams (UnsignedInt64, a string as Shopify serialises it). */
export function totalGrams(o: OrderRecord): number {
  return Math.round(o.lineItems.reduce((sum, l) => sum + l.grams * l.quantity, 0));
}

function shippingLineNode(o: OrderRecord): Obj | null {
  const line = o.shippingLine;
  if (line === null) return null;
  const { id, title, code, price } = line;
  // source/carrierIdentifier: the fake's rates are the shop's own, not a carrier service's.
  return { id, title, code, source: 'shopify', carrierIdentifier: null, originalPriceSet: moneyBag(price, o.currency) };
}

export function locationNode(id: string): Obj | null {
  const location = LOCATIONS.find((l) => l.id === id);
  return location ? { __typename: 'Location', id, legacyResourceId: String(idNumber(id)), name: location.name } : null;
}

export function orderNode(store: Store, o: OrderRecord): Obj {
  return {
    ...o,
    __typename: 'Order',
    phone: o.shippingAddress.phone,
    processedAt: o.createdAt,
    displayFulfillmentStatus: displayFulfillmentStatus(o),
    displayFinancialStatus: o.financialStatus,
    currencyCode: o.currency,
    presentmentCurrencyCode: o.currency,
    totalWeight: String(totalGrams(o)),
    shippingLine: shippingLineNode(o),
    shippingAddress: {
      ...DEFAULT_ADDRESS,
      ...o.shippingAddress,
      id: gid('MailingAddress', o.legacyResourceId),
      province: null,
      country: null,
    },
    lineItems: (args: PageArgs) => paginate(o.lineItems, byId, args, (l) => lineItemNode(l, o.currency)),
    fulfillmentOrders: (args: PageArgs) => paginate(o.fulfillmentOrders, byId, args, (fo) => fulfillmentOrderNode(store, fo)),
    fulfillments: ({ first }: { first?: number | null }) =>
      (first == null ? o.fulfillments : o.fulfillments.slice(0, first)).map((f) => fulfillmentNode(store, f)),
  };
}

function lineItemNode(l: OrderRecord['lineItems'][number], currency: string): Obj {
  return {
    __typename: 'LineItem',
    id: l.id,
    name: l.title,
    title: l.title,
    quantity: l.quantity,
    sku: l.sku,
    requiresShipping: true,
    originalUnitPriceSet: moneyBag(l.price, currency),
  };
}

function foLineNode(l: FoLineRecord, currency: string): Obj {
  return {
    __typename: 'FulfillmentOrderLineItem',
    id: l.id,
    sku: l.lineItem.sku,
    productTitle: l.lineItem.title,
    totalQuantity: l.totalQuantity,
    remainingQuantity: l.remainingQuantity,
    weight: { unit: 'GRAMS', value: l.lineItem.grams },
    lineItem: lineItemNode(l.lineItem, currency),
  };
}

export function fulfillmentOrderNode(store: Store, fo: FulfillmentOrderRecord): Obj {
  const location = LOCATIONS.find((l) => l.id === fo.locationId)!;
  const order = store.order(fo.orderId)!;
  const a = order.shippingAddress;
  const n = idNumber(fo.id);
  return {
    __typename: 'FulfillmentOrder',
    id: fo.id,
    status: fo.status,
    requestStatus: 'UNSUBMITTED',
    createdAt: fo.createdAt,
    updatedAt: fo.updatedAt,
    orderId: fo.orderId,
    orderName: order.name,
    order: () => orderNode(store, order),
    assignedLocation: { ...location, province: null, address2: null, location: locationNode(location.id) },
    deliveryMethod: { __typename: 'DeliveryMethod', id: gid('DeliveryMethod', n), methodType: fo.deliveryMethod },
    destination: {
      ...a,
      __typename: 'FulfillmentOrderDestination',
      id: gid('FulfillmentOrderDestination', n),
      countryCode: a.countryCodeV2,
      email: order.email,
      province: a.provinceCode,
    },
    lineItems: (args: PageArgs) => paginate(fo.lines, byId, args, (l) => foLineNode(l, order.currency)),
  };
}

export function eventNode(e: EventRecord): Obj {
  return { ...e, __typename: 'FulfillmentEvent' };
}

export function fulfillmentNode(store: Store, f: FulfillmentRecord): Obj {
  const order = store.order(f.orderId)!;
  return {
    ...f,
    __typename: 'Fulfillment',
    totalQuantity: f.lines.reduce((sum, l) => sum + l.quantity, 0),
    requiresShipping: true,
    trackingInfo: ({ first }: { first?: number | null }) => (first == null ? f.tracking : f.tracking.slice(0, first)),
    events: (args: PageArgs & { sortKey?: string }) => {
      const key = args.sortKey === 'HAPPENED_AT' ? (e: EventRecord) => ({ value: e.happenedAt, id: idNumber(e.id) }) : byId;
      return paginate(f.events, key, args, eventNode);
    },
    order: () => orderNode(store, order),
    location: locationNode(f.locationId),
  };
}
