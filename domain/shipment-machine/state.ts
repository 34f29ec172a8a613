/**
 * What the shipment's decisions read and change: its phase, revision, label, tracking, the
 * merchant's order as it knows it and the marks left for an operator. Plain data only (no
 * Temporal, no I/O), so a run can carry it across continue-as-new and a test can copy it.
 */
import type { OutcomeKind } from '../shipment';
import type { ShopChangeKind, ShopOrderFacts } from '../shop-order';
import type { TrackingSnapshot } from '../tracking';

export type Phase = 'creating_label' | 'awaiting_correction' | 'held_in_shop' | 'reading_order' | 'tracking' | 'completed';

export const PHASES: readonly Phase[] = ['creating_label', 'awaiting_correction', 'held_in_shop', 'reading_order', 'tracking', 'completed'];

export type Attention = 'cancelled_in_shop' | 'cancelled_label_to_void' | 'address_changed' | 'lines_changed' | 'held_in_shop';

/** Marks after which nothing more is written to the order. */
export const CANCELLED_MARKS: readonly Attention[] = ['cancelled_in_shop', 'cancelled_label_to_void'];

/** The merchant's order as the shipment knows it (only shipments a shop pull started have one). */
export interface ShopOrderKnown<R> {
  facts: ShopOrderFacts;
  modifiedAt: string;
  /** When the reading known was taken (domain/shop-order.ts `readAt`); absent when no reading said. */
  readAt?: string;
  /** The platform order this shipment is (absent for one started without it): a reading of another is refused. */
  platformOrderId?: string;
  attention: Attention | null;
  /** The mark a person closed, and the reading it was closed for (a later change opens it again). */
  resolved: { attention: Attention; modifiedAt: string } | null;
  /** After the label: the shop's label request when it differs from the label made (an operator may relabel from it). */
  offer: R | null;
  /** The mark of an address or lines change after the label not answered yet (a hold's mark gives way to it again on release). */
  changeMark: Attention | null;
  /** Counts each new offer, so a relabel knows whether the offer it took is still the current one. */
  offerSeq: number;
  /** Before the label: kinds of change taken and not settled yet by the label step. */
  pending: ShopChangeKind[];
  /** Before the label: the changed order's request, for the next revision. */
  request: R | null;
  /** Before the label: the changed order does not map (it waits for an operator). */
  problems: boolean;
  /** The address and lines the current label request was made from. */
  requestFacts: { address: string; lines: string };
  /** WooCommerce's `on-hold` read while a rejected label awaits correction is most likely our own write. */
  holdMayBeOurs: boolean;
  /** A parcel of a split order whose lines all left its location (the last reading to ship said so). */
  linesLeft?: boolean;
  heldSince: boolean;
  /** Before the label: how the last change was taken (the workflow words its record from it); none once the label is made. */
  taken?: ChangeTaken;
}

/** How a change before the label is taken (shop.ts, `changeBeforeLabel`). */
export interface ChangeTaken {
  /** WooCommerce's `on-hold` read while a rejected label awaits correction is most likely our own write. */
  holdMayBeOurs: boolean;
  /** It holds nothing: such an `on-hold`, with no address or lines change. */
  ignored: boolean;
  /** The changed order becomes the next request (`take`), or waits for an operator (`does_not_map`). */
  request: 'take' | 'does_not_map' | null;
}

/** An operator's relabel from the shop's offer, while its label is made and its order read. */
export interface RelabelInFlight<R> {
  revision: number;
  offer: R;
  offerSeq: number;
  /** The reading of the order the operator relabelled from. */
  modifiedAt: string;
  replaces: string;
  stage: 'labelling' | 'reading';
  labelId: string | null;
  /** The merchant cancelled meanwhile and the call was told to stop. */
  stopped: boolean;
}

/** What tracking waits for while a relabel is made: the old label's news and clock settle after it. */
export interface Deferred {
  news: Array<{ labelId: string; change: TrackingChangeIn | null; failed: boolean }>;
  deadline: number | null;
  lost: boolean;
}

export type TrackingChangeIn = TrackingSnapshot & { subtagMessage?: string | null };

export interface ShipmentConfig {
  terminalTags: readonly string[];
  /** The shop's connector: WooCommerce marks a rejected label's order on-hold itself. */
  connector: string | null;
}

export interface MachineState<R> {
  config: ShipmentConfig;
  phase: Phase;
  outcome: OutcomeKind | null;
  /** Part of the label's idempotency key: one request per revision. */
  revision: number;
  labelRequest: R;
  labelRequests: number;
  labelId: string | null;
  /** The label step's call in flight (not a relabel's): its revision. */
  labelCall: number | null;
  lastError: string | null;
  cancelRequested: boolean;
  tracking: TrackingSnapshot & { subtagMessage: string | null };
  /** The label whose tracking membership the shipment holds. */
  watching: string | null;
  /** The current wait with a deadline (correction, hold, tracking); a deadline of an older wait is stale. */
  wait: number;
  shop: ShopOrderKnown<R> | null;
  relabel: RelabelInFlight<R> | null;
  deferred: Deferred;
  replacedLabels: string[];
  labelsToVoid: string[];
  /** Shop events emitted: the next one's number. */
  told: number;
}

export interface ShipmentStart<R> {
  labelRequest: R;
  config: ShipmentConfig;
  /** The order as the shop pull read it, for shipments a pull started (for one rebuilt: as its state knew it last). */
  shopOrder?: { facts: ShopOrderFacts; modifiedAt: string; readAt?: string };
  /** The platform order the shipment was started for, when its input names one. */
  platformOrderId?: string;
  /** A run continued from a build that carried no machine (1.0): what its state knew (workflows/shipment/carried.ts). */
  knew?: KnownProgress<R>;
}

/** What a run that carried no machine state kept of the shipment: the machine is rebuilt from it. */
export interface KnownProgress<R> {
  phase: Phase;
  outcome: OutcomeKind | null;
  revision: number;
  labelRequests: number;
  labelId: string | null;
  lastError: string | null;
  tracking: MachineState<R>['tracking'];
  watching: string | null;
  /** The order's marks and offer (shipments a shop pull started). */
  marks: Pick<ShopOrderKnown<R>, 'attention' | 'resolved' | 'offer' | 'changeMark'> | null;
  replacedLabels: string[];
  labelsToVoid: string[];
  told: number;
}

/** The machine's state of a new shipment, or of one rebuilt from what a run that carried none knew (`knew`). */
export function initialMachineState<R>(start: ShipmentStart<R>): MachineState<R> {
  const seen = start.shopOrder;
  const knew = start.knew;
  const fresh: MachineState<R> = {
    config: start.config,
    phase: 'creating_label',
    outcome: null,
    revision: 1,
    labelRequest: start.labelRequest,
    labelRequests: 0,
    labelId: null,
    labelCall: null,
    lastError: null,
    cancelRequested: false,
    tracking: { tag: null, subtag: null, subtagMessage: null, trackingNumber: null, checkpoints: 0, lastCheckpointTime: null },
    watching: null,
    wait: 0,
    shop: seen ? shopOrderKnown(seen, knew?.marks ?? null, start.platformOrderId) : null,
    relabel: null,
    deferred: { news: [], deadline: null, lost: false },
    replacedLabels: [],
    labelsToVoid: [],
    told: 0,
  };
  if (!knew) return fresh;
  const { marks: _marks, ...progress } = knew;
  return { ...fresh, ...progress };
}

/** The merchant's order as the shipment knows a reading of it: with no mark, offer or change pending unless `marks` says. */
function shopOrderKnown<R>(
  seen: { facts: ShopOrderFacts; modifiedAt: string; readAt?: string },
  marks: KnownProgress<R>['marks'],
  platformOrderId: string | undefined,
): ShopOrderKnown<R> {
  return {
    facts: { ...seen.facts },
    modifiedAt: seen.modifiedAt,
    ...(seen.readAt !== undefined ? { readAt: seen.readAt } : {}),
    ...(platformOrderId !== undefined ? { platformOrderId } : {}),
    attention: marks?.attention ?? null,
    resolved: marks?.resolved ?? null,
    offer: marks?.offer ?? null,
    changeMark: marks?.changeMark ?? null,
    offerSeq: 0,
    pending: [],
    request: null,
    problems: false,
    requestFacts: { address: seen.facts.address, lines: seen.facts.lines },
    holdMayBeOurs: false,
    heldSince: false,
  };
}

/** Nothing is written to an order the merchant cancelled or refunded after its label. */
export function silenced(state: MachineState<unknown>): boolean {
  const attention = state.shop?.attention ?? null;
  return attention !== null && CANCELLED_MARKS.includes(attention);
}

/** The mark a person should look at: none once a person closed it for the reading the shipment knows. */
export function openAttention(state: MachineState<unknown>): Attention | null {
  const shop = state.shop;
  if (!shop?.attention) return null;
  const r = shop.resolved;
  return r && r.attention === shop.attention && r.modifiedAt === shop.modifiedAt ? null : shop.attention;
}

/** A deep copy of plain data (the workflow's sandbox has no `structuredClone`). */
export function copyOf<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyOf) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyOf(v)])) as T;
}
