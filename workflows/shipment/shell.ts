/**
 * What the shipment's steps (label, order, relabel, tracking, the merchant's changes, the API
 * call) need of the run that reads them in order: its state and the operations they share.
 * `ShipmentRun` (run.ts) is the one implementation; the steps name this, so the run imports them
 * and none of them imports the run.
 */
import type { CancellationScope } from '@temporalio/workflow';
import type { ShipmentActivities } from '../../activities/shipping-api';
import type { LabelRequestWithoutKey } from '../../shipping-api/contract';
import type { CancelShipment, RecordedError, ResubmitLabel, ShipmentOutcome, ShipmentState } from '../../workflow-definitions/shipment';
import type { OutcomeKind, ShipmentInput, TrackingPolicy } from '../../domain/shipment';
import type { KnownReading, ShopChangeKind, ShopOrderChange } from '../../domain/shop-order';
import type { MachineState, ShipmentCommand, ShipmentEvent } from '../../domain/shipment-machine';
import type { ShopDelivery, ShopEventInput } from './shop-delivery';

export type ApiCall = 'createLabel' | 'readOrder';
export type ApiArgs<K extends ApiCall> = Parameters<ShipmentActivities[K]>;
export type ApiResult<K extends ApiCall> = Awaited<ReturnType<ShipmentActivities[K]>>;

/** Everything a run hands to the next one when it continues as new. */
export interface CarriedState {
  state: ShipmentState;
  policy: TrackingPolicy;
  labelRequest: LabelRequestWithoutKey;
  /** The shipment machine's state (carried.ts): absent in a run continued from a build before 1.1, which dropped it once tracking began. */
  machine?: Machine;
}

/** The shipment workflow's signature (workflow.ts): a run continues as new into it, an order starts its parcels with it. */
export type ShipmentWorkflowFn = (input: ShipmentInput, carried?: CarriedState) => Promise<ShipmentOutcome>;

export type Machine = MachineState<LabelRequestWithoutKey>;
export type MachineEvent = ShipmentEvent<LabelRequestWithoutKey>;
export type MachineCommand = ShipmentCommand<LabelRequestWithoutKey>;

/** What the label step asks of the merchant's changes (shop-changes.ts). */
export interface ShopShell {
  /** Nothing is written to an order the merchant cancelled or refunded after its label. */
  readonly silenced: boolean;
  knownReading(): KnownReading | undefined;
  /** Takes a change the label's check found; true when the machine holds it to settle. */
  takeFoundBeforeLabel(found: ShopOrderChange): boolean;
  /** A label made while a change was pending (`kinds`): the workflow's record and marks of it, once the machine judged it as after the label. */
  settleAfterLabel(kinds: readonly ShopChangeKind[]): void;
  /** The order's marks (and a taken offer) as the machine decided them: the workflow's state shows them. */
  marksDecided(): void;
  /** Why the changed order does not map, for the state an operator reads. */
  readonly problems: RecordedError['fields'];
  /** The hold's start, as `status` shows it. */
  held(): string;
  released(): void;
}

export interface ShipmentShell {
  readonly state: ShipmentState;
  labelRequest: LabelRequestWithoutKey;
  readonly policy: TrackingPolicy;
  /** Corrected label data from a resubmit, until the label step sends it. */
  correction: ResubmitLabel | null;
  /** The machine's state for the whole run (run.ts), carried across continue-as-new. */
  readonly machine: Readonly<Machine>;
  /** Feeds an event into the machine: a stop of a label call is carried out at once, the rest queued (a relabel's apart). */
  decide(event: MachineEvent): void;
  /** The commands decided and not carried out yet (label and order, tracking). */
  takeCommands(): MachineCommand[];
  /** The relabel's commands decided and not carried out yet, up to the machine's `relabelEnded`. */
  takeRelabelCommands(): MachineCommand[];
  /** Why the machine would refuse `event` now (an update's validator asks it; null: it takes it). */
  refusal(event: MachineEvent): string | null;
  readonly commandsWaiting: boolean;
  /** The label call in flight: cancelled when the machine stops it. */
  labelScope: CancellationScope | null;
  cancelRequest: CancelShipment | null;
  /** An operator's relabel from the shop's data is being made (relabel.ts): tracking holds the old label's news. */
  relabelling: boolean;
  /** The relabel's label call in flight: cancelled when the merchant cancels the order meanwhile (relabel.ts). */
  relabelScope: CancellationScope | null;
  readonly delivery: ShopDelivery;
  /** The merchant's changes: only for shipments a shop pull started. */
  readonly shop: ShopShell | null;
  callApi<K extends ApiCall>(name: K, summary: string, ...args: ApiArgs<K>): Promise<ApiResult<K>>;
  onAccount(): [] | [string];
  accountField(): { account?: string };
  publish(): void;
  emit(event: ShopEventInput, at?: string): void;
  finish(outcome: OutcomeKind, reason?: string, at?: string): ShipmentOutcome;
  cancelledByOperator(): ShipmentOutcome;
  trackingTimedOut(): ShipmentOutcome;
  continueAsNewIfDue(): Promise<void>;
}
