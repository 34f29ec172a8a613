/** FakeOrderView: a deep copy of an order as tests and the admin routes see it. */
import { displayFulfillmentStatus } from './fo-state';
import type { OrderRecord } from './model';
import { totalGrams } from './nodes';
import type { FakeOrderView } from './types';

export function orderView(o: OrderRecord, visible: boolean): FakeOrderView {
  return {
    id: o.id,
    legacyResourceId: o.legacyResourceId,
    name: o.name,
    email: o.email,
    tags: [...o.tags],
    note: o.note,
    updatedAt: o.updatedAt,
    createdAt: o.createdAt,
    displayFulfillmentStatus: displayFulfillmentStatus(o),
    financialStatus: o.financialStatus,
    currency: o.currency,
    closed: o.closed,
    closedAt: o.closedAt,
    cancelledAt: o.cancelledAt,
    totalWeight: totalGrams(o),
    shippingLine: o.shippingLine && { title: o.shippingLine.title, code: o.shippingLine.code, price: o.shippingLine.price },
    shippingAddress: { ...o.shippingAddress },
    visible,
    fulfillmentOrders: o.fulfillmentOrders.map((fo) => ({
      id: fo.id,
      status: fo.status,
      locationId: fo.locationId,
      deliveryMethod: fo.deliveryMethod,
      updatedAt: fo.updatedAt,
      lineItems: fo.lines.map((l) => ({
        id: l.id,
        sku: l.lineItem.sku,
        totalQuantity: l.totalQuantity,
        remainingQuantity: l.remainingQuantity,
      })),
    })),
    fulfillments: o.fulfillments.map((f) => ({
      id: f.id,
      name: f.name,
      locationId: f.locationId,
      status: f.status,
      createdAt: f.createdAt,
      updatedAt: f.updatedAt,
      displayStatus: f.displayStatus,
      deliveredAt: f.deliveredAt,
      notifyCustomer: f.notifyCustomer,
      trackingInfo: f.tracking.map((t) => ({ ...t })),
      events: f.events.map((e) => ({
        id: e.id,
        status: e.status,
        happenedAt: e.happenedAt,
        message: e.message,
        city: e.city,
        province: e.province,
        country: e.country,
        zip: e.zip,
        address1: e.address1,
      })),
    })),
  };
}
