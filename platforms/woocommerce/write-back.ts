/**
 * What each shipment event does on a WooCommerce site (docs/shop-platforms.md, "What each event
 * does"), exactly once although no call takes an idempotency key: before each write the
 * connector reads what the order already has and adopts it instead of writing again. What it
 * writes is recognisable as its own (a tracking item by the label's number, a note by its text
 * ending with the event's reference), so a copy a slow host applied late is found and deleted.
 * An order the merchant withdrew gets nothing written, whatever the event.
 */
import { z } from 'zod';
import type { LabelCreatedData, LabelRejectedData, TrackingUpdatedData } from '../../domain/events';
import {
  StopDelivery,
  applyEvent,
  noteUncertainWrite,
  type PlatformConnection,
  type PlatformDelivery,
  type PlatformResult,
} from '../connection/result';
import { WooClient } from './client';
import type { WooCommerceConnector } from './settings';
import { deliveredNote, isMarked, labelNote, markNote, rejectedNote, trackingNote } from './notes';
import { storeDate, storeOffsetMs } from './store-time';

const Order = z
  .object({
    id: z.number().int(),
    status: z.string(),
    date_modified: z.string().max(40).nullish(),
    date_modified_gmt: z.string().max(40).nullish(),
  })
  .loose();
type Order = z.infer<typeof Order>;
const Note = z.object({ id: z.number().int(), note: z.string(), customer_note: z.boolean() }).loose();
const TrackingItem = z.object({ tracking_id: z.union([z.string(), z.number()]).transform(String), tracking_number: z.string() }).loose();

/** Statuses an order never leaves because of a tracking event. */
const SETTLED = new Set(['completed', 'refunded', 'cancelled', 'failed', 'trash']);
/** The merchant withdrew the order: nothing more is written to it. */
const WITHDRAWN = new Set(['cancelled', 'refunded', 'trash']);
/** The extension's providers: country → provider name → link template. */
const Providers = z.record(z.string().max(100), z.record(z.string().max(100), z.string().max(1000)));
const PROVIDERS_RECHECK_MS = 60 * 60_000;
/** How long a detected presence or absence of the Shipment Tracking extension is trusted. */
const EXTENSION_RECHECK_MS = 10 * 60_000;

export class WooCommerceConnection implements PlatformConnection {
  private extension: { installed: boolean; at: number } | null = null;
  private providers: { names: Map<string, string>; at: number } | null = null;

  constructor(
    private readonly connector: WooCommerceConnector,
    private readonly client: WooClient = new WooClient(connector),
    private readonly now: () => number = Date.now,
  ) {}

  deliver(delivery: PlatformDelivery): Promise<PlatformResult> {
    if (!/^[1-9][0-9]{0,19}$/.test(delivery.platformOrderId)) {
      const message = `platformOrderId ${delivery.platformOrderId} is not a WooCommerce order id (digits)`;
      return Promise.resolve({ kind: 'rejected', status: 400, bodyExcerpt: message });
    }
    return applyEvent(delivery, this);
  }

  async labelCreated(d: PlatformDelivery, label: LabelCreatedData): Promise<void> {
    const order = await this.readOrder(d);
    if (WITHDRAWN.has(order.status)) return;
    if (label.replaces?.trackingNumber) await this.dropReplaced(d, label.replaces.trackingNumber);
    if (label.trackingNumber === null) return this.addNote(d, labelNote(label, null, this.carrierName(label.courier)), false);
    await this.ensureTracking(d, order, label.courier, label.trackingNumber, label);
  }

  async trackingUpdated(d: PlatformDelivery, tracking: TrackingUpdatedData): Promise<void> {
    const order = await this.readOrder(d);
    if (WITHDRAWN.has(order.status)) return;
    // Read every time, not only when the item is unknown: a copy a slow host applied late is removed here.
    if (tracking.trackingNumber) await this.ensureTracking(d, order, d.courier, tracking.trackingNumber, null);
    const delivered = tracking.tag === 'Delivered';
    await this.addNote(d, delivered ? deliveredNote(tracking) : trackingNote(tracking), this.connector.customerNotes);
    const status = this.connector.deliveredStatus;
    if (delivered && status !== null && order.status !== status && !SETTLED.has(order.status)) await this.setStatus(d, status);
  }

  async labelRejected(d: PlatformDelivery, rejection: LabelRejectedData): Promise<void> {
    const order = await this.readOrder(d);
    if (WITHDRAWN.has(order.status)) return;
    await this.addNote(d, rejectedNote(rejection), false);
    const status = this.connector.rejectedStatus;
    if (status !== null && (order.status === 'processing' || order.status === 'pending')) await this.setStatus(d, status);
  }

  /**
   * The label's tracking number as a Shipment Tracking item (adopting one already there, deleting
   * any later copy of it), else as a note. Shipped today in the store's time zone.
   */
  private async ensureTracking(
    d: PlatformDelivery,
    order: Order,
    courier: string | null,
    number: string,
    label: LabelCreatedData | null,
  ): Promise<void> {
    const path = `wc-shipment-tracking/v3/orders/${d.platformOrderId}/shipment-trackings`;
    const items = await this.trackingItems(d, path);
    if (items === null) return this.addNote(d, labelNote(label, number, this.carrierName(courier)), this.connector.customerNotes);
    const ours = items.filter((item) => item.tracking_number === number);
    const kept = ours.find((item) => item.tracking_id === d.refs.trackingItemId) ?? ours[0];
    if (kept) {
      d.refs.trackingItemId = kept.tracking_id;
      for (const copy of ours) if (copy !== kept) await this.call(d, 'DELETE', `${path}/${copy.tracking_id}`, TrackingItem);
      return;
    }
    // A tracking update adds no second item while the label's is there (a relabel deleted the replaced label's).
    if (label === null && items.some((item) => item.tracking_id === d.refs.trackingItemId)) return;
    const body = {
      tracking_number: number,
      ...(await this.providerFields(d, courier, number)),
      date_shipped: storeDate(this.now(), storeOffsetMs(order)),
    };
    const created = await this.call(d, 'POST', path, TrackingItem, { body });
    d.refs.trackingItemId = created.data!.tracking_id;
  }

  /**
   * A relabel: the replaced label's tracking items are deleted before the new label's is added,
   * so the order shows only the parcel that is followed (a retry finds them gone and deletes nothing).
   */
  private async dropReplaced(d: PlatformDelivery, number: string): Promise<void> {
    const path = `wc-shipment-tracking/v3/orders/${d.platformOrderId}/shipment-trackings`;
    const items = await this.trackingItems(d, path);
    for (const item of items ?? [])
      if (item.tracking_number === number) await this.call(d, 'DELETE', `${path}/${item.tracking_id}`, TrackingItem);
  }

  /**
   * The provider of a courier: a name the extension lists (it stores an unknown name with an empty
   * provider and link, so names are checked against its /providers first), else a custom provider
   * with the finished link (the extension does not fill in %1$s).
   */
  private async providerFields(d: PlatformDelivery, courier: string | null, number: string): Promise<Record<string, string>> {
    const provider = courier === null ? undefined : this.connector.providers[courier];
    if (provider?.kind === 'provider') {
      const known = (await this.knownProviders(d)).get(provider.name.toLowerCase());
      if (known) return { tracking_provider: known };
    }
    const link = provider?.kind === 'custom' && provider.link ? provider.link.replaceAll('%1$s', encodeURIComponent(number)) : null;
    return { custom_tracking_provider: provider?.name ?? courier ?? 'Carrier', ...(link ? { custom_tracking_link: link } : {}) };
  }

  /** Provider names of the extension, lower-cased → as listed; read once an hour. */
  private async knownProviders(d: PlatformDelivery): Promise<Map<string, string>> {
    if (this.providers && this.now() - this.providers.at < PROVIDERS_RECHECK_MS) return this.providers.names;
    const answer = await this.call(d, 'GET', 'wc-shipment-tracking/v3/shipment-trackings/providers', Providers);
    const names = new Map<string, string>();
    for (const country of Object.values(answer.data!)) for (const name of Object.keys(country)) names.set(name.toLowerCase(), name);
    this.providers = { names, at: this.now() };
    return names;
  }

  /** A courier as the merchant knows it: its provider's name when the connector maps it, else its code. */
  private carrierName(courier: string | null): string | null {
    return (courier === null ? undefined : this.connector.providers[courier]?.name) ?? courier;
  }

  /** The order's tracking items, or null when the Shipment Tracking extension is not installed. */
  private async trackingItems(d: PlatformDelivery, path: string) {
    if (this.extension && !this.extension.installed && this.now() - this.extension.at < EXTENSION_RECHECK_MS) return null;
    const answer = await this.call(d, 'GET', path, z.array(TrackingItem).max(100), { expect: [404] });
    if (answer.status === 404 && answer.errorCode !== 'rest_no_route')
      throw new StopDelivery({ kind: 'rejected', status: 404, bodyExcerpt: `GET ${path}: ${answer.errorCode ?? 'not found'}` });
    this.extension = { installed: answer.status !== 404, at: this.now() };
    return answer.data;
  }

  /**
   * Adds the event's note unless the order already says it (an earlier attempt's write, or the
   * same words from an earlier event, also from before notes were marked). Copies of any of our
   * notes beyond the oldest (a slow host applied a write that was sent again) are deleted.
   */
  private async addNote(d: PlatformDelivery, text: string, customerNote: boolean): Promise<void> {
    const path = `wc/v3/orders/${d.platformOrderId}/notes`;
    const notes = (await this.call(d, 'GET', path, z.array(Note).max(1000))).data!;
    for (const copy of laterCopies(notes)) await this.call(d, 'DELETE', `${path}/${copy.id}?force=true`, Note);
    if (notes.some((n) => n.note === text || n.note.startsWith(`${text} (ref `))) return;
    await this.call(d, 'POST', path, Note, { body: { note: markNote(text, d.event.id), customer_note: customerNote } });
  }

  private async setStatus(d: PlatformDelivery, status: string): Promise<void> {
    await this.call(d, 'PUT', `wc/v3/orders/${d.platformOrderId}`, Order, { body: { status } });
  }

  /** One call of this delivery: its signal, and its longest wait for the site's Retry-After. */
  private call<T>(
    d: PlatformDelivery,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    schema: z.ZodType<T>,
    options: { body?: unknown; expect?: number[] } = {},
  ) {
    return noteUncertainWrite(d, method !== 'GET', () =>
      this.client.call(method, path, schema, d.signal, { ...options, maxWaitMs: d.maxWaitMs }),
    );
  }

  private async readOrder(d: PlatformDelivery): Promise<Order> {
    const answer = await this.call(d, 'GET', `wc/v3/orders/${d.platformOrderId}`, Order, { expect: [404] });
    if (answer.data === null)
      throw new StopDelivery({
        kind: 'rejected',
        status: 404,
        bodyExcerpt: `order ${d.platformOrderId} not found on ${this.connector.siteUrl} (${answer.errorCode ?? '404'}): check the record's platformOrderId`,
      });
    return answer.data;
  }
}

/** Our marked notes written twice: every copy but the oldest (the lowest id) of each text. */
function laterCopies(notes: Array<z.infer<typeof Note>>): Array<z.infer<typeof Note>> {
  const oldest = new Map<string, number>();
  for (const n of notes) if (isMarked(n.note)) oldest.set(n.note, Math.min(oldest.get(n.note) ?? Infinity, n.id));
  return notes.filter((n) => isMarked(n.note) && oldest.get(n.note) !== n.id);
}
