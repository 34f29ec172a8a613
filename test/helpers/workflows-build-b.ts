/**
 * A test-only workflow bundle entry: today's workflows, except that a shipment first sleeps a
 * moment before its label. A change no running shipment's history replays (its first command is
 * a timer where theirs is the label's activity): the rollout test's build B.
 */
import { setWorkflowOptions, sleep } from '@temporalio/workflow';
import { shipmentWorkflow as released } from '../../workflows/shipment';
import { versioned } from '../../workflows/versioning';

export { shippingAccountWorkflow, shopPullWorkflow, trackingPollerWorkflow } from '../../workflows';

export async function shipmentWorkflow(...args: Parameters<typeof released>): ReturnType<typeof released> {
  await sleep(1);
  return released(...args);
}
setWorkflowOptions(versioned('PINNED'), shipmentWorkflow);
