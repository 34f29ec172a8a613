/**
 * What the Web UI shows of a shipment: its search attributes (written only when they change, so
 * an unchanged poll adds no history) and its current details.
 */
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { openAttention, SA, type ShipmentState } from '../definitions';
import { currentDetails } from './details';
import { STOPPED, type ShopDelivery } from './shop-delivery';

type Attribute = (typeof SA)[keyof typeof SA];

/** ShipmentShopChange once nothing is left for a person. */
export const RESOLVED = 'resolved';

export class Published {
  /** Search attributes as last written. */
  private readonly written = new Map<string, string>();

  constructor(
    private readonly state: ShipmentState,
    private readonly courier: () => string,
    private readonly delivery: ShopDelivery,
  ) {}

  /** The start options set these already; re-sending them would only add history events. */
  rememberStartAttributes(): void {
    const given = workflowInfo().typedSearchAttributes;
    for (const key of [SA.status, SA.courier, SA.trackingNumber, SA.trackingTag]) {
      const value = given.get(key);
      if (typeof value === 'string') this.written.set(key.name, value);
    }
  }

  /** Mirrors the state into search attributes (only on change) and the Web UI's details. */
  publish(): void {
    const wanted: Array<[Attribute, string | null]> = [
      [SA.status, this.state.outcome ?? this.state.phase],
      [SA.courier, this.courier()],
      [SA.trackingNumber, this.state.trackingNumber],
      [SA.trackingTag, this.state.tag],
      [SA.shopSync, this.shopSyncAttribute()],
      [SA.shopChange, this.shopChangeAttribute()],
    ];
    const changes = wanted.filter(
      (entry): entry is [Attribute, string] => entry[1] !== null && this.written.get(entry[0].name) !== entry[1],
    );
    if (changes.length > 0) {
      upsertSearchAttributes(changes.map(([key, value]) => ({ key, value })));
      for (const [key, value] of changes) this.written.set(key.name, value);
    }
    setCurrentDetails(currentDetails(this.state));
  }

  /**
   * The merchant's change a person should look at, and `resolved` once it is over (taken by a
   * relabel, released, or resolved by an operator): an order that stays as it was writes none.
   */
  private shopChangeAttribute(): string | null {
    const order = this.state.shopOrder;
    if (!order) return null;
    const open = openAttention(order);
    if (open !== null) return open;
    return this.written.has(SA.shopChange.name) ? RESOLVED : null;
  }

  /** Only states an operator must act on, and `ok` once one of them is over: the usual path writes none. */
  private shopSyncAttribute(): string | null {
    const sync = this.delivery.sync;
    if (!sync) return null;
    if (STOPPED.has(sync.status)) return sync.status;
    return this.written.has(SA.shopSync.name) ? 'ok' : null;
  }
}
