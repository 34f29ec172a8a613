/** What the shipment asks the workflow to do; the workflow carries each out and feeds the answer back. */
import type { OutcomeKind } from '../shipment';
import type { Deadline } from './events';

export type ShopEventType = 'label.created' | 'label.rejected' | 'tracking.updated' | 'shipment.completed';

/** A shop event as the machine decides it; the workflow adds the body's details from its state. */
export interface ShopEventDecision {
  /** Its number among this shipment's events (its id): one body per number. */
  seq: number;
  type: ShopEventType;
  revision: number;
  labelId: string | null;
  tag: string | null;
  outcome?: OutcomeKind;
  /** A relabel's label: the one it replaces. */
  replaces?: string;
}

export type ShipmentCommand<R> =
  | { type: 'createLabel'; revision: number; labelRequest: R; fromOffer: boolean }
  | { type: 'stopLabelCall'; revision: number }
  | { type: 'readOrder'; labelId: string }
  | { type: 'watchTracking'; labelId: string }
  | { type: 'unwatchTracking'; labelId: string }
  | { type: 'tellShop'; event: ShopEventDecision }
  /** Events not handed to the shop yet are dropped (the order was cancelled after its label). */
  | { type: 'dropUntold' }
  | { type: 'redeliver' }
  | { type: 'startDeadline'; deadline: Deadline; wait: number }
  | { type: 'finish'; outcome: OutcomeKind; reason: string }
  /** A failure an operator cannot fix by data: the workflow fails (reset it after fixing the cause). */
  | { type: 'fail'; kind: string }
  /** An operator's relabel is over (its label tracked, or none made): the commands after it are tracking's again. */
  | { type: 'relabelEnded'; made: boolean };

export type CommandType = ShipmentCommand<unknown>['type'];
