/**
 * A small world around the shipment machine for the model-based test: the shipping API (one
 * label per revision: the same key returns the same label), a tracking shard and its reconciler,
 * the merchant's shop, an operator and the clock. Each choice of a random sequence becomes one
 * event delivered to the machine; invariants are checked after every step.
 */
import { isWithdrawn, type ShopOrderFacts } from '../../domain/shop-order';
import {
  CANCELLED_MARKS,
  initialMachineState,
  type MachineState,
  type ShipmentCommand,
  type ShipmentEvent,
  type ShipmentMachine,
  type ShipmentStart,
} from '../../domain/shipment-machine';

export type Req = string;

export const ACTIONS = [
  'labelAnswer',
  'orderAnswer',
  'news',
  'shardLost',
  'merchant',
  'resubmit',
  'relabel',
  'cancel',
  'resolve',
  'redeliver',
  'deadline',
  'repeat',
  'lostWorker',
  'runEnded',
] as const;
export type ActionKind = (typeof ACTIONS)[number];
export interface Choice {
  kind: ActionKind;
  a: number;
  b: number;
}

export const TERMINAL_TAGS = ['Delivered', 'Exception', 'Cancelled'];
const MOVING_TAGS = ['InfoReceived', 'InTransit', 'OutForDelivery'];

const REPEATABLE: ReadonlyArray<ShipmentEvent<Req>['type']> = [
  'shopChanged',
  'trackingNews',
  'trackingLost',
  'resubmitted',
  'relabelRequested',
  'operatorCancelled',
  'attentionResolved',
  'redeliverRequested',
];

/** The updates (messages with a validator) and the machine's words for each once the shipment ended. */
export const ENDED_REFUSALS: Partial<Record<ShipmentEvent<Req>['type'], (outcome: string | null) => string>> = {
  shopChanged: () => 'the shipment has ended',
  resubmitted: () => 'cannot resubmit: the shipment is completed, not awaiting corrected label data',
  relabelRequested: (outcome) => `the shipment has ended (${outcome})`,
  attentionResolved: () => 'nothing to resolve: the shipment has ended',
};

/**
 * What a run a Temporal cancellation ended may still be told to do: an operator's redeliver (of
 * the events told before), and the end of a relabel that was in flight (its update's answer).
 */
const AFTER_THE_END: ReadonlyArray<ShipmentCommand<Req>['type']> = ['redeliver', 'relabelEnded'];

export class InvariantBroken extends Error {
  constructor(
    readonly invariant: string,
    detail: string,
  ) {
    super(`${invariant}: ${detail}`);
  }
}

export function startOf(connector: string | null): ShipmentStart<Req> {
  return {
    labelRequest: 'req-0',
    config: { terminalTags: TERMINAL_TAGS, connector },
    shopOrder: { facts: { status: 'open', address: 'a0', lines: 'l0' }, modifiedAt: stamp(0) },
  };
}

/** The reader's clock: the n-th reading of the order, in milliseconds after the start. */
const readStamp = (n: number) => new Date(Date.parse('2026-12-01T00:00:00Z') + n).toISOString();

const stamp = (t: number) => `2026-12-01T00:${String(Math.floor(t / 60)).padStart(2, '0')}:${String(t % 60).padStart(2, '0')}Z`;

export class World {
  s: MachineState<Req>;
  readonly log: ShipmentEvent<Req>[] = [];
  /** Told each event a choice offers the shipment, before the machine takes or refuses it (a test asks its validators too). */
  offered: ((s: MachineState<Req>, event: ShipmentEvent<Req>) => void) | null = null;
  readonly commands: ShipmentCommand<Req>[] = [];
  private calls: Array<{ revision: number; stop: boolean }> = [];
  private reads: string[] = [];
  private membership: string | null = null;
  private deadlines: Array<{ deadline: 'correction' | 'hold' | 'tracking'; wait: number }> = [];
  private shop: ShopOrderFacts = { status: 'open', address: 'a0', lines: 'l0' };
  private clock = 0;
  /** Readings taken of the order: each reading's read order (`readAt`), later readings later. */
  private readings = 0;
  /** The read order of the newest reading the shipment took. */
  private takenReadAt: string | null = null;
  private edits = 0;
  /** The merchant moved every line of this parcel's location to others (the shop's truth, as the next reading to ship tells it). */
  private linesLeft = false;
  private requested = new Map<number, Req>();
  private answers = new Map<number, ShipmentEvent<Req>>();
  private bought = new Set<string>();
  private told = new Map<string, string>();
  private lastSeq = 0;
  /** A merchant's cancel, address or lines change taken while an operator's relabel was in flight. */
  private changedDuringRelabel = false;
  /** A person resolved the mark of the merchant's last address or lines change after the label. */
  private changeResolved = false;
  /**
   * A Temporal cancellation ended the run (`runEnded`): what the machine had decided by then. The
   * run still takes messages while it hands the shop its last events; its calls out and timers
   * were cancelled with it.
   */
  private ended: { outcome: string | null; told: number } | null = null;

  /** A Temporal cancellation ended the run (the machine had not). */
  get endedByRun(): boolean {
    return this.ended !== null;
  }

  constructor(
    private readonly machine: ShipmentMachine<Req>,
    private readonly start: ShipmentStart<Req>,
  ) {
    this.s = initialMachineState(start);
    this.deliver({ type: 'started' });
  }

  play(choice: Choice): void {
    if (this.s.phase === 'completed' && this.ended === null) return;
    const event = this.eventFor(choice);
    if (choice.kind === 'lostWorker') return;
    if (event) this.offered?.(this.s, event);
    const words = event && this.ended ? ENDED_REFUSALS[event.type] : undefined;
    if (event && words) {
      // A run a Temporal cancellation ended takes no update: each is refused as by an ended shipment.
      const why = this.machine.refusal(this.s, event);
      if (why !== words(this.ended!.outcome))
        throw new InvariantBroken('a run that ended refuses every update', `${event.type}: ${why ?? 'taken'}`);
    }
    // Nothing to do, or refused: time passes, and what the shipment waits for answers.
    const next = event && this.machine.refusal(this.s, event) === null ? event : this.progress();
    if (next) this.deliver(next);
  }

  /** Time runs out: every call answers, every deadline passes; the shipment must have ended. */
  runOutTheClock(): void {
    for (let round = 0; round < 40 && this.s.phase !== 'completed'; round++) {
      const call = this.calls[0];
      if (call) {
        this.calls.shift();
        this.deliver(call.stop ? { type: 'labelCallStopped', revision: call.revision } : this.answer(call.revision));
        continue;
      }
      const read = this.reads.shift();
      if (read) {
        this.deliver({ type: 'orderRead', labelId: read, ok: true });
        continue;
      }
      const deadline = this.deadlines.shift();
      if (deadline) this.deliver({ type: 'deadlinePassed', ...deadline });
    }
    if (this.s.phase !== 'completed')
      throw new InvariantBroken('every shipment reaches an outcome by its deadline', `still ${this.s.phase}`);
  }

  /** A worker lost mid-task: the same events, replayed from the start, give the same state and commands. */
  replay(): void {
    let state = initialMachineState(this.start);
    const commands: ShipmentCommand<Req>[] = [];
    for (const event of this.log) {
      const d = this.machine.decide(state, event);
      state = d.state;
      commands.push(...d.commands);
    }
    if (JSON.stringify(state) !== JSON.stringify(this.s) || JSON.stringify(commands) !== JSON.stringify(this.commands))
      throw new InvariantBroken('a replay decides the same', 'the replayed state or commands differ');
  }

  /** The API's answer for a revision's key: the first one, replayed for every later call with that key. */
  private answer(revision: number, reject = false): ShipmentEvent<Req> {
    const first = this.answers.get(revision);
    if (first) return first;
    const answer: ShipmentEvent<Req> = reject
      ? { type: 'labelRejected', revision, correctable: true, kind: 'courier_error' }
      : { type: 'labelCreated', revision, labelId: `L${revision}` };
    if (answer.type === 'labelCreated') this.bought.add(answer.labelId);
    this.answers.set(revision, answer);
    return answer;
  }

  private eventFor({ kind, a, b }: Choice): ShipmentEvent<Req> | null {
    const s = this.s;
    switch (kind) {
      case 'labelAnswer': {
        const call = this.calls[a % Math.max(1, this.calls.length)];
        if (!call) return this.progress();
        this.calls = this.calls.filter((c) => c !== call);
        // The run's cancellation cancelled the call: its scope says stopped, whatever the API did.
        if (this.ended) return { type: 'labelCallStopped', revision: call.revision };
        if (call.stop && b % 2 === 0) return { type: 'labelCallStopped', revision: call.revision };
        return this.answer(call.revision, b % 8 === 1);
      }
      case 'orderAnswer': {
        const read = this.reads.shift();
        // A read the run's cancellation cancelled fails.
        if (read && this.ended) return { type: 'orderRead', labelId: read, ok: false };
        // The order often brings the label's tracking number: the courier's news repeats it.
        return read
          ? { type: 'orderRead', labelId: read, ok: b % 4 !== 0, ...(b % 3 === 0 ? { trackingNumber: `T${read}` } : {}) }
          : this.progress();
      }
      case 'news': {
        const labelId = this.membership;
        if (labelId === null) return this.progress();
        // A poll that failed (e.g. a 401): told, the label stays watched.
        if (a % 11 === 10) return { type: 'trackingNews', labelId, change: null, failed: true };
        // One answer in four terminal: shipments live long enough to meet the merchant and the operator.
        const tag = (a % 4 === 0 ? TERMINAL_TAGS : MOVING_TAGS)[(a >> 2) % 3]!;
        const checkpoints = b % 6;
        // The shard drops a label once it told its terminal tag.
        if (TERMINAL_TAGS.includes(tag)) this.membership = null;
        const change = { tag, subtag: null, trackingNumber: `T${labelId}`, checkpoints, lastCheckpointTime: `c${checkpoints}-${b % 3}` };
        return { type: 'trackingNews', labelId, change, failed: false };
      }
      case 'shardLost':
        // The shard is terminated or reset and starts empty; the reconciler tells the shipment.
        this.membership = null;
        return { type: 'trackingLost' };
      case 'merchant':
        return this.merchantChange(a, b);
      case 'resubmit':
        return { type: 'resubmitted', labelRequest: `fix-${this.log.length}` };
      case 'relabel':
        // The CLI reads the shipment's reading first; now and then a reading older than the shipment's.
        return { type: 'relabelRequested', modifiedAt: b % 6 === 0 ? stamp(0) : (s.shop?.modifiedAt ?? stamp(0)) };
      case 'cancel':
        return { type: 'operatorCancelled' };
      case 'resolve':
        return { type: 'attentionResolved' };
      case 'redeliver':
        return { type: 'redeliverRequested' };
      case 'deadline': {
        const d = this.deadlines[a % Math.max(1, this.deadlines.length)];
        if (!d) return null;
        this.deadlines = this.deadlines.filter((x) => x !== d);
        return { type: 'deadlinePassed', ...d };
      }
      case 'repeat': {
        // Late and repeated: an event delivered before comes again.
        // Temporal delivers an activity's result and a timer once: messages and tracking news come again.
        const messages = this.log.filter((e) => REPEATABLE.includes(e.type));
        return messages[a % Math.max(1, messages.length)] ?? null;
      }
      case 'lostWorker':
        this.replay();
        return null;
      case 'runEnded':
        // A Temporal cancellation request (the Web UI): the workflow ends the run with an operator's stop.
        return { type: 'runEnded', outcome: 'cancelled_by_operator' };
    }
  }

  /** The next thing the shipment waits for. */
  private progress(): ShipmentEvent<Req> | null {
    const call = this.calls.shift();
    if (call) return call.stop || this.ended ? { type: 'labelCallStopped', revision: call.revision } : this.answer(call.revision);
    const read = this.reads.shift();
    if (read) return { type: 'orderRead', labelId: read, ok: this.ended === null };
    return null;
  }

  private merchantChange(a: number, b: number): ShipmentEvent<Req> {
    const variant = a % 10;
    const shop = this.shop;
    this.edits++;
    if (variant === 0) shop.status = 'cancelled';
    else if (variant === 1) shop.status = 'refunded';
    else if (variant === 2) shop.status = 'on_hold';
    else if (variant === 3) shop.status = 'open';
    else if (variant < 8) shop.address = `a${this.edits}`;
    else shop.lines = `l${this.edits}`;
    // A parcel's lines move to another location (and may come back): a reading of an order to ship without a request for it.
    if (variant >= 8) this.linesLeft = b % 3 === 0;
    // Two readings within one second happen: same modifiedAt, told apart by when each was read
    // (a reading delivered late, after a later one, comes from `repeat`).
    if (b % 4 !== 0) this.clock++;
    const mapped = b % 5 !== 0;
    const left = shop.status === 'open' && this.linesLeft;
    return {
      type: 'shopChanged',
      facts: { ...shop },
      modifiedAt: stamp(this.clock),
      readAt: readStamp(++this.readings),
      ...(left ? { linesLeft: true } : mapped ? { labelRequest: `shop-${shop.address}-${shop.lines}` } : { problems: true }),
    };
  }

  private deliver(event: ShipmentEvent<Req>): void {
    const before = this.s;
    if (this.machine.refusal(before, event) !== null) return;
    const { state, commands } = this.machine.decide(before, event);
    this.log.push(event);
    this.s = state;
    this.commands.push(...commands);
    if (
      event.type === 'shopChanged' &&
      before.relabel &&
      (isWithdrawn(event.facts.status) ||
        event.facts.address !== before.shop!.facts.address ||
        event.facts.lines !== before.shop!.facts.lines)
    )
      this.changedDuringRelabel = true;
    for (const command of commands) this.carryOut(command);
    if (event.type === 'runEnded' && this.ended === null && before.phase !== 'completed') {
      // Its timers were cancelled with the run: no deadline passes any more.
      this.deadlines = [];
      this.ended = { outcome: this.s.outcome, told: this.s.told };
    }
    if (event.type === 'shopChanged' && event.readAt !== undefined) {
      // A reading taken earlier is never applied after one taken later (same second or not).
      if (this.takenReadAt !== null && event.readAt < this.takenReadAt)
        throw new InvariantBroken(
          'a reading read earlier is never taken after a later one',
          `read at ${event.readAt} (modified ${event.modifiedAt}) taken after the reading read at ${this.takenReadAt}`,
        );
      this.takenReadAt = event.readAt;
    }
    this.check(before, event, commands);
  }

  private carryOut(command: ShipmentCommand<Req>): void {
    switch (command.type) {
      case 'createLabel':
        if (!this.calls.some((c) => c.revision === command.revision)) this.calls.push({ revision: command.revision, stop: false });
        return;
      case 'stopLabelCall':
        for (const c of this.calls) if (c.revision === command.revision) c.stop = true;
        return;
      case 'readOrder':
        this.reads.push(command.labelId);
        return;
      case 'watchTracking':
        this.membership = command.labelId;
        return;
      case 'unwatchTracking':
        if (this.membership === command.labelId) this.membership = null;
        return;
      case 'startDeadline':
        this.deadlines.push({ deadline: command.deadline, wait: command.wait });
        return;
      default:
        return;
    }
  }

  private check(before: MachineState<Req>, event: ShipmentEvent<Req>, commands: ShipmentCommand<Req>[]): void {
    const s = this.s;
    const fail = (invariant: string, detail: string) => {
      throw new InvariantBroken(invariant, `${detail} (after ${event.type})`);
    };
    if (event.type === 'runEnded') {
      // The run's end decides nothing: no command; a shipment the machine ended already stays as it was.
      if (commands.length > 0) fail('a run that ended decides nothing more', `runEnded gave ${commands.map((c) => c.type).join(', ')}`);
      if (before.phase === 'completed' && JSON.stringify(before) !== JSON.stringify(s))
        fail('a run that ended decides nothing more', 'runEnded changed a shipment the machine had ended');
      if (before.phase !== 'completed' && (s.phase !== 'completed' || s.outcome !== event.outcome))
        fail('a run that ended decides nothing more', `runEnded left it ${s.phase} (${s.outcome})`);
    } else if (this.ended) {
      // After it: no label asked, nothing more told to the shop (what the machine told before is
      // all the shell hands over), no tracking joined, no wait begun; the shipment stays ended.
      const asked = commands.filter((c) => !AFTER_THE_END.includes(c.type));
      if (asked.length > 0) fail('a run that ended decides nothing more', `${asked.map((c) => c.type).join(', ')} after the run ended`);
      if (s.told !== this.ended.told) fail('a run that ended decides nothing more', `told ${s.told} events, ${this.ended.told} at the end`);
      if (s.phase !== 'completed' || s.outcome !== this.ended.outcome)
        fail('a run that ended decides nothing more', `${s.phase} (${s.outcome}) after the run ended ${this.ended.outcome}`);
    }
    const withdrawn = s.shop !== null && isWithdrawn(s.shop.facts.status);
    for (const c of commands) {
      if (c.type === 'createLabel') {
        if (withdrawn || (before.shop && isWithdrawn(before.shop.facts.status)))
          fail('no label once the order is known cancelled', `revision ${c.revision} asked for a ${s.shop!.facts.status} order`);
        if (s.shop?.linesLeft === true)
          fail('no label for a parcel whose lines all left', `revision ${c.revision} asked after its lines moved to another location`);
        const earlier = this.requested.get(c.revision);
        if (earlier !== undefined && earlier !== c.labelRequest)
          fail('one label per revision', `revision ${c.revision} asked with ${earlier} and ${c.labelRequest}`);
        this.requested.set(c.revision, c.labelRequest);
      }
      if (c.type === 'tellShop') {
        const e = c.event;
        // Only the end of a shipment that never had a label may still be told (it writes nothing to the order).
        if (withdrawn && !(e.type === 'shipment.completed' && e.labelId === null))
          fail('nothing written to a withdrawn order', `${e.type} told to a ${s.shop!.facts.status} order`);
        if (e.seq !== this.lastSeq + 1) fail('shop events leave in order', `event ${e.seq} after ${this.lastSeq}`);
        this.lastSeq = e.seq;
        const body = JSON.stringify(e);
        const known = this.told.get(String(e.seq));
        if (known !== undefined && known !== body) fail('one body per event id', `event ${e.seq}`);
        this.told.set(String(e.seq), body);
      }
    }
    // Never two live labels: every label bought is the one followed, one replaced, or one left to void.
    for (const labelId of this.bought) {
      if (
        labelId !== s.labelId &&
        !s.replacedLabels.includes(labelId) &&
        !s.labelsToVoid.includes(labelId) &&
        s.relabel?.labelId !== labelId
      )
        fail('never two live labels', `${labelId} bought and not accounted for (following ${s.labelId})`);
    }
    const live = [s.labelId, ...(s.relabel?.labelId ? [s.relabel.labelId] : [])].filter((l) => l !== null);
    if (new Set(live).size > 1 && s.relabel?.stage !== 'reading') fail('never two live labels', live.join(', '));
    if (s.tracking.tag !== null && TERMINAL_TAGS.includes(s.tracking.tag) && s.phase !== 'completed')
      fail('a terminal tag ends tracking', `${s.tracking.tag} known, still ${s.phase}`);
    if (s.phase === 'tracking' && !s.relabel && this.membership !== s.labelId)
      fail('tracking is never orphaned', `tracking ${s.labelId}, no shard watches it`);
    // The workflow ends a waiting shipment at an operator's cancel; only a call out (or a relabel) answers first.
    if (s.cancelRequested && (s.phase === 'awaiting_correction' || s.phase === 'held_in_shop'))
      fail("an operator's cancel is not left waiting", `cancel requested, still ${s.phase}`);
    if (s.labelId !== null && withdrawn && s.phase !== 'completed' && !(s.shop!.attention && CANCELLED_MARKS.includes(s.shop!.attention)))
      fail(
        "an operator's action never erases a merchant's later change",
        `the order is ${s.shop!.facts.status}, the mark is ${s.shop!.attention}`,
      );
    if (event.type === 'attentionResolved' && (before.shop?.attention === 'address_changed' || before.shop?.attention === 'lines_changed'))
      this.changeResolved = true;
    if (
      event.type === 'shopChanged' &&
      before.labelId !== null &&
      (event.facts.address !== before.shop!.facts.address || event.facts.lines !== before.shop!.facts.lines)
    )
      this.changeResolved = false;
    // A person who resolved the change has seen it; otherwise the shop's changed order stays marked.
    if (s.shop?.offer != null && s.shop.attention === null && s.phase !== 'completed' && !this.changeResolved)
      fail("an operator's action never erases a merchant's later change", "the shop's changed order waits for an operator, unmarked");
    // The workflow's relabel answers at the machine's end of it: exactly once, when the relabel in flight is over.
    const ends = commands.filter((c) => c.type === 'relabelEnded').length;
    if (ends !== (before.relabel && !s.relabel ? 1 : 0))
      fail(
        "a relabel's end is said once",
        `${ends} relabelEnded, relabel ${before.relabel ? 'was' : 'was not'} in flight, ${s.relabel ? 'is' : 'is not'} now`,
      );
    if (before.relabel && !s.relabel) {
      if (this.changedDuringRelabel && s.shop!.attention === null)
        fail("an operator's action never erases a merchant's later change", 'the relabel cleared the mark of a change made while it ran');
      this.changedDuringRelabel = false;
    }
  }
}
