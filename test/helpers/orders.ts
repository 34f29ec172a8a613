/** Label data for tests: a realistic DE→DE parcel; markers steer the fake's tracking ending. */
import type { LabelRequestWithoutKey } from '../../shipping-api/contract';
import type { ShipmentInput } from '../../workflows/definitions';

export interface OrderOptions {
  /** Goes into customerOrderNumber: "EXCEPTION", "CANCEL" or "STALL" steer the fake's tracking. */
  marker?: string;
  /** "00000" makes the fake's courier reject the label. */
  postalCode?: string;
  courier?: string;
  productCode?: string;
}

export function labelRequest(orderId: string, o: OrderOptions = {}): LabelRequestWithoutKey {
  return {
    courier: o.courier ?? 'dhl-express',
    service: { productCode: o.productCode ?? 'EXPRESS_WORLDWIDE' },
    shipment: {
      shipFrom: {
        contact: { firstName: 'Lena', lastName: 'Vogel', phone: '+49 30 1234567', email: 'shipping@example-shop.test' },
        address: { streetLines: ['Lagerstr. 5'], city: 'Berlin', postalCode: '10115', countryCode: 'DE' },
      },
      shipTo: {
        contact: { firstName: 'Jonas', lastName: 'Becker', email: 'jonas@example.test' },
        address: { streetLines: ['Hauptstr. 12'], city: 'Hamburg', postalCode: o.postalCode ?? '20095', countryCode: 'DE' },
      },
      parcels: [
        {
          weight: 1.2,
          dimension: { length: 30, width: 20, height: 10 },
          items: [{ descriptionEn: 'Ceramic mug', quantity: 2, unitPrice: { amount: 14.9, currency: 'EUR' }, unitWeight: 0.5 }],
        },
      ],
    },
    units: { weight: 'kg', dimension: 'cm' },
    order: { customerOrderNumber: `${orderId}${o.marker ? `-${o.marker}` : ''}` },
  };
}

export function order(shop: string, orderId: string, o: OrderOptions = {}, tracking?: ShipmentInput['tracking']): ShipmentInput {
  return { shop, orderId, labelRequest: labelRequest(orderId, o), ...(tracking ? { tracking } : {}) };
}
