/** Shop orders for workflow tests: markers steer the fake's tracking ending. */
import type { LabelRequestWithoutKey } from '../../shipping-api/contract';
import { sampleLabelRequest } from './api';
import type { ShipmentInput } from '../../domain/shipment';

export interface OrderOptions {
  /** Goes into customerOrderNumber: "EXCEPTION", "CANCEL" or "STALL" steer the fake's tracking. */
  marker?: string;
  /** "00000" makes the fake's courier reject the label. */
  postalCode?: string;
  courier?: string;
  productCode?: string;
}

export function labelRequest(orderId: string, o: OrderOptions = {}): LabelRequestWithoutKey {
  const { idempotencyKey: _key, ...base } = sampleLabelRequest();
  const shipTo = base.shipment.shipTo!;
  return {
    ...base,
    courier: o.courier ?? base.courier,
    service: { productCode: o.productCode ?? base.service.productCode },
    shipment: {
      ...base.shipment,
      shipTo: { ...shipTo, address: { ...shipTo.address, postalCode: o.postalCode ?? shipTo.address!.postalCode } },
    },
    order: { customerOrderNumber: `${orderId}${o.marker ? `-${o.marker}` : ''}` },
  };
}

export function order(shop: string, orderId: string, o: OrderOptions = {}, tracking?: ShipmentInput['tracking']): ShipmentInput {
  return { shop, orderId, labelRequest: labelRequest(orderId, o), ...(tracking ? { tracking } : {}) };
}
