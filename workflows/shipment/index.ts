// The shipment workflow: `workflow.ts` reads as the process; the rest of this folder is its parts.
export { shipmentWorkflow } from './workflow';
export type { CarriedState } from './run';
export { CHANGE_DRIVEN_TRACKING, FIRST_DELIVERY_HANDS_OVER, SHOP_SYNC } from './patches';
export { pollIntervalOf } from './state';
