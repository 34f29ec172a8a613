/**
 * The merchant's changes to the order (cancel, refund, hold, release, address, lines), told by
 * the shop pull through the update `shopOrderChanged`, and what the shipment does with each, by
 * phase. Only shipments a pull started have this (their input carries the order as read then);
 * the label step that heeds it is label.ts, `makeLabel`.
 *
 * Before the label a change is acted on: the label call in flight is cancelled and the label
 * step settles it (stop, wait for the release, take the new request, or wait for an operator).
 * After the label nothing is voided (the API has none): the shipment is marked for an operator,
 * a cancelled order is written to no more, and tracking goes on; a changed address or lines can
 * become a new label by an operator's relabel (relabel.ts).
 */
import { condition, log, type CancellationScope } from '@temporalio/workflow';
import type { FieldProblem, LabelRequestWithoutKey } from '../../shipping-api/contract';
import {
  CANCELLED_MARKS,
  hasControlCharacters,
  openAttention,
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
  type KnownReading,
  type ShopChangeKind,
  type ShopOrderChange,
  type ShopOrderSeen,
  type ShopOrderStatus,
} from '../../domain/shop-order';
import { changeBeforeLabel, changeMarkAfterResolve, leaveMarksAfterLabel, shopChangeRefusalOf } from '../../domain/shipment-machine/shop';
import { resolveRefusalOf } from '../../domain/shipment-machine';
import { LINES_LEFT_REASON, nextBeforeLabel } from '../../domain/shipment-machine/step';
import type { ShipmentOutcome, ShipmentState } from '../../workflow-definitions/shipment';
import { formatDuration } from '../../domain/duration';
import * as label from './label';
import type { ShipmentShell, ShopShell } from './shell';
import { heldInShop, nextRevision } from '../../domain/shipment-machine/transitions';

const DEFAULT_HOLD_TIMEOUT_MS = 7 * 24 * 60 * 60 * 1000;

const joined = (a: string, b: string) => (a ? `${a}; ${b}` : b);

export function initialShopOrder(seen: ShopOrderSeen): ShopOrderState {
  return { facts: { ...seen.facts }, modifiedAt: seen.modifiedAt, changes: [], attention: null, heldSince: null, offer: null };
}

/** Throws why a reading is not taken: the shipment machine decides (domain/shipment-machine/shop.ts). */
export function refuseChange(state: ShipmentState, known: ShopOrderSeen, change: ShopOrderChange): void {
  // Only the validator decides this, and a rejected update writes nothing, so no history changes.
  const why = shopChangeRefusalOf(
    {
      ended: state.phase === 'completed',
      ...(state.platformOrderId !== undefined ? { platformOrderId: state.platformOrderId } : {}),
      known,
    },
    change,
  );
  if (why !== null) throw new Error(why);
}

export class ShopChanges implements ShopShell {
  /** The label call in flight: cancelled when a change must be settled before the label. */
  labelScope: CancellationScope | null = null;
  /** Kinds of a change taken before the label and not settled yet by the label step. */
  private pending = new Set<ShopChangeKind>();
  /** The order mapped anew, to be taken into the next label request. */
  private request: LabelRequestWithoutKey | null = null;
  /** Why the changed order does not map: it waits for an operator as a rejected label does. */
  private problems: FieldProblem[] | null = null;
  /**
   * WooCommerce's `on-hold` read while a rejected label awaits correction is most likely our own
   * write (the connector's rejectedStatus): it holds nothing the correction does not hold already.
   */
  private holdMayBeOurs = false;
  /** A change the label's check found was refused: the label goes on without the check. */
  private checkRefused = false;
  /** A parcel of a split order: the last reading to ship holds no line at its location (the merchant moved them). */
  private linesLeft = false;
  /** The address and lines the current label request was made from (a held order is read without a request). */
  private requestFacts: { address: string; lines: string };

  constructor(
    private readonly run: ShipmentShell,
    readonly order: ShopOrderState,
  ) {
    this.requestFacts = { address: order.facts.address, lines: order.facts.lines };
  }

  // ---------------------------------------------------------------- the update

  validate(change: ShopOrderChange): void {
    refuseChange(this.run.state, this.order, change);
  }

  apply(change: ShopOrderChange): ShopChangeAnswer {
    const { state } = this.run;
    const kinds = differences(this.order.facts, change.facts);
    this.order.facts = { ...change.facts };
    this.order.modifiedAt = change.modifiedAt;
    // Only a reading of an order to ship names its locations (a held or cancelled one says nothing of them).
    if (change.facts.status === 'open' && state.parcel) this.linesLeft = change.linesLeft === true;
    const action = state.labelId === null ? this.beforeLabel(change, kinds) : this.afterLabel(change, kinds);
    const record: ShopChangeRecord = {
      kinds,
      status: change.facts.status,
      modifiedAt: change.modifiedAt,
      at: new Date().toISOString(),
      action,
    };
    this.order.changes = [...this.order.changes, record].slice(-SHOP_CHANGES_KEPT);
    log.info('the order changed in the shop', { orderId: state.orderId, shop: state.shop, kinds, status: change.facts.status, action });
    this.run.publish();
    return { kinds, action, phase: state.phase };
  }

  /** Before the label: remembered for the label step, and the call in flight is cancelled so it settles now. */
  private beforeLabel(change: ShopOrderChange, kinds: ShopChangeKind[]): string {
    const { state, policy } = this.run;
    const status = change.facts.status;
    // How it is taken is the shipment machine's decision (domain/shipment-machine/shop.ts).
    const taken = changeBeforeLabel(
      { connector: policy.shopSync?.connector ?? null, phase: state.phase, madeFrom: this.requestFacts },
      { facts: change.facts, kinds, mapped: change.labelRequest != null, problems: change.problems != null },
    );
    this.holdMayBeOurs = taken.holdMayBeOurs;
    if (taken.ignored) return 'on hold while the rejected label awaits correction (the connector sets it too): nothing to do';
    let action: string;
    if (isWithdrawn(status)) action = `${status} in the shop: stops without a label`;
    else if (this.linesLeft) action = 'its lines moved to another location in the shop: stops without a label';
    else if (status === 'on_hold' && !this.holdMayBeOurs) action = 'held in the shop: the label waits for the release';
    else if (kinds.includes('status')) action = 'released in the shop: the label goes on';
    else action = '';
    if (taken.request === 'take' && change.labelRequest) {
      this.request = change.labelRequest;
      this.requestFacts = { address: change.facts.address, lines: change.facts.lines };
      this.problems = null;
      action = joined(action, 'the changed order is taken into the label request');
    } else if (taken.request === 'does_not_map' && change.problems) {
      this.problems = change.problems;
      action = joined(action, 'the changed order does not map: it waits for an operator');
    }
    for (const kind of kinds) this.pending.add(kind);
    this.labelScope?.cancel();
    return action || `${kinds.join(' and ')} noted: taken when the order is released`;
  }

  /** After the label: an operator decides; nothing more is written to a cancelled order. */
  private afterLabel(change: ShopOrderChange, kinds: ShopChangeKind[]): string {
    const status = change.facts.status;
    if (kinds.includes('address') || kinds.includes('lines')) this.order.offer = change.labelRequest ?? null;
    // No second label for lines that left: the shop offers none for this parcel's location any more.
    if (this.linesLeft) this.order.offer = null;
    if (isWithdrawn(status)) {
      this.mark(kinds, status);
      this.run.delivery.dropPending();
      // An operator's relabel in flight yields: its label is not bought when the call can still be stopped.
      if (this.run.relabelScope) {
        this.run.relabelScope.cancel();
        return `${status} in the shop after the label, while a relabel was being made: the relabel is stopped; nothing voided, nothing more written to the order; tracking goes on`;
      }
      return `${status} in the shop after the label: nothing voided, nothing more written to the order; tracking goes on`;
    }
    this.mark(kinds, status);
    if (change.linesLeft === true)
      return `${kinds.join(' and ')} changed after the label: its lines moved to another location in the shop (that location's parcel ships them); marked for an operator, no second label`;
    const offer = this.order.offer
      ? `; a new label to the shop's data: ${relabelCommand(this.run.state.shop, this.run.state.orderId, this.run.state.parcel?.location)}`
      : '';
    return `${kinds.join(' and ')} changed after the label: marked for an operator${offer}`;
  }

  /** The marks the change leaves: decided by the shipment machine (domain/shipment-machine/shop.ts). */
  private mark(kinds: ShopChangeKind[], status: ShopOrderStatus): void {
    leaveMarksAfterLabel(this.order, kinds, status);
  }

  /** Nothing is written to an order the merchant cancelled or refunded after its label. */
  get silenced(): boolean {
    return this.order.attention !== null && CANCELLED_MARKS.includes(this.order.attention);
  }

  // ---------------------------------------------------------------- a person closes the mark

  /** The update's validator: refuses (writing nothing to the history) unless a mark is open. */
  validateResolve(request: ResolveAttention): void {
    for (const field of ['by', 'note'] as const) {
      const value: unknown = request?.[field];
      if (typeof value !== 'string' || value.trim() === '' || value.length > RESOLVE_LIMITS[field] || hasControlCharacters(value))
        throw new Error(`invalid resolve: ${field}: must be 1 to ${RESOLVE_LIMITS[field]} characters, without control characters`);
    }
    const why = resolveRefusalOf({
      ended: this.run.state.phase === 'completed',
      shop: { attention: this.order.attention, open: openAttention(this.order) },
    });
    if (why !== null) throw new Error(why);
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
    if (this.order.changeMark) this.order.changeMark = changeMarkAfterResolve(this.order);
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
    return { platformOrderId, modifiedAt: this.order.modifiedAt, facts: { ...this.order.facts } };
  }

  /**
   * A change the label attempt found checking with the shop: taken as a pulled one is. One this
   * shipment would refuse (which the check should never send) turns the check off, so the label
   * step cannot loop on it.
   */
  takeFoundBeforeLabel(found: ShopOrderChange): void {
    const change = this.run.state.parcel ? changeForParcel(found, this.run.state.parcel.location) : found;
    try {
      checkChangeShape(change);
      if (this.alreadyKnown(change)) {
        // The pull or the webhook brought it first and it was taken then: nothing to say twice.
        log.debug('the change the label check found had come in from the shop already', { orderId: this.run.state.orderId });
        this.checkRefused = true;
        return;
      }
      this.validate(change);
    } catch (err) {
      log.warn('shop change found before the label not taken; the label goes on unchecked', {
        orderId: this.run.state.orderId,
        reason: (err as Error).message,
      });
      this.checkRefused = true;
      return;
    }
    this.labelScope = null;
    this.apply(change);
    this.order.changes.at(-1)!.action += ' (found checking with the shop before the label)';
  }

  /** Nothing in it that this shipment does not know: the same reading, or an older one. */
  private alreadyKnown(change: ShopOrderChange): boolean {
    const mine = this.run.state.platformOrderId;
    if (change.platformOrderId !== undefined && mine !== undefined && change.platformOrderId !== mine) return false;
    return change.modifiedAt < this.order.modifiedAt || differences(this.order.facts, change.facts).length === 0;
  }

  /** A change cancelled the label call in flight (not the operator, not Temporal). */
  interruptedLabel(): boolean {
    return this.pending.size > 0;
  }

  /** Whether a change waits to be settled: wakes a label waiting for correction. */
  readonly changed = (): boolean => this.pending.size > 0;

  /**
   * Before each label request: stops for a withdrawn order, waits out a hold, waits for an
   * operator when the changed order does not map, and takes a changed one into the request
   * (a new revision, so the key never names two different requests). Returns the outcome when
   * the shipment ends here.
   */
  async settleBeforeLabel(): Promise<ShipmentOutcome | undefined> {
    const run = this.run;
    const { state } = run;
    for (;;) {
      this.pending.clear();
      const status = this.order.facts.status;
      const next = nextBeforeLabel({
        cancelRequested: run.cancelRequest !== null,
        status,
        holdMayBeOurs: this.holdMayBeOurs,
        problems: this.problems !== null,
        changedRequest: this.request !== null,
        linesLeft: this.linesLeft,
      });
      if (next === 'cancelled_by_operator') return run.cancelledByOperator();
      if (next === 'cancelled_in_shop') return run.finish('cancelled_in_shop', `the order was ${status} in the shop before its label`);
      if (next === 'lines_left') return run.finish('cancelled_in_shop', LINES_LEFT_REASON);
      if (next === 'wait_for_release') {
        const ended = await this.awaitRelease();
        if (ended) return ended;
        continue;
      }
      if (next === 'wait_for_operator' && this.problems) {
        state.lastError = {
          kind: 'shop_change_rejected',
          message: 'the order as changed in the shop does not map',
          fields: this.problems,
          at: new Date().toISOString(),
        };
        this.problems = null;
        const ended = await label.awaitCorrection(run, this.changed);
        if (ended) return ended;
        continue;
      }
      if (next === 'take_changed_order' && this.request) {
        run.labelRequest = this.request;
        this.request = null;
        // Always a new revision, attempt or not: a worker lost mid-task takes its local attempts
        // with it, so "no attempt yet" is not something history can show, and a key reused for
        // another request could make two labels for one order.
        nextRevision(state);
      }
      return undefined;
    }
  }

  /** A label made although a change came while its call ran: the change is judged as after the label. */
  settleAfterLabel(): void {
    if (this.pending.size === 0) return;
    const kinds = [...this.pending];
    this.pending.clear();
    const change: ShopOrderChange = {
      facts: this.order.facts,
      modifiedAt: this.order.modifiedAt,
      ...(this.request ? { labelRequest: this.request } : {}),
    };
    this.request = null;
    this.problems = null;
    const action = this.afterLabel(change, kinds);
    this.order.changes.at(-1)!.action += ` (the label was made meanwhile: ${action})`;
  }

  private async awaitRelease(): Promise<ShipmentOutcome | undefined> {
    const run = this.run;
    const { state } = run;
    const timeout = run.policy.shopHoldTimeoutMs ?? DEFAULT_HOLD_TIMEOUT_MS;
    heldInShop(state);
    this.order.heldSince ??= new Date().toISOString();
    run.publish();
    log.info('the order is held in the shop: the label waits', { orderId: state.orderId, shop: state.shop });
    const left = Date.parse(this.order.heldSince) + timeout - Date.now();
    const released = await condition(() => this.order.facts.status !== 'on_hold' || run.cancelRequest !== null, Math.max(1, left));
    if (!released) return run.finish('hold_timed_out', `held in the shop for longer than ${formatDuration(timeout)}`);
    this.order.heldSince = null;
    return undefined;
  }
}
