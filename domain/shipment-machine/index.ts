/**
 * The shipment's decisions as one pure state machine: `decide(state, event)` returns the next
 * state and the commands to carry out; `refusal(state, event)` says why an operator's or the
 * shop's message is refused (the update validators), writing nothing. No Temporal, no clock, no
 * I/O: the workflow feeds events in and carries commands out.
 */
import type { ShipmentCommand } from './commands';
import type { EventType, ShipmentEvent } from './events';
import * as label from './label';
import { operatorCancelled } from './operator';
import { relabelRefusal, relabelRequested } from './relabel';
import { attentionResolved, shopChanged, shopChangeRefusal } from './shop';
import { copyOf, openAttention, type MachineState } from './state';
import type { Step } from './step';
import * as tracking from './tracking';
import { ends } from './transitions';

export * from './commands';
export * from './events';
export * from './state';

export interface Decision<R> {
  state: MachineState<R>;
  commands: ShipmentCommand<R>[];
}

type Handler<R, T extends EventType> = (step: Step<R>, event: Extract<ShipmentEvent<R>, { type: T }>) => void;
export type Handlers<R> = { [T in EventType]: Handler<R, T> };
export type Refusals<R> = Partial<{
  [T in EventType]: (state: MachineState<R>, event: Extract<ShipmentEvent<R>, { type: T }>) => string | null;
}>;

/** Which decision each event takes. */
export function handlers<R>(): Handlers<R> {
  return {
    started: label.started,
    labelCreated: label.labelCreated,
    labelRejected: label.labelRejected,
    labelCallStopped: label.labelCallStopped,
    orderRead: label.orderRead,
    trackingNews: tracking.trackingNews,
    trackingLost: tracking.trackingLost,
    shopChanged,
    resubmitted: label.resubmitted,
    relabelRequested,
    operatorCancelled,
    redeliverRequested: (step) => void step.out.push({ type: 'redeliver' }),
    attentionResolved,
    deadlinePassed: (step, e) => {
      // A deadline of a wait the shipment has left is stale.
      if (e.wait !== step.s.wait) return;
      if (e.deadline === 'correction' && step.s.phase === 'awaiting_correction') return label.correctionTimedOut(step);
      if (e.deadline === 'hold' && step.s.phase === 'held_in_shop') return label.holdTimedOut(step);
      if (e.deadline === 'tracking') tracking.trackingTimedOut(step, e.wait);
    },
    // The run ended without the machine's word (a Temporal cancellation): nothing more is taken or told.
    runEnded: (step, e) => {
      if (step.s.phase === 'completed') return;
      ends(step.s, e.outcome);
      step.s.labelCall = null;
    },
  };
}

/** The validators of the messages that have one (updates): what they refuse, nothing is written. */
export function refusals<R>(): Refusals<R> {
  return {
    shopChanged: shopChangeRefusal,
    relabelRequested: relabelRefusal,
    resubmitted: (s) => resubmitRefusalOf(s.phase),
    attentionResolved: (s) =>
      resolveRefusalOf({ ended: s.phase === 'completed', shop: s.shop && { attention: s.shop.attention, open: openAttention(s) } }),
  };
}

/** Why an operator's corrected label data is refused now (null: taken). */
export function resubmitRefusalOf(phase: string): string | null {
  return phase !== 'awaiting_correction' ? `cannot resubmit: the shipment is ${phase}, not awaiting corrected label data` : null;
}

/** Why a person's resolve is refused (null: it closes the open mark). */
export function resolveRefusalOf(s: { ended: boolean; shop: { attention: string | null; open: string | null } | null }): string | null {
  if (!s.shop) return 'nothing to resolve: this shipment was not started by a shop pull, so it has no attention mark';
  if (s.ended) return 'nothing to resolve: the shipment has ended';
  if (s.shop.open === null)
    return s.shop.attention === null
      ? 'nothing to resolve: no attention mark is open'
      : `nothing to resolve: ${s.shop.attention} was resolved already`;
  return null;
}

/** A machine: its decisions and its validators (a test may build one from other rules). */
export interface ShipmentMachine<R> {
  refusal(state: MachineState<R>, event: ShipmentEvent<R>): string | null;
  decide(state: MachineState<R>, event: ShipmentEvent<R>): Decision<R>;
}

export function machineOf<R>(rules: Handlers<R>, validators: Refusals<R>): ShipmentMachine<R> {
  const refusal = (state: MachineState<R>, event: ShipmentEvent<R>): string | null => {
    const check = validators[event.type] as ((s: MachineState<R>, e: ShipmentEvent<R>) => string | null) | undefined;
    return check ? check(state, event) : null;
  };
  return {
    refusal,
    decide(state, event) {
      // A refused message writes nothing (its validator rejected it before the workflow saw it).
      if (refusal(state, event) !== null) return { state, commands: [] };
      const step: Step<R> = { s: copyOf(state), out: [] };
      (rules[event.type] as (step: Step<R>, event: ShipmentEvent<R>) => void)(step, event);
      return { state: step.s, commands: step.out };
    },
  };
}

/** The shipment's machine. */
export function shipmentMachine<R>(): ShipmentMachine<R> {
  return machineOf(handlers<R>(), refusals<R>());
}

/** The machine's answer to one event: its state and commands (refused: the state unchanged, no command). */
export function decide<R>(state: MachineState<R>, event: ShipmentEvent<R>): Decision<R> {
  return shipmentMachine<R>().decide(state, event);
}

export function refusal<R>(state: MachineState<R>, event: ShipmentEvent<R>): string | null {
  return shipmentMachine<R>().refusal(state, event);
}
