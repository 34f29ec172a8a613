/**
 * One run of a shipment workflow: its state, the shipment machine's state it feeds (`decide`:
 * label and order, carried out by decisions.ts) and the small operations every step uses (call
 * the API, publish, emit to the shop, finish, continue as new); `ship()` runs label and order,
 * then tracking (tracking.ts).
 */
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  makeContinueAsNewFunc,
  isCancellation,
  log,
  workflowInfo,
} from '@temporalio/workflow';
import type { LabelRequestWithoutKey } from '../../shipping-api/contract';
import type { CancelShipment, ResubmitLabel, ResubmitResult, ShipmentOutcome, ShipmentState } from '../../workflow-definitions/shipment';
import type { OutcomeKind, ShipmentInput, TrackingPolicy } from '../../domain/shipment';
import { correctionMismatches, describeMismatches } from '../../domain/correction';
import { decide, initialMachineState, refusal } from '../../domain/shipment-machine';
import { callApi } from './api-call';
import { startOfCarried } from './carried';
import { labelAndOrder } from './decisions';
import { shipmentFailed } from './failures';
import { trackingPolicy } from './proxies';
import { Published } from './published';
import { initialShopOrder, ShopChanges } from './shop-changes';
import { ShopDelivery, type ShopEventInput } from './shop-delivery';
import { initialShopSync, initialState, outcomeOf, withOrderOverrides } from './state';
import { followTracking } from './tracking';
import type {
  ApiArgs,
  ApiCall,
  ApiResult,
  CarriedState,
  Machine,
  MachineCommand,
  MachineEvent,
  ShipmentShell,
  ShipmentWorkflowFn,
} from './shell';
import { ends } from '../../domain/shipment-machine/transitions';

/** The resubmit's validator: the machine refuses from its phase; the run, a resubmit not sent yet and data of another order. */
export function validateResubmit(
  run: Pick<ShipmentRun, 'refusal' | 'correction' | 'machine' | 'state' | 'labelRequest'>,
  request: ResubmitLabel,
): void {
  const why = run.refusal({ type: 'resubmitted', labelRequest: request.labelRequest });
  // The machine asked for the label as it took the first: until the label step sends it, say so (unless the shipment ended).
  if (run.correction !== null && run.machine.phase !== 'completed')
    throw new Error('cannot resubmit: a resubmission is already being processed');
  if (why !== null) throw new Error(why);
  // Validators do not run on replay: refusing more here changes no recorded history.
  if (request.acceptMismatch === true) return;
  const mismatches = correctionMismatches(run.state, run.labelRequest, request.labelRequest, request.namedOrder);
  if (mismatches.length > 0) throw new Error(`cannot resubmit: ${describeMismatches(mismatches)}`);
}

/** An event of the relabel in flight (or the one that starts it): its commands are the relabel's, up to its end. */
function relabelsOwn(before: Machine, event: MachineEvent): boolean {
  const r = before.relabel;
  switch (event.type) {
    case 'relabelRequested':
      return r === null;
    case 'labelCreated':
    case 'labelRejected':
    case 'labelCallStopped':
      return r?.stage === 'labelling' && event.revision === r.revision;
    case 'orderRead':
      return r?.stage === 'reading' && event.labelId === r.labelId;
    default:
      return false;
  }
}

export class ShipmentRun implements ShipmentShell {
  readonly state: ShipmentState;
  labelRequest: LabelRequestWithoutKey;
  policy!: TrackingPolicy;
  /** Corrected label data from a resubmit, until the label step sends it. */
  correction: ResubmitLabel | null = null;
  /** The machine's state for the whole run, carried across continue-as-new (carried.ts). */
  machine: Machine;
  /** The label call in flight: cancelled when the machine stops it. */
  labelScope: CancellationScope | null = null;
  private commands: MachineCommand[] = [];
  private relabelCommands: MachineCommand[] = [];
  cancelRequest: CancelShipment | null = null;
  /** An operator's relabel from the shop's data is being made (relabel.ts): tracking holds the old label's news. */
  relabelling = false;
  /** The relabel's label call in flight: cancelled when the merchant cancels the order meanwhile (relabel.ts). */
  relabelScope: CancellationScope | null = null;
  readonly delivery: ShopDelivery;
  /** The merchant's changes: only for shipments a shop pull started (their input carries the order's facts). */
  readonly shop: ShopChanges | null;
  private readonly published: Published;

  constructor(
    private readonly input: ShipmentInput,
    private readonly carried?: CarriedState,
  ) {
    this.state = carried?.state ?? initialState(input);
    this.labelRequest = carried?.labelRequest ?? input.labelRequest;
    this.delivery = new ShopDelivery(this.state, () => this.publish());
    this.published = new Published(this.state, () => this.labelRequest.courier, this.delivery);
    // Only shipments a shop pull started know the order's facts; the others never hear of the merchant's changes.
    if (input.shopOrder) this.state.shopOrder ??= initialShopOrder(input.shopOrder);
    this.shop = this.state.shopOrder ? new ShopChanges(this, this.state.shopOrder) : null;
    // Its config is the worker's policy, read in start() (a change taken before then reads neither).
    const config = { terminalTags: [], connector: null };
    const platformOrderId = input.platformOrderId !== undefined ? { platformOrderId: input.platformOrderId } : {};
    const machine =
      carried?.machine ??
      initialMachineState(
        (carried && startOfCarried(carried)) ?? {
          labelRequest: input.labelRequest,
          config,
          shopOrder: input.shopOrder,
          ...platformOrderId,
        },
      );
    // A machine carried from a build whose machine did not know the platform order: the input names it (its validator refuses another's).
    this.machine =
      machine.shop && machine.shop.platformOrderId === undefined ? { ...machine, shop: { ...machine.shop, ...platformOrderId } } : machine;
  }

  /** The worker's policy, the shipment's account and its shop sync, fixed at the run's start. */
  async start(): Promise<void> {
    this.published.rememberStartAttributes();
    // Only when named: calls without an account go to `default`.
    if (this.input.account !== undefined && !this.carried) this.state.account = this.input.account;
    this.policy = this.carried?.policy ?? withOrderOverrides(await trackingPolicy(this.input.shop), this.input.tracking);
    if (!this.carried) this.state.shopSync = initialShopSync(this.policy);
    if (!this.carried) this.machine.config = { terminalTags: this.policy.terminalTags, connector: this.policy.shopSync?.connector ?? null };
  }

  /** Label, order, tracking: the shipment itself, until its outcome, with the shop delivery beside it. */
  async ship(): Promise<ShipmentOutcome> {
    const state = this.state;
    this.delivery.start(this.policy.shopSync ?? null);
    try {
      // 1, 2. The label, created once per revision, and its order, as the machine decides (decisions.ts).
      if (!this.carried) {
        const ended = await labelAndOrder(this);
        if (ended) return ended;
      }
      const labelId = state.labelId!;

      // 3. Tracking until a terminal tag, the operator stops it, or time runs out (tracking.ts).
      if (this.cancelRequest) return this.cancelledByOperator();
      const deadline = Date.parse(state.trackingStartedAt ?? new Date().toISOString()) + this.policy.maxTrackingMs;
      return await followTracking(this, labelId, deadline);
    } catch (err) {
      if (isCancellation(err)) return this.cancelledByOperator();
      throw shipmentFailed(this.state, err);
    }
  }

  /** The shop gets its last events, update handlers their answers; then the run's result. */
  async complete(outcome: ShipmentOutcome): Promise<ShipmentOutcome> {
    const told = this.delivery.sync;
    const settings = this.policy.shopSync ?? null;
    if (told) {
      // Not cancellable: a cancelled workflow still hands its last events to the shop.
      if (settings) await CancellationScope.nonCancellable(() => this.delivery.handOver(told, settings));
      this.publish();
    }
    // A resubmit racing the end gets its answer from this run (it issues no command when none runs).
    // Not cancellable: after a cancellation request (Web UI) the root scope is cancelled, and the
    // wait would throw instead of returning the operator stop.
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
    return told
      ? { ...outcome, shopSync: { status: told.status, emitted: told.emitted, delivered: told.delivered, failure: told.failure } }
      : outcome;
  }

  // ---------------------------------------------------------------- messages

  cancel(request: CancelShipment): void {
    this.cancelRequest ??= request;
    this.decide({ type: 'operatorCancelled' });
  }

  validateResubmit(request: ResubmitLabel): void {
    validateResubmit(this, request);
  }

  /** Answers once the corrected label data was sent (or the shipment ended first). */
  async resubmit(request: ResubmitLabel): Promise<ResubmitResult> {
    this.correction = request;
    this.decide({ type: 'resubmitted', labelRequest: request.labelRequest });
    const state = this.state;
    const revision = state.revision + 1;
    await condition(() => state.phase === 'completed' || (state.revision >= revision && state.phase !== 'creating_label'));
    const created = state.revision === revision && state.labelId !== null;
    return {
      revision,
      idempotencyKey: state.idempotencyKey,
      labelCreated: created,
      labelId: state.labelId,
      error: created ? null : state.lastError,
    };
  }

  // ---------------------------------------------------------------- the machine

  /**
   * Feeds an event into the machine: a stop of a label call and a drop of untold events at once,
   * the rest queued for the step that carries them out: an operator's relabel takes its own, up to
   * the machine's end of it (relabel.ts); label and order, then tracking, take the others.
   */
  decide(event: MachineEvent): void {
    const before = this.machine;
    const decision = decide(before, event);
    this.machine = decision.state;
    let relabels = relabelsOwn(before, event);
    for (const c of decision.commands) {
      if (c.type === 'stopLabelCall') (c.revision === before.relabel?.revision ? this.relabelScope : this.labelScope)?.cancel();
      else if (c.type === 'dropUntold') this.delivery.dropPending();
      else if (relabels) {
        this.relabelCommands.push(c);
        if (c.type === 'relabelEnded') relabels = false;
      } else this.commands.push(c);
    }
  }

  refusal(event: MachineEvent): string | null {
    return refusal(this.machine, event);
  }

  takeRelabelCommands(): MachineCommand[] {
    return this.relabelCommands.splice(0);
  }

  takeCommands(): MachineCommand[] {
    return this.commands.splice(0);
  }

  get commandsWaiting(): boolean {
    return this.commands.length > 0;
  }

  // ---------------------------------------------------------------- operations the steps share

  /** One shipping API call: see api-call.ts. */
  callApi<K extends ApiCall>(name: K, summary: string, ...args: ApiArgs<K>): Promise<ApiResult<K>> {
    return callApi(this, name, summary, ...args);
  }

  /** The shipment's account as a call's last argument, only when it has one (`default` without). */
  onAccount(): [] | [string] {
    return this.state.account === undefined ? [] : [this.state.account];
  }

  /** The same as a field of a call's input. */
  accountField(): { account?: string } {
    return this.state.account === undefined ? {} : { account: this.state.account };
  }

  /** Mirrors the state into the Web UI's details, and into search attributes (only on change) at most once per workflow task (published.ts). */
  publish(): void {
    this.published.publish();
  }

  /** Writes the search attributes still unwritten: the run is completing, failing or continuing as new. */
  flushPublished(): void {
    this.published.flush();
  }

  /** Tells the shop (through the delivery coroutine), when shop sync is on and the order was not cancelled there; `at`: see ShopDelivery.emit. */
  emit(event: ShopEventInput, at?: string): void {
    if (this.shop?.silenced) return;
    this.delivery.emit(event, at);
  }

  /** `at`: the poll that saw a terminal tag, when the outcome is that tag's (tracking.ts, `toldAt`). */
  finish(outcome: OutcomeKind, reason?: string, at?: string): ShipmentOutcome {
    const state = this.state;
    // Ended by the machine already, except on a Temporal cancellation: then it learns here, so its validators refuse as the state shows.
    this.decide({ type: 'runEnded', outcome });
    ends(state, outcome);
    this.emit(
      {
        type: 'shipment.completed',
        data: { outcome, reason: reason ?? null, tag: state.tag, trackingNumber: state.trackingNumber },
      },
      at,
    );
    this.publish();
    log.info('shipment finished', { orderId: state.orderId, shop: state.shop, outcome, reason });
    return outcomeOf(state, outcome, reason);
  }

  cancelledByOperator(): ShipmentOutcome {
    return this.finish('cancelled_by_operator', this.cancelRequest?.reason ?? 'cancelled by operator');
  }

  trackingTimedOut(): ShipmentOutcome {
    return this.finish('tracking_timed_out', `no terminal tag within ${this.policy.maxTrackingMs} ms of tracking`);
  }

  /** Hands the whole state to a new run when the server suggests it or history reached the bound. */
  async continueAsNewIfDue(): Promise<void> {
    const info = workflowInfo();
    if (!info.continueAsNewSuggested && info.historyLength < this.policy.historyEventLimit) return;
    await condition(allHandlersFinished);
    if (this.delivery.sync) await this.delivery.pause();
    this.state.continuedAsNew++;
    // The safe point to leave a pinned build: the new run starts from the carried state on the
    // current build, where the server supports it (not Temporal 1.29: docs/production.md).
    await makeContinueAsNewFunc<ShipmentWorkflowFn>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(this.input, {
      state: this.state,
      policy: this.policy,
      labelRequest: this.labelRequest,
      machine: this.machine,
    });
  }
}
