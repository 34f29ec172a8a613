/**
 * What the reference receiver does with verified events, kept apart from HTTP so it reads
 * like a recipe for a real shop integration:
 *
 * - de-duplicate on webhook-id (= event id): a retry of a delivered event changes nothing;
 * - keep the latest state per order, field by field: each field remembers the sequence that
 *   last set it and only a higher sequence may overwrite it. A late event therefore never
 *   downgrades a newer state (a late "InTransit" after "Delivered"), yet still fills in what
 *   no newer event told (a label link that arrives after the first tracking update);
 * - record every arrival so tests can assert order: sequences in arrival order, gaps,
 *   out-of-order arrivals, and the sequences still missing.
 */
import type { LastCheckpoint, Outcome, ShipmentEvent, ShipmentEventType } from '../domain/events';

export interface OrderRejection {
  revision: number;
  kind: string;
  courierCode: string | null;
  courierMessage: string | null;
  message: string;
}

export interface OrderView {
  shop: string;
  orderId: string;
  labelId: string | null;
  labelUrl: string | null;
  revision: number | null;
  courier: string | null;
  trackingNumber: string | null;
  tag: string | null;
  subtag: string | null;
  subtagMessage: string | null;
  lastCheckpoint: LastCheckpoint | null;
  outcome: Outcome | null;
  outcomeReason: string | null;
  /** The open label rejection; cleared by a label.created of a later sequence. */
  rejection: OrderRejection | null;
  /** Highest sequence received (and applied). */
  lastSequence: number;
  lastType: ShipmentEventType;
  /** occurredAt of the event with the highest sequence. */
  lastOccurredAt: string;
  /** When the last event (of any sequence) arrived here. */
  lastReceivedAt: string;
  /** Sequences in arrival order, duplicates excluded. */
  received: number[];
  /** Sequences below lastSequence that have not arrived (yet). */
  missing: number[];
  /** Some event arrived with a sequence more than one above the highest before it. */
  gap: boolean;
  /** Some event arrived after one with a higher sequence. */
  outOfOrder: boolean;
  /** Repeated deliveries of an event already received. */
  duplicates: number;
}

export type ApplyStatus = 'applied' | 'late' | 'duplicate';

export interface LoggedEvent {
  receivedAt: string;
  webhookId: string;
  /** applied: the newest event of its order; late: older than one already received (merged). */
  status: Exclude<ApplyStatus, 'duplicate'>;
  event: ShipmentEvent;
}

type Field = Exclude<
  keyof OrderView,
  | 'shop'
  | 'orderId'
  | 'lastSequence'
  | 'lastType'
  | 'lastOccurredAt'
  | 'lastReceivedAt'
  | 'received'
  | 'missing'
  | 'gap'
  | 'outOfOrder'
  | 'duplicates'
>;

interface OrderRecord {
  view: OrderView;
  /** Sequence that last set each field. */
  setBy: Partial<Record<Field, number>>;
}

/** Most recent events kept for GET /api/events; older ones are dropped. */
export const EVENT_LOG_LIMIT = 10_000;

export class ReceiverStore {
  private readonly orders = new Map<string, OrderRecord>();
  private readonly seen = new Set<string>();
  private log: LoggedEvent[] = [];

  /** Applies a verified, schema-valid event delivered under `webhookId`. */
  apply(webhookId: string, event: ShipmentEvent, receivedAt: Date = new Date()): { status: ApplyStatus; order: OrderView } {
    const key = `${event.shop}\u0000${event.orderId}`;
    const at = receivedAt.toISOString();
    if (this.seen.has(webhookId)) {
      const record = this.orders.get(key);
      if (record) record.view.duplicates += 1;
      return { status: 'duplicate', order: structuredClone((record ?? this.create(key, event, at)).view) };
    }
    this.seen.add(webhookId);

    const record = this.orders.get(key) ?? this.create(key, event, at);
    const view = record.view;
    const highest = view.received.length === 0 ? 0 : view.lastSequence;
    const seq = event.sequence;
    if (seq > highest + 1) view.gap = true;
    if (seq < highest) view.outOfOrder = true;
    view.received.push(seq);
    view.lastReceivedAt = at;
    const status: 'applied' | 'late' = seq > highest ? 'applied' : 'late';
    if (status === 'applied') {
      view.lastSequence = seq;
      view.lastType = event.type;
      view.lastOccurredAt = event.occurredAt;
    }
    const got = new Set(view.received);
    view.missing = [];
    for (let n = 1; n < view.lastSequence; n++) if (!got.has(n)) view.missing.push(n);

    const set = <F extends Field>(field: F, value: OrderView[F]): void => {
      if ((record.setBy[field] ?? 0) > seq) return;
      view[field] = value;
      record.setBy[field] = seq;
    };
    // An unknown (null) tracking number or tag never erases a known one.
    const setKnown = (field: 'trackingNumber' | 'tag', value: string | null): void => {
      if (value !== null) set(field, value);
    };
    switch (event.type) {
      case 'label.created':
        set('labelId', event.data.labelId);
        set('labelUrl', event.data.labelUrl);
        set('revision', event.data.revision);
        set('courier', event.data.courier);
        set('rejection', null);
        setKnown('trackingNumber', event.data.trackingNumber);
        break;
      case 'label.rejected': {
        const { revision, kind, courierCode, courierMessage, message } = event.data;
        set('revision', revision);
        set('rejection', { revision, kind, courierCode, courierMessage, message });
        break;
      }
      case 'tracking.updated':
        set('tag', event.data.tag);
        set('subtag', event.data.subtag);
        set('subtagMessage', event.data.subtagMessage);
        set('lastCheckpoint', event.data.lastCheckpoint);
        setKnown('trackingNumber', event.data.trackingNumber);
        break;
      case 'shipment.completed':
        set('outcome', event.data.outcome);
        set('outcomeReason', event.data.reason);
        setKnown('tag', event.data.tag);
        setKnown('trackingNumber', event.data.trackingNumber);
        break;
    }

    this.log.push({ receivedAt: at, webhookId, status, event });
    if (this.log.length > EVENT_LOG_LIMIT) this.log = this.log.slice(-EVENT_LOG_LIMIT);
    return { status, order: structuredClone(view) };
  }

  orderViews(): OrderView[] {
    return [...this.orders.values()].map((r) => structuredClone(r.view));
  }

  events(): LoggedEvent[] {
    return structuredClone(this.log);
  }

  clear(): void {
    this.orders.clear();
    this.seen.clear();
    this.log = [];
  }

  private create(key: string, event: ShipmentEvent, at: string): OrderRecord {
    const record: OrderRecord = {
      view: {
        shop: event.shop,
        orderId: event.orderId,
        labelId: null,
        labelUrl: null,
        revision: null,
        courier: null,
        trackingNumber: null,
        tag: null,
        subtag: null,
        subtagMessage: null,
        lastCheckpoint: null,
        outcome: null,
        outcomeReason: null,
        rejection: null,
        lastSequence: 0,
        lastType: event.type,
        lastOccurredAt: event.occurredAt,
        lastReceivedAt: at,
        received: [],
        missing: [],
        gap: false,
        outOfOrder: false,
        duplicates: 0,
      },
      setBy: {},
    };
    this.orders.set(key, record);
    return record;
  }
}
