/**
 * What each shipment event does on a Shopify store (docs/shop-platforms.md, "What each event
 * does"), exactly once although no fulfillment mutation takes an idempotency key: before each
 * write the connector reads what the store already has (the order's fulfillments, their
 * tracking and events) and adopts it, so a retry after a lost answer finds its own earlier write.
 */
import type { LabelCreatedData, LabelRejectedData, TrackingUpdatedData } from '../../domain/events';
import {
  StopDelivery,
  applyEvent,
  noteUncertainWrite,
  type PlatformConnection,
  type PlatformDelivery,
  type PlatformResult,
} from '../connection/result';
import { ShopifyClient } from './client';
import type { ShopifyConnector } from './settings';
import { fulfillmentEventStatus, type FulfillmentEventStatus } from './event-status';
import * as op from './operations';
import type { Operation } from './client';

const FULFILLABLE = new Set(['OPEN', 'IN_PROGRESS']);
const HELD = new Set(['ON_HOLD', 'SCHEDULED']);
/** 25 pages of 10 after the first 4: an order's 254 fulfillment orders at most are looked at. */
const MAX_FULFILLMENT_ORDER_PAGES = 25;

export class ShopifyConnection implements PlatformConnection {
  constructor(
    private readonly connector: ShopifyConnector,
    readonly client: ShopifyClient = new ShopifyClient(connector),
  ) {}

  deliver(delivery: PlatformDelivery): Promise<PlatformResult> {
    return applyEvent(delivery, this);
  }

  // ---------------------------------------------------------------- label.created

  async labelCreated(d: PlatformDelivery, label: LabelCreatedData): Promise<void> {
    const tracking = this.trackingInput(label.courier, label.trackingNumber);
    if (d.refs.fulfillmentId) return this.ensureTracking(d, d.refs.fulfillmentId, tracking);
    const order = await this.readOrder(d);
    // A relabel's fulfillment is the replaced label's: its tracking becomes the new label's.
    const ours =
      (await this.findOurs(d, order.fulfillments, label.trackingNumber, order)) ??
      (label.replaces ? await this.findOurs(d, order.fulfillments, label.replaces.trackingNumber, order) : null);
    if (ours) {
      d.refs.fulfillmentId = ours.id;
      return this.ensureTracking(d, ours.id, tracking);
    }
    // A parcel of an order shipping from several locations fulfils its own location's fulfillment orders only.
    const open = order.fulfillmentOrders.nodes.filter(
      (fo) => FULFILLABLE.has(fo.status) && (d.location === undefined || locationOf(fo) === d.location),
    );
    if (open.length === 0) return this.nothingToFulfil(order);
    // One fulfillment is one location's parcel: Shopify refuses fulfillment orders of two locations in one call.
    const location = open[0]!.assignedLocation.location?.id ?? null;
    const fulfillmentOrders = open.filter((fo) => (fo.assignedLocation.location?.id ?? null) === location);
    const created = await this.call(
      op.fulfillmentCreate,
      {
        fulfillment: {
          lineItemsByFulfillmentOrder: fulfillmentOrders.map((fo) => ({ fulfillmentOrderId: fo.id })),
          notifyCustomer: this.connector.notifyCustomer,
          ...(tracking ? { trackingInfo: tracking } : {}),
        },
      },
      d,
    );
    const payload = created.fulfillmentCreate;
    if (payload?.fulfillment) {
      d.refs.fulfillmentId = payload.fulfillment.id;
      return;
    }
    // "unfulfillable status= closed" or a quantity error: another attempt's write may have landed meanwhile.
    const again = await this.readOrder(d);
    const adopted = await this.findOurs(d, again.fulfillments, label.trackingNumber, again);
    if (adopted) {
      d.refs.fulfillmentId = adopted.id;
      return;
    }
    throw rejected('fulfillmentCreate', payload?.userErrors ?? []);
  }

  /**
   * Our fulfillment among the order's: the one with our tracking number; without a number, the
   * only one without tracking once no fulfillment order is left open (our earlier write's answer
   * was lost). A parcel of a split order looks at its own location only: another location may
   * still be open, or fulfilled without tracking too (a label has no number until the carrier
   * gives one), and neither says anything of this parcel's write.
   */
  private async findOurs(
    d: PlatformDelivery,
    fulfillments: op.FulfillmentSummary[],
    number: string | null,
    order: { fulfillmentOrders: { nodes: op.FulfillmentOrder[] } },
  ): Promise<op.FulfillmentSummary | null> {
    const live = fulfillments.filter((f) => f.status !== 'CANCELLED');
    if (number !== null) return live.find((f) => f.trackingInfo.some((t) => t.number === number)) ?? null;
    const mine = (fo: op.FulfillmentOrder) => d.location === undefined || locationOf(fo) === d.location;
    const stillOpen = order.fulfillmentOrders.nodes.some((fo) => FULFILLABLE.has(fo.status) && mine(fo));
    let untracked = live.filter((f) => f.trackingInfo.every((t) => !t.number));
    if (stillOpen || untracked.length === 0) return null;
    if (d.location !== undefined) {
      // Read only here (a lost answer of a label without a number): the order's read stays within a development store's bucket.
      const { order: located } = await this.call(op.readFulfillmentLocations, { id: orderGid(d.platformOrderId) }, d);
      const at = new Map((located?.fulfillments ?? []).map((f) => [f.id, gidTail(f.location?.id)]));
      untracked = untracked.filter((f) => at.get(f.id) === d.location);
    }
    return untracked.length === 1 ? untracked[0]! : null;
  }

  /** Every fulfillment order is closed by someone else, or held: say which, write nothing. */
  private nothingToFulfil(order: { id: string; fulfillmentOrders: { nodes: op.FulfillmentOrder[] } }): void {
    const held = order.fulfillmentOrders.nodes.filter((fo) => HELD.has(fo.status));
    if (held.length > 0)
      throw new StopDelivery({
        kind: 'rejected',
        status: 200,
        bodyExcerpt: `order ${order.id}: its fulfillment orders are ${held.map((fo) => fo.status).join(', ')}; release them in Shopify, then redeliver`,
      });
    // Fulfilled outside this worker (by hand, or another app): nothing of ours to write, later events have no fulfillment to attach to.
  }

  private async ensureTracking(d: PlatformDelivery, fulfillmentId: string, tracking: TrackingInput | null): Promise<void> {
    if (!tracking) return;
    const fulfillment = await this.readFulfillment(d, fulfillmentId);
    if (fulfillment.trackingInfo.some((t) => t.number === tracking.number)) return;
    const updated = await this.call(
      op.fulfillmentTrackingInfoUpdate,
      { fulfillmentId, trackingInfoInput: tracking, notifyCustomer: this.connector.notifyCustomer },
      d,
    );
    const payload = updated.fulfillmentTrackingInfoUpdate;
    if (!payload?.fulfillment) throw rejected('fulfillmentTrackingInfoUpdate', payload?.userErrors ?? []);
  }

  // ---------------------------------------------------------------- tracking.updated

  async trackingUpdated(d: PlatformDelivery, tracking: TrackingUpdatedData): Promise<void> {
    const fulfillmentId = d.refs.fulfillmentId ?? (await this.adoptForTracking(d, tracking.trackingNumber));
    if (!fulfillmentId) return; // no fulfillment of ours on the order (fulfilled elsewhere): nothing to attach to
    const fulfillment = await this.readFulfillment(d, fulfillmentId);
    if (tracking.trackingNumber && !fulfillment.trackingInfo.some((t) => t.number === tracking.trackingNumber)) {
      const company = fulfillment.trackingInfo[0]?.company ?? null;
      const input = this.trackingInput(d.courier ?? '', tracking.trackingNumber, company);
      const updated = await this.call(
        op.fulfillmentTrackingInfoUpdate,
        { fulfillmentId, trackingInfoInput: input, notifyCustomer: this.connector.notifyCustomer },
        d,
      );
      if (!updated.fulfillmentTrackingInfoUpdate?.fulfillment)
        throw rejected('fulfillmentTrackingInfoUpdate', updated.fulfillmentTrackingInfoUpdate?.userErrors ?? []);
    }
    const status = fulfillmentEventStatus(tracking.tag, tracking.subtag, this.connector.eventStatuses);
    if (status === null) return;
    const checkpoint = tracking.lastCheckpoint;
    // Without a checkpoint there is no carrier time: matched on the status alone, and placed where it blocks no later scan.
    const checkpointTime = checkpoint?.checkpointTime ? wholeSeconds(checkpoint.checkpointTime) : null;
    const events = fulfillment.events.nodes;
    const happenedAt = checkpointTime ?? wholeSeconds(timelineEnd(events, fulfillment.createdAt));
    if (!isNews(events, status, checkpointTime, fulfillment.createdAt)) return;
    const created = await this.call(
      op.fulfillmentEventCreate,
      {
        fulfillmentEvent: {
          fulfillmentId,
          status,
          happenedAt,
          message: clip(checkpoint?.message ?? tracking.subtagMessage ?? null, 255),
          city: clip(checkpoint?.city ?? null, 100),
          country: clip(checkpoint?.countryRegion ?? null, 100),
          address1: clip(checkpoint?.location ?? null, 255),
        },
      },
      d,
    );
    if (!created.fulfillmentEventCreate?.fulfillmentEvent)
      throw rejected('fulfillmentEventCreate', created.fulfillmentEventCreate?.userErrors ?? []);
  }

  private async adoptForTracking(d: PlatformDelivery, number: string | null): Promise<string | null> {
    const order = await this.readOrder(d);
    const ours = await this.findOurs(d, order.fulfillments, number, order);
    if (ours) d.refs.fulfillmentId = ours.id;
    return ours?.id ?? null;
  }

  // ---------------------------------------------------------------- label.rejected

  async labelRejected(d: PlatformDelivery, rejection: LabelRejectedData): Promise<void> {
    const { tag, note } = this.connector.onLabelRejected;
    if (tag === null && !note) return;
    const order = await this.readOrder(d);
    if (tag !== null && !order.tags.includes(tag)) {
      const added = await this.call(op.tagsAdd, { id: order.id, tags: [tag] }, d);
      if (added.tagsAdd?.userErrors.length) throw rejected('tagsAdd', added.tagsAdd.userErrors);
    }
    if (!note) return;
    const line = clip(`Shipping label rejected (revision ${rejection.revision}): ${rejection.courierMessage ?? rejection.message}`, 500)!;
    if ((order.note ?? '').includes(line)) return;
    const updated = await this.call(op.orderNoteUpdate, { input: { id: order.id, note: order.note ? `${order.note}\n${line}` : line } }, d);
    if (updated.orderUpdate?.userErrors.length) throw rejected('orderUpdate', updated.orderUpdate.userErrors);
  }

  // ---------------------------------------------------------------- reads and calls

  private async readOrder(d: PlatformDelivery) {
    const id = orderGid(d.platformOrderId);
    const { order } = await this.call(op.readOrder, { id }, d);
    if (!order)
      throw new StopDelivery({
        kind: 'rejected',
        status: 200,
        bodyExcerpt: `order ${id} not found on ${this.connector.storeDomain}: check the record's platformOrderId`,
      });
    // More than 4 fulfillment orders (several locations, or a merchant's splits): the rest in pages, bounded.
    const fulfillmentOrders = [...order.fulfillmentOrders.nodes];
    let page = order.fulfillmentOrders.pageInfo;
    for (let pages = 0; page.hasNextPage && page.endCursor && pages < MAX_FULFILLMENT_ORDER_PAGES; pages++) {
      const more = (await this.call(op.readFulfillmentOrders, { id, after: page.endCursor }, d)).order?.fulfillmentOrders;
      if (!more || more.nodes.length === 0) break;
      fulfillmentOrders.push(...more.nodes);
      page = more.pageInfo;
    }
    return { ...order, fulfillmentOrders: { pageInfo: page, nodes: fulfillmentOrders } };
  }

  private async readFulfillment(d: PlatformDelivery, id: string) {
    const { fulfillment } = await this.call(op.readFulfillment, { id }, d);
    if (!fulfillment)
      throw new StopDelivery({
        kind: 'rejected',
        status: 200,
        bodyExcerpt: `fulfillment ${id} not found on ${this.connector.storeDomain}`,
      });
    return fulfillment;
  }

  private call<T>(operation: Operation<T>, variables: Record<string, unknown>, d: PlatformDelivery): Promise<T> {
    const isWrite = operation.document.trimStart().startsWith('mutation');
    return noteUncertainWrite(d, isWrite, () => this.client.call(operation, variables, d.signal, d.maxWaitMs));
  }

  /** Tracking company, number and (for a carrier with a link template) URL; null without a number. */
  private trackingInput(courier: string, number: string | null, company?: string | null): TrackingInput | null {
    if (number === null) return null;
    const carrier = this.connector.carriers[courier];
    const url = carrier?.trackingUrl?.replace('{number}', encodeURIComponent(number));
    return { company: company ?? carrier?.company ?? courier, number, ...(url ? { url } : {}) };
  }
}

interface TrackingInput {
  company: string;
  number: string;
  url?: string;
}

/**
 * Whether an event adds to the fulfillment's timeline: not one already there (same status and
 * checkpoint time, or same status when there is no checkpoint time: an earlier attempt's write),
 * nothing after DELIVERED, nothing older than the newest carrier time (a late one). Times at or
 * before the fulfillment's creation (`since`) are no carrier's news: an event without a
 * checkpoint is stamped there or at the newest time already on the timeline (timelineEnd), so it
 * never makes a later real scan look late.
 */
export function isNews(
  events: op.FulfillmentEvent[],
  status: FulfillmentEventStatus,
  checkpointTime: string | null,
  since: string | null = null,
): boolean {
  const second = (iso: string) => Math.floor(Date.parse(iso) / 1000);
  const at = checkpointTime === null ? null : second(checkpointTime);
  const times = events.map((e) => (e.happenedAt ? second(e.happenedAt) : Number.NaN));
  if (events.some((e, i) => e.status === status && (at === null || times[i] === at))) return false;
  if (status !== 'DELIVERED' && events.some((e) => e.status === 'DELIVERED')) return false;
  const start = since === null ? -Infinity : second(since);
  const newest = Math.max(-Infinity, ...times.filter((t) => !Number.isNaN(t) && t > start));
  return at === null || at >= newest;
}

/** Where an event without a checkpoint goes: the newest time on the timeline, else the fulfillment's creation. */
export function timelineEnd(events: op.FulfillmentEvent[], createdAt: string): string {
  const times = events.map((e) => (e.happenedAt ? Date.parse(e.happenedAt) : Number.NaN)).filter((t) => !Number.isNaN(t));
  return new Date(Math.max(Date.parse(createdAt), ...times)).toISOString();
}

/** Shopify keeps DateTime to the second: times are compared (and sent) as it keeps them. */
function wholeSeconds(iso: string): string {
  return new Date(Math.floor(Date.parse(iso) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A fulfillment order's location as parcels name it: the numeric id of its gid. */
function locationOf(fo: op.FulfillmentOrder): string | null {
  return gidTail(fo.assignedLocation.location?.id);
}

function gidTail(gid: string | undefined): string | null {
  return gid ? gid.slice(gid.lastIndexOf('/') + 1) : null;
}

export function orderGid(platformOrderId: string): string {
  return platformOrderId.startsWith('gid://') ? platformOrderId : `gid://shopify/Order/${platformOrderId}`;
}

function rejected(mutation: string, userErrors: op.UserErrors): StopDelivery {
  const text =
    userErrors.map((e) => `${e.field?.join('.') ?? ''}${e.field?.length ? ': ' : ''}${e.message}`).join('; ') ||
    'no result and no userErrors';
  return new StopDelivery({ kind: 'rejected', status: 200, bodyExcerpt: `${mutation}: ${text}`.slice(0, 400) });
}

function clip(text: string | null, max: number): string | null {
  if (text === null || text === '') return null;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
