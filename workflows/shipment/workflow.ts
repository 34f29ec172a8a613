/**
 * One durable workflow per shop order: create the label once, read the order, then follow
 * tracking until a terminal tag, telling the shop every change. Deterministic: every call to the
 * outside is an activity, time comes from the SDK's deterministic clock.
 */
import type { ShipmentOutcome } from '../../workflow-definitions/shipment';
import type { ShipmentInput } from '../../domain/shipment';
import { registerHandlers } from './handlers';
import { consultShieldingFlag } from './sdk-flags';
import { ShipmentRun } from './run';
import type { CarriedState, ShipmentWorkflowFn } from './shell';
import { shipSplitOrder } from './split-order';

export async function shipmentWorkflow(input: ShipmentInput, carried?: CarriedState): Promise<ShipmentOutcome> {
  // An order shipping from several locations: one parcel workflow each (a pull sets `parcels`).
  if (input.parcels) return await shipSplitOrder({ ...input, parcels: input.parcels });
  // Before anything a query could interleave with: a cancellation's hand-over replays as it ran (sdk-flags.ts).
  consultShieldingFlag();
  const run = new ShipmentRun(input, carried);
  registerHandlers(run);
  try {
    // The worker's policy, the shipment's account and its shop sync.
    await run.start();
    // Label, order, tracking.
    const outcome = await run.ship();
    // The shop's last events, the update handlers' answers, and the result.
    return await run.complete(outcome);
  } finally {
    // Search attributes are written once the task settles (published.ts): what is left goes before the run ends.
    run.flushPublished();
  }
}

// The run continues as new into, and an order starts its parcels with, the signature shell.ts names: it must stay this one's.
const _signature: ShipmentWorkflowFn = shipmentWorkflow;
