/**
 * What each shipment event does on a WooCommerce site, exactly once although no call takes an
 * idempotency key: before each write the connector reads what the order already has (its
 * tracking items, its notes, its status) and adopts it instead of writing again.
 *
 *   label.created      a Shipment Tracking item (provider, or custom provider + link); an order
 *                      note instead when the extension is not installed (detected, not configured)
 *   tracking.updated   a tracking item if the number appears later; an order note (private unless
 *                      customerNotes); on Delivered the order gets deliveredStatus (completed)
 *   label.rejected     a private note, and rejectedStatus (on-hold) for an order still processing
 *   shipment.completed nothing: its outcome reached the order as tracking
 */
import { z } from 'zod';
import type { LabelCreatedData, LabelRejectedData, TrackingUpdatedData } from '../../domain/events';
import { StopDelivery, applyEvent, type PlatformConnection, type PlatformDelivery, type PlatformResult } from '../platform/result';
import { WooClient } from './client';
import type { WooCommerceConnector } from './config';
import { deliveredNote, labelNote, rejectedNote, trackingNote } from './notes';

const Order = z.object({ id: z.number().int(), status: z.string() }).loose();
const Note = z.object({ id: z.number().int(), note: z.string(), customer_note: z.boolean() }).loose();
const TrackingItem = z.object({ tracking_id: z.union([z.string(), z.number()]).transform(String), tracking_number: z.string() }).loose();

/** Statuses an order never leaves because of a tracking event. */
const SETTLED = new Set(['completed', 'refunded', 'cancelled', 'failed', 'trash']);
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
    await this.readOrder(d);
    if (label.trackingNumber === null) return this.addNote(d, labelNote(label, null, this.carrierName(label.courier)), false);
    await this.ensureTracking(d, label.courier, label.trackingNumber, label);
  }

  async trackingUpdated(d: PlatformDelivery, tracking: TrackingUpdatedData): Promise<void> {
    const order = await this.readOrder(d);
    if (tracking.trackingNumber && !d.refs.trackingItemId) await this.ensureTracking(d, d.courier, tracking.trackingNumber, null);
    const delivered = tracking.tag === 'Delivered';
    await this.addNote(d, delivered ? deliveredNote(tracking) : trackingNote(tracking), this.connector.customerNotes);
    const status = this.connector.deliveredStatus;
    if (delivered && status !== null && order.status !== status && !SETTLED.has(order.status)) await this.setStatus(d, status);
  }

  async labelRejected(d: PlatformDelivery, rejection: LabelRejectedData): Promise<void> {
    const order = await this.readOrder(d);
    await this.addNote(d, rejectedNote(rejection), false);
    const status = this.connector.rejectedStatus;
    if (status !== null && (order.status === 'processing' || order.status === 'pending')) await this.setStatus(d, status);
  }

  /** The label's tracking number as a Shipment Tracking item (adopting one already there), else as a note. */
  private async ensureTracking(d: PlatformDelivery, courier: string | null, number: string, label: LabelCreatedData | null): Promise<void> {
    const path = `wc-shipment-tracking/v3/orders/${d.platformOrderId}/shipment-trackings`;
    const items = await this.trackingItems(d, path);
    if (items === null) return this.addNote(d, labelNote(label, number, this.carrierName(courier)), this.connector.customerNotes);
    const existing = items.find((item) => item.tracking_number === number);
    if (existing) {
      d.refs.trackingItemId = existing.tracking_id;
      return;
    }
    const provider = courier === null ? undefined : this.connector.providers[courier];
    const body = {
      tracking_number: number,
      ...(provider?.kind === 'provider'
        ? { tracking_provider: provider.name }
        : {
            custom_tracking_provider: provider?.name ?? courier ?? 'Carrier',
            ...(provider?.kind === 'custom' && provider.link ? { custom_tracking_link: provider.link } : {}),
          }),
      date_shipped: new Date(this.now()).toISOString().slice(0, 10),
    };
    const created = await this.call(d, 'POST', path, TrackingItem, { body });
    d.refs.trackingItemId = created.data!.tracking_id;
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

  /** Adds a note unless the order already has one with this text (an earlier attempt's write). */
  private async addNote(d: PlatformDelivery, note: string, customerNote: boolean): Promise<void> {
    const path = `wc/v3/orders/${d.platformOrderId}/notes`;
    const notes = await this.call(d, 'GET', path, z.array(Note).max(1000));
    if (notes.data!.some((n) => n.note === note)) return;
    await this.call(d, 'POST', path, Note, { body: { note, customer_note: customerNote } });
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
    return this.client.call(method, path, schema, d.signal, { ...options, maxWaitMs: d.maxWaitMs });
  }

  private async readOrder(d: PlatformDelivery) {
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
