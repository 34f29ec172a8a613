// The workflow bundle's entry: every workflow the worker runs.
export { shipmentWorkflow } from './shipment';
export { shippingAccountWorkflow } from './account';
export { shopPullWorkflow } from './shop-pull';
export { trackingPollerWorkflow } from './tracking-poller';
export { attentionResolutionWorkflow } from './attention-resolution';
// Their versioning behaviors, set before any of them runs.
import './versioning';
