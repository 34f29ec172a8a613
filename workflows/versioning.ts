/**
 * Each workflow type's Worker Deployment Versioning behavior (docs/production.md, "Rolling out a
 * new build", says why). Only versioned workers (WORKER_VERSIONING=on) report it: Temporal
 * 1.29.1 gives an unversioned worker's task that names a behavior no progress (tried: the
 * shipment tests time out), so the behavior is named only where the task ran on a version.
 *
 * PINNED: a run finishes on the build that started it, so a new build may change its code freely
 * (no patch): shipments (their label, order and tracking steps), shop pulls (minutes long) and
 * attention resolutions (one task).
 * AUTO_UPGRADE: the run moves to the current build at its next task, so its code changes still
 * need patched(): the tracking pollers and account pacers never end, and pinned they would hold
 * their build forever.
 */
import type { WorkflowDefinitionOptions } from '@temporalio/common';
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { shipmentWorkflow } from './shipment';
import { shippingAccountWorkflow } from './account';
import { shopPullWorkflow } from './shop-pull';
import { trackingPollerWorkflow } from './tracking-poller';
import { attentionResolutionWorkflow } from './attention-resolution';

/** The options of a type with `behavior`, for a versioned worker; none for an unversioned one. */
export function versioned(behavior: 'PINNED' | 'AUTO_UPGRADE'): () => WorkflowDefinitionOptions {
  // An unversioned worker's task names a build id too, but no deployment.
  return () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: behavior } : {});
}

setWorkflowOptions(versioned('PINNED'), shipmentWorkflow);
setWorkflowOptions(versioned('PINNED'), shopPullWorkflow);
setWorkflowOptions(versioned('PINNED'), attentionResolutionWorkflow);
setWorkflowOptions(versioned('AUTO_UPGRADE'), trackingPollerWorkflow);
setWorkflowOptions(versioned('AUTO_UPGRADE'), shippingAccountWorkflow);
