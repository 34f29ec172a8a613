export { trackingPollerWorkflow } from './workflow';
