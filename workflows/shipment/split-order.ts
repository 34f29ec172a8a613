/**
 * An order that ships from several locations (Shopify makes one fulfillment order per location):
 * the order's workflow, under its usual id, starts one parcel workflow per location and waits for
 * them. Each parcel is an ordinary shipment (label, tracking, its own fulfillment on the shop) with
 * its own history, its key and event ids naming its location. Child workflows, as Temporal
 * advises for partitioning work: each history stays the size of one shipment's, and every path
 * a single-location shipment takes (rejections, corrections, shop changes, continue-as-new) is
 * the same tested code. The order's workflow keeps what is addressed to the order: `status`, the
 * pull's shopOrderChanged (told to every parcel still running), the operator's cancel (likewise).
 * Parcel ids derive from the order's workflow id and the location, so nothing makes a second one;
 * REQUEST_CANCEL: a parcel never outlives its order's workflow silently.
 */
import {
  ApplicationFailure,
  condition,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  WorkflowIdReusePolicy,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import {
  cancelShipmentSignal,
  parcelShopOrderChangedSignal,
  redeliverShopEventsUpdate,
  relabelFromShopUpdate,
  resubmitLabelUpdate,
  SA,
  SHOP_CHANGES_KEPT,
  shopOrderChangedUpdate,
  stateQuery,
  WORKFLOW_TYPE,
  type ParcelState,
  type RelabelFromShop,
  type ResubmitLabel,
  type ShipmentOutcome,
  type ShipmentState,
  type ShopChangeAnswer,
} from '../../workflow-definitions/shipment';
import { parcelWorkflowId, shipmentWorkflowId, type ParcelRef, type ShipmentInput } from '../../domain/shipment';
import { changeForParcel, checkChangeShape, differences, type ShopOrderChange, type ShopOrderSeen } from '../../domain/shop-order';
import { followLines, type ParcelPlan } from '../../domain/split-parcels';
import { parcelsDetails } from './details';
import { initialShopOrder } from './shop-changes';
import { initialState, outcomeOf } from './state';
import type { ShipmentWorkflowFn } from './shell';
import { ends } from '../../domain/shipment-machine/transitions';
import { shopChangeRefusalOf } from '../../domain/shipment-machine/shop';

/**
 * Throws why the order's workflow does not take a reading (it has no machine of its own: each
 * parcel's machine decides for the parcel): the machine's rule for a reading, on the order's facts.
 */
function refuseChange(state: ShipmentState, known: ShopOrderSeen, change: ShopOrderChange): void {
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

type Parcel = NonNullable<ShipmentInput['parcels']>[number];

export class SplitOrder {
  readonly state: ShipmentState;
  private readonly handles = new Map<string, ChildWorkflowHandle<ShipmentWorkflowFn>>();
  private started = false;
  /** Parcels started after the order's start whose start is not known yet: the order does not finish meanwhile. */
  private starting = 0;
  /** Each parcel's end as awaited (null: ended; text: its workflow failed), by location. */
  private readonly ended = new Map<string, string | null>();
  /** ShipmentStatus as last written. */
  private status = 'creating_label';

  constructor(private readonly input: ShipmentInput & { parcels: Parcel[] }) {
    // The order's workflow id as every start derives it (start-shipment.ts), not workflowInfo's:
    // a replay under another id starts the same parcels.
    const orderWorkflowId = shipmentWorkflowId(input);
    this.state = {
      ...initialState(input),
      phase: 'parcels',
      parcels: input.parcels.map(({ location, name }) => ({
        location,
        name,
        workflowId: parcelWorkflowId(orderWorkflowId, location),
        outcome: null,
        labelId: null,
        trackingNumber: null,
      })),
      ...(input.shopOrder ? { shopOrder: initialShopOrder(input.shopOrder) } : {}),
    };
  }

  /** Start every parcel, wait for each, then the order's outcome. */
  async run(): Promise<ShipmentOutcome> {
    this.publish();
    await Promise.all(this.input.parcels.map((parcel, i) => this.startParcel(parcel, this.state.parcels![i]!)));
    this.started = true;
    for (const parcel of this.state.parcels!) this.watch(parcel);
    // Every parcel, those the merchant's moves added too (shopOrderChanged), has ended.
    await condition(() => this.starting === 0 && this.state.parcels!.every((p) => this.ended.has(p.location)));
    const failures = this.state.parcels!.map((p) => this.ended.get(p.location)).filter((f): f is string => typeof f === 'string');
    return this.finish(failures);
  }

  private watch(parcel: ParcelState): void {
    void this.awaitParcel(parcel).then((failure) => this.ended.set(parcel.location, failure));
  }

  private async startParcel(parcel: Parcel, known: ParcelState, seen?: ShopOrderSeen): Promise<void> {
    const { parcels: _all, labelRequest: _first, ...order } = this.input;
    const ref: ParcelRef = { location: parcel.location, name: parcel.name };
    const handle = await startChild<ShipmentWorkflowFn>(WORKFLOW_TYPE, {
      workflowId: known.workflowId,
      // A parcel added by the merchant's move starts from the reading that added it (it is not told that reading again).
      args: [{ ...order, ...(seen ? { shopOrder: seen } : {}), labelRequest: parcel.labelRequest, parcel: ref }],
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: SA.shop, value: order.shop },
        { key: SA.orderId, value: order.orderId },
        { key: SA.courier, value: parcel.labelRequest.courier },
        { key: SA.status, value: 'creating_label' },
      ],
      staticSummary: `Parcel of order ${order.orderId} of ${order.shop} from ${parcel.name}: ${parcel.labelRequest.courier} ${parcel.labelRequest.service.productCode}`,
    });
    this.handles.set(parcel.location, handle);
  }

  /** The parcel's end, kept in the order's state; a parcel workflow that failed is named. */
  private async awaitParcel(parcel: ParcelState): Promise<string | null> {
    try {
      const ended = await this.handles.get(parcel.location)!.result();
      parcel.outcome = ended.outcome;
      parcel.labelId = ended.labelId;
      parcel.trackingNumber = ended.trackingNumber;
      return null;
    } catch (err) {
      const cause = (err as Error).cause instanceof Error ? `: ${((err as Error).cause as Error).message}` : '';
      return `parcel from ${parcel.name} (${parcel.workflowId}) failed${cause}`;
    } finally {
      this.publish();
    }
  }

  /**
   * The order's outcome: its parcels' when they agree, else the first parcel's that was not
   * delivered (the one an operator looks at); the reason names each parcel's.
   */
  private finish(failures: string[]): ShipmentOutcome {
    const parcels = this.state.parcels!;
    if (failures.length > 0) throw ApplicationFailure.nonRetryable(failures.join('; '), 'ParcelFailed');
    // A parcel that stopped without a label because its lines moved to another location has no say in the order's outcome.
    const shipping = parcels.filter((p) => !(p.linesLeft === true && p.labelId === null));
    const outcomes = (shipping.length > 0 ? shipping : parcels).map((p) => p.outcome!);
    const outcome = outcomes.every((o) => o === outcomes[0]) ? outcomes[0]! : outcomes.find((o) => o !== 'delivered')!;
    const reason = parcels.map((p) => `${p.name}: ${p.outcome}`).join('; ');
    ends(this.state, outcome);
    this.publish();
    log.info('order shipped as parcels', { orderId: this.state.orderId, shop: this.state.shop, outcome, reason });
    return { ...outcomeOf(this.state, outcome, `parcels: ${reason}`), parcels: parcels.map((p) => ({ ...p })) };
  }

  // ---------------------------------------------------------------- messages

  register(): void {
    setHandler(stateQuery, () => this.state);
    setHandler(cancelShipmentSignal, async (request) => {
      await this.tellParcels((id) => getExternalWorkflowHandle(id).signal(cancelShipmentSignal, request));
    });
    setHandler(shopOrderChangedUpdate, (change) => this.shopOrderChanged(change), {
      validator: (change: ShopOrderChange) => {
        if (!this.state.shopOrder) throw new Error('this order was not started by a shop pull: it has no order facts to compare');
        checkChangeShape(change);
        refuseChange(this.state, this.state.shopOrder, change);
      },
    });
    // Refused by their validators (written nowhere): each parcel has its own label and shop events.
    const perParcel = (what: string): never => {
      throw new Error(
        `this order ships as ${this.state.parcels!.length} parcels: ${what} one with --parcel <location> (${this.parcelIds()})`,
      );
    };
    setHandler(resubmitLabelUpdate, (_request: ResubmitLabel) => perParcel('resubmit'), {
      validator: (_request: ResubmitLabel) => perParcel('resubmit'),
    });
    setHandler(redeliverShopEventsUpdate, () => perParcel('redeliver'), { validator: () => perParcel('redeliver') });
    setHandler(relabelFromShopUpdate, (_request: RelabelFromShop) => perParcel('relabel'), {
      validator: (_request: RelabelFromShop) => perParcel('relabel'),
    });
  }

  /**
   * Taken as the order's facts, then told to every parcel still running (each settles it by its
   * own phase: one whose location holds no line any more is told its lines left); a location
   * with lines to ship and no parcel yet (the merchant moved lines there) gets its parcel.
   */
  private async shopOrderChanged(change: ShopOrderChange): Promise<ShopChangeAnswer> {
    const order = this.state.shopOrder!;
    const kinds = differences(order.facts, change.facts);
    order.facts = { ...change.facts };
    order.modifiedAt = change.modifiedAt;
    if (change.readAt !== undefined) order.readAt = change.readAt;
    await condition(() => this.started);
    const plan = followLines(
      this.state.parcels!.map((p) => p.location),
      change,
    );
    for (const p of this.state.parcels!) if (change.locations !== undefined) p.linesLeft = plan.left.includes(p.location);
    const told = await this.tellParcels((id, location) =>
      getExternalWorkflowHandle(id).signal(parcelShopOrderChangedSignal, changeForParcel(change, location)),
    );
    const added = await this.addParcels(plan.added, {
      facts: { ...change.facts },
      modifiedAt: change.modifiedAt,
      ...(change.readAt !== undefined ? { readAt: change.readAt } : {}),
    });
    const action = [
      `told ${told} running parcel(s)`,
      ...(plan.left.length > 0 ? [`lines left location(s) ${plan.left.join(', ')}`] : []),
      ...(added.length > 0 ? [`new parcel(s) from location(s) ${added.join(', ')}`] : []),
    ].join('; ');
    const at = new Date().toISOString();
    order.changes = [...order.changes, { kinds, status: change.facts.status, modifiedAt: change.modifiedAt, at, action }].slice(
      -SHOP_CHANGES_KEPT,
    );
    this.publish();
    return { kinds, action, phase: this.state.phase };
  }

  /**
   * One parcel per location the merchant moved lines to: its workflow id and key name the
   * location, so a re-read, a retry or a replay never starts a second one for it.
   */
  private async addParcels(added: ParcelPlan<Parcel['labelRequest']>['added'], seen: ShopOrderSeen): Promise<string[]> {
    const orderWorkflowId = shipmentWorkflowId(this.input);
    const startedNow: string[] = [];
    this.starting++;
    try {
      for (const parcel of added) {
        const known: ParcelState = {
          location: parcel.location,
          name: parcel.name,
          workflowId: parcelWorkflowId(orderWorkflowId, parcel.location),
          outcome: null,
          labelId: null,
          trackingNumber: null,
          addedAt: new Date().toISOString(),
        };
        this.state.parcels!.push(known);
        try {
          await this.startParcel(parcel, known, seen);
        } catch (err) {
          // Refused by the server (a parcel of that id ran before): not started, not awaited.
          this.state.parcels!.splice(this.state.parcels!.indexOf(known), 1);
          log.warn('a parcel for a location the merchant moved lines to could not start', {
            workflowId: known.workflowId,
            error: (err as Error).message,
          });
          continue;
        }
        this.watch(known);
        startedNow.push(parcel.location);
      }
    } finally {
      this.starting--;
    }
    return startedNow;
  }

  /** Sends to every parcel not known to have ended; one that ended meanwhile is passed over. */
  private async tellParcels(send: (workflowId: string, location: string) => Promise<void>): Promise<number> {
    await condition(() => this.started);
    const running = this.state.parcels!.filter((p) => p.outcome === null);
    const sent = await Promise.all(
      running.map((p) =>
        send(p.workflowId, p.location).then(
          () => true,
          (err: unknown) => {
            log.info('a parcel ended before it was told', { workflowId: p.workflowId, error: (err as Error).message });
            return false;
          },
        ),
      ),
    );
    return sent.filter(Boolean).length;
  }

  private parcelIds(): string {
    return this.state.parcels!.map((p) => `${p.location}: ${p.name}, workflow ${p.workflowId}`).join('; ');
  }

  private publish(): void {
    const status = this.state.outcome ?? this.state.phase;
    // The start options set `creating_label`; written only on change, so a parcel's end adds no event.
    if (status !== this.status) upsertSearchAttributes([{ key: SA.status, value: status }]);
    this.status = status;
    setCurrentDetails(parcelsDetails(this.state));
  }
}

export async function shipSplitOrder(input: ShipmentInput & { parcels: Parcel[] }): Promise<ShipmentOutcome> {
  const order = new SplitOrder(input);
  order.register();
  return await order.run();
}
