// The shipment workflow: `workflow.ts` reads as the process; the rest of this folder is its parts.
export { shipmentWorkflow } from './workflow';
export type { CarriedState } from './shell';
export { pollIntervalOf } from './state';
