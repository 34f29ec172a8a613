/**
 * The shipment machine's state in a run continued as new. A run of this build carries it in its
 * continue-as-new input (`CarriedState.machine`): the machine holds what the workflow's state does
 * not (its wait and shop-event counters, the offer's sequence, the reading a mark was resolved
 * for), so rebuilding it would lose them. A run continued from a build before it (1.0, which
 * dropped the machine once tracking began) carries none: the machine is rebuilt from the
 * workflow's state, which is all that build kept once tracking began.
 */
import type { ShipmentState } from '../../workflow-definitions/shipment';
import type { TrackingPolicy } from '../../domain/shipment';
import type { ShipmentStart } from '../../domain/shipment-machine';
import type { LabelRequestWithoutKey } from '../../shipping-api/contract';
import type { CarriedState } from './shell';
import { snapshotOf } from './state';

/**
 * The machine's start for a run continued as new, when it carried no machine (the machine's own
 * constructor, `initialMachineState`, builds it: run.ts); null when it carried one.
 */
export function startOfCarried(carried: CarriedState): ShipmentStart<LabelRequestWithoutKey> | null {
  return carried.machine ? null : rebuiltStart(carried.state, carried.policy, carried.labelRequest);
}

/** The machine as a run that carried none left it: tracking its label (or ended), its marks as the state shows them. */
export function rebuiltStart(
  state: ShipmentState,
  policy: TrackingPolicy,
  labelRequest: LabelRequestWithoutKey,
): ShipmentStart<LabelRequestWithoutKey> {
  const order = state.shopOrder;
  const resolved = order?.resolutions?.at(-1);
  return {
    labelRequest,
    config: { terminalTags: policy.terminalTags, connector: policy.shopSync?.connector ?? null },
    ...(order
      ? { shopOrder: { facts: order.facts, modifiedAt: order.modifiedAt, ...(order.readAt !== undefined ? { readAt: order.readAt } : {}) } }
      : {}),
    ...(state.platformOrderId !== undefined ? { platformOrderId: state.platformOrderId } : {}),
    knew: {
      phase: state.phase === 'parcels' ? 'completed' : state.phase,
      outcome: state.outcome,
      revision: state.revision,
      labelRequests: state.attempts.labelRequests,
      labelId: state.labelId,
      lastError: state.lastError?.kind ?? null,
      tracking: { ...snapshotOf(state), subtagMessage: state.subtagMessage },
      watching: state.trackingPoller !== undefined ? state.labelId : null,
      marks: order
        ? {
            attention: order.attention,
            resolved: resolved ? { attention: resolved.attention, modifiedAt: resolved.modifiedAt } : null,
            offer: order.offer,
            changeMark: order.changeMark ?? null,
          }
        : null,
      replacedLabels: (state.replacedLabels ?? []).map((r) => r.labelId),
      labelsToVoid: (order?.labelsToVoid ?? []).map((l) => l.labelId),
      told: state.shopSync?.emitted ?? 0,
    },
  };
}
