/**
 * Each workflow type's Worker Deployment Versioning behavior (docs/production.md, "Rolling out a
 * new build", says why). Only versioned workers (WORKER_VERSIONING=on) report it.
 *
 * PINNED: a run finishes on the build that started it, so a new build may change its code freely
 * (no patch): shipments (their label, order and tracking steps) and shop pulls (minutes long).
 * AUTO_UPGRADE: the run moves to the current build at its next task, so its code changes still
 * need patched(): the tracking pollers and account pacers never end, and pinned they would hold
 * their build forever.
 */
import { setWorkflowOptions } from '@temporalio/workflow';
import { shipmentWorkflow } from './shipment';
import { shippingAccountWorkflow } from './account';
import { shopPullWorkflow } from './shop-pull';
import { trackingPollerWorkflow } from './tracking-poller';

setWorkflowOptions({ versioningBehavior: 'PINNED' }, shipmentWorkflow);
setWorkflowOptions({ versioningBehavior: 'PINNED' }, shopPullWorkflow);
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, trackingPollerWorkflow);
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, shippingAccountWorkflow);
