/**
 * The merchant's changes to the order (cancel, refund, hold, release, address, lines), told by
 * the shop pull through the update `shopOrderChanged`, and what the shipment does with each, by
 * phase. Only shipments a pull started have this (their input carries the order as read then);
 * before the label the shipment machine decides what it does (decisions.ts carries it out).
 *
 * Before the label a change is acted on: the machine stops the label call in flight and settles
 * it (stop, wait for the release, take the new request, or wait for an operator); this records it.
 * After the label nothing is voided (the API has none): the shipment is marked for an operator,
 * a cancelled order is written to no more, and tracking goes on; a changed address or lines can
 * become a new label by an operator's relabel (relabel.ts).
 */
import { log } from '@temporalio/workflow';
import type { FieldProblem } from '../../shipping-api/contract';
import {
  CANCELLED_MARKS,
  hasControlCharacters,
  relabelCommand,
  RESOLVE_LIMITS,
  SHOP_CHANGES_KEPT,
  type AttentionResolution,
  type ResolveAttention,
  type ShopChangeAnswer,
  type ShopChangeRecord,
  type ShopOrderState,
} from '../../workflow-definitions/shipment';
import {
  changeForParcel,
  checkChangeShape,
  differences,
  isWithdrawn,
  readBefore,
  type KnownReading,
  type ShopChangeKind,
  type ShopOrderChange,
  type ShopOrderSeen,
  type ShopOrderStatus,
} from '../../domain/shop-order';
import { markAttention } from '../../domain/shipment-machine/transitions';
import type { MachineEvent, ShipmentShell, ShopShell } from './shell';

const joined = (a: string, b: string) => (a ? `${a}; ${b}` : b);

/** The machine's event for a reading of the order. */
function shopChangedOf(change: ShopOrderChange): MachineEvent {
  return {
    type: 'shopChanged',
    facts: change.facts,
    modifiedAt: change.modifiedAt,
    ...(change.readAt !== undefined ? { readAt: change.readAt } : {}),
    ...(change.platformOrderId !== undefined ? { platformOrderId: change.platformOrderId } : {}),
    ...(change.linesLeft === true ? { linesLeft: true } : {}),
    ...(change.labelRequest != null ? { labelRequest: change.labelRequest } : {}),
    problems: change.problems != null,
  };
}

export function initialShopOrder(seen: ShopOrderSeen): ShopOrderState {
  return {
    facts: { ...seen.facts },
    modifiedAt: seen.modifiedAt,
    ...(seen.readAt !== undefined ? { readAt: seen.readAt } : {}),
    changes: [],
    attention: null,
    heldSince: null,
    offer: null,
  };
}

/** Throws why a reading is not taken: the machine refuses it from its own state (domain/shipment-machine/shop.ts). */
export function validateChange(run: Pick<ShipmentShell, 'refusal'>, change: ShopOrderChange): void {
  // A rejected update writes nothing; a parcel's signal and the label's check refuse what the update would.
  const why = run.refusal(shopChangedOf(change));
  if (why !== null) throw new Error(why);
}

/** The resolve's validator: its fields, then the machine refuses from its own marks (nothing open, resolved already, ended). */
export function validateResolve(run: Pick<ShipmentShell, 'refusal'>, request: ResolveAttention): void {
  for (const field of ['by', 'note'] as const) {
    const value: unknown = request?.[field];
    if (typeof value !== 'string' || value.trim() === '' || value.length > RESOLVE_LIMITS[field] || hasControlCharacters(value))
      throw new Error(`invalid resolve: ${field}: must be 1 to ${RESOLVE_LIMITS[field]} characters, without control characters`);
  }
  const why = run.refusal({ type: 'attentionResolved' });
  if (why !== null) throw new Error(why);
}

export class ShopChanges implements ShopShell {
  /** Why the changed order does not map (the machine decides it waits for an operator; this is what they read). */
  problems: FieldProblem[] = [];
  /** A change the label's check found was refused: the label goes on without the check. */
  private checkRefused = false;
  /** A parcel of a split order: the last reading to ship holds no line at its location (the merchant moved them). */
  private linesLeft = false;

  constructor(
    private readonly run: ShipmentShell,
    readonly order: ShopOrderState,
  ) {}

  // ---------------------------------------------------------------- the update

  /** Throws why a reading is not taken: the machine refuses it from its own state (domain/shipment-machine/shop.ts). */
  validate(change: ShopOrderChange): void {
    validateChange(this.run, change);
  }

  apply(change: ShopOrderChange): ShopChangeAnswer {
    const { state } = this.run;
    const kinds = differences(this.order.facts, change.facts);
    this.order.facts = { ...change.facts };
    this.order.modifiedAt = change.modifiedAt;
    if (change.readAt !== undefined) this.order.readAt = change.readAt;
    // Only a reading of an order to ship names its locations (a held or cancelled one says nothing of them).
    if (change.facts.status === 'open' && state.parcel) this.linesLeft = change.linesLeft === true;
    const beforeLabel = state.labelId === null;
    const action = beforeLabel ? this.beforeLabel(change, kinds) : this.afterLabel(change, kinds);
    const record: ShopChangeRecord = {
      kinds,
      status: change.facts.status,
      modifiedAt: change.modifiedAt,
      ...(change.readAt !== undefined ? { readAt: change.readAt } : {}),
      at: new Date().toISOString(),
      action,
    };
    this.order.changes = [...this.order.changes, record].slice(-SHOP_CHANGES_KEPT);
    log.info('the order changed in the shop', { orderId: state.orderId, shop: state.shop, kinds, status: change.facts.status, action });
    this.run.publish();
    return { kinds, action, phase: state.phase };
  }

  /** Before the label: the machine decides (it stops the call in flight, or settles it now); this says what it did. */
  private beforeLabel(change: ShopOrderChange, kinds: ShopChangeKind[]): string {
    const status = change.facts.status;
    this.decide(change);
    // How the machine took it (domain/shipment-machine/shop.ts, `changeBeforeLabel`), for the record's words.
    const taken = this.run.machine.shop!.taken!;
    if (taken.ignored) return 'on hold while the rejected label awaits correction (the connector sets it too): nothing to do';
    let action: string;
    if (isWithdrawn(status)) action = `${status} in the shop: stops without a label`;
    else if (this.linesLeft) action = 'its lines moved to another location in the shop: stops without a label';
    else if (status === 'on_hold' && !taken.holdMayBeOurs) action = 'held in the shop: the label waits for the release';
    else if (kinds.includes('status')) action = 'released in the shop: the label goes on';
    else action = '';
    if (taken.request === 'take' && change.labelRequest) action = joined(action, 'the changed order is taken into the label request');
    else if (taken.request === 'does_not_map' && change.problems) {
      this.problems = change.problems;
      action = joined(action, 'the changed order does not map: it waits for an operator');
    }
    return action || `${kinds.join(' and ')} noted: taken when the order is released`;
  }

  /** Feeds the change to the machine: it decides, before the label and after it. */
  private decide(change: ShopOrderChange): void {
    this.run.decide(shopChangedOf(change));
  }

  /** After the label: the machine decides (the marks, the offer, a relabel in flight stopped, nothing more written to a cancelled order); this says what it did. */
  private afterLabel(change: ShopOrderChange, kinds: ShopChangeKind[]): string {
    const relabelOut = this.run.machine.relabel?.stage === 'labelling';
    this.decide(change);
    this.marksDecided();
    return this.afterLabelAction(kinds, change.facts.status, change.linesLeft === true, relabelOut);
  }

  /** What a change after the label did, in words (the record an operator reads). */
  private afterLabelAction(kinds: ShopChangeKind[], status: ShopOrderStatus, linesLeft: boolean, relabelOut: boolean): string {
    if (isWithdrawn(status)) {
      if (relabelOut)
        return `${status} in the shop after the label, while a relabel was being made: the relabel is stopped; nothing voided, nothing more written to the order; tracking goes on`;
      return `${status} in the shop after the label: nothing voided, nothing more written to the order; tracking goes on`;
    }
    if (linesLeft)
      return `${kinds.join(' and ')} changed after the label: its lines moved to another location in the shop (that location's parcel ships them); marked for an operator, no second label`;
    const offer = this.order.offer
      ? `; a new label to the shop's data: ${relabelCommand(this.run.state.shop, this.run.state.orderId, this.run.state.parcel?.location)}`
      : '';
    return `${kinds.join(' and ')} changed after the label: marked for an operator${offer}`;
  }

  /** The marks and the offer as the machine decided them: the state an operator reads shows them. */
  marksDecided(): void {
    const m = this.run.machine.shop!;
    this.order.offer = m.offer;
    markAttention(this.order, m.attention);
    // A state that never had a change mark gets one only once a change sets it.
    if (m.changeMark !== null || this.order.changeMark !== undefined) this.order.changeMark = m.changeMark;
  }

  /** Nothing is written to an order the merchant cancelled or refunded after its label. */
  get silenced(): boolean {
    return this.order.attention !== null && CANCELLED_MARKS.includes(this.order.attention);
  }

  // ---------------------------------------------------------------- a person closes the mark

  /** The update's validator: refuses (writing nothing to the history) unless a mark is open. */
  validateResolve(request: ResolveAttention): void {
    validateResolve(this.run, request);
  }

  /** Closes the open mark; the update's history event holds who and the note, the state keeps them for `status`. */
  resolve(request: ResolveAttention): AttentionResolution {
    const resolution: AttentionResolution = {
      attention: this.order.attention!,
      modifiedAt: this.order.modifiedAt,
      by: request.by,
      at: new Date().toISOString(),
      note: request.note,
    };
    this.order.resolutions = [...(this.order.resolutions ?? []), resolution].slice(-SHOP_CHANGES_KEPT);
    this.run.decide({ type: 'attentionResolved' });
    this.marksDecided();
    log.info('attention resolved by a person', {
      orderId: this.run.state.orderId,
      shop: this.run.state.shop,
      attention: resolution.attention,
      by: resolution.by,
    });
    this.run.publish();
    return resolution;
  }

  // ---------------------------------------------------------------- the label step

  /** What the label attempt checks with the shop: the reading this shipment knows (none without a platform id). */
  knownReading(): KnownReading | undefined {
    const { platformOrderId } = this.run.state;
    if (this.checkRefused || platformOrderId === undefined) return undefined;
    return {
      platformOrderId,
      modifiedAt: this.order.modifiedAt,
      ...(this.order.readAt !== undefined ? { readAt: this.order.readAt } : {}),
      facts: { ...this.order.facts },
    };
  }

  /**
   * A change the label attempt found checking with the shop: taken as a pulled one is. One this
   * shipment would refuse (which the check should never send) turns the check off, so the label
   * step cannot loop on it.
   */
  takeFoundBeforeLabel(found: ShopOrderChange): boolean {
    const change = this.run.state.parcel ? changeForParcel(found, this.run.state.parcel.location) : found;
    try {
      checkChangeShape(change);
      if (this.alreadyKnown(change)) {
        // The pull or the webhook brought it first and it was taken then: nothing to say twice.
        log.debug('the change the label check found had come in from the shop already', { orderId: this.run.state.orderId });
        this.checkRefused = true;
        return false;
      }
      this.validate(change);
    } catch (err) {
      log.warn('shop change found before the label not taken; the label goes on unchecked', {
        orderId: this.run.state.orderId,
        reason: (err as Error).message,
      });
      this.checkRefused = true;
      return false;
    }
    this.apply(change);
    this.order.changes.at(-1)!.action += ' (found checking with the shop before the label)';
    return (this.run.machine.shop?.pending.length ?? 0) > 0;
  }

  /** Nothing in it that this shipment does not know: the same reading, or an older one. */
  private alreadyKnown(change: ShopOrderChange): boolean {
    const mine = this.run.state.platformOrderId;
    if (change.platformOrderId !== undefined && mine !== undefined && change.platformOrderId !== mine) return false;
    return readBefore(change, this.order) || differences(this.order.facts, change.facts).length === 0;
  }

  /** A label made although a change came while its call ran: the machine judged the change as after the label; this records it so. */
  settleAfterLabel(kinds: readonly ShopChangeKind[]): void {
    this.marksDecided();
    const action = this.afterLabelAction([...kinds], this.order.facts.status, false, false);
    this.order.changes.at(-1)!.action += ` (the label was made meanwhile: ${action})`;
  }

  /** The label waits for the release: since when (kept while the machine keeps the same hold). */
  held(): string {
    return (this.order.heldSince ??= new Date().toISOString());
  }

  released(): void {
    this.order.heldSince = null;
  }
}
