/**
 * What the Web UI shows of a shipment: its search attributes (written only when they change, so
 * an unchanged poll adds no history) and its current details.
 *
 * At most one UpsertWorkflowSearchAttributes command per workflow task (each is a billed action):
 * `publish()` only marks the state changed and refreshes the details (no command); a coroutine
 * writes the changed attributes once the task's other work has run, and never while a local
 * activity is out (its result comes back in the same workflow task, often with another change);
 * `flush()` writes what is left before the run completes, fails or continues as new.
 */
import { CancellationScope, condition, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { openAttention, SA, type ShipmentState } from '../../workflow-definitions/shipment';
import { currentDetails } from './details';
import { localActivityOut } from './proxies';
import { STOPPED, type ShopDelivery } from './shop-delivery';

type Attribute = (typeof SA)[keyof typeof SA];

/** ShipmentShopChange once nothing is left for a person. */
export const RESOLVED = 'resolved';

export class Published {
  /** Search attributes as last written. */
  private readonly written = new Map<string, string>();
  /** The state changed since the attributes were last written. */
  private dirty = false;

  constructor(
    private readonly state: ShipmentState,
    private readonly courier: () => string,
    private readonly delivery: ShopDelivery,
  ) {
    // Not cancellable: a cancellation request (Web UI) must not end the writer before the shipment.
    void CancellationScope.nonCancellable(() => this.writeWhenSettled());
  }

  /** The start options set these already; re-sending them would only add history events. */
  rememberStartAttributes(): void {
    const given = workflowInfo().typedSearchAttributes;
    for (const key of [SA.status, SA.courier, SA.trackingNumber, SA.trackingTag]) {
      const value = given.get(key);
      if (typeof value === 'string') this.written.set(key.name, value);
    }
  }

  /** Mirrors the state into the Web UI's details now, and into search attributes (only on change) once the task settles. */
  publish(): void {
    this.dirty = true;
    setCurrentDetails(currentDetails(this.state));
  }

  /** Writes the changed search attributes now, if any: before the run completes, fails or continues as new. */
  flush(): void {
    if (!this.dirty) return;
    this.dirty = false;
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
  }

  /**
   * The writer: once the state changed, it lets the coroutines woken with it run first (one more
   * pass of the SDK's conditions: a local activity they start keeps the workflow task open), and
   * writes when no local activity is out; a change its result makes is written with the rest.
   */
  private async writeWhenSettled(): Promise<void> {
    for (;;) {
      await condition(() => this.dirty);
      let passed = false;
      // `condition` tries its function at once: the first try only marks the pass.
      await condition(() => (passed ? !localActivityOut() : ((passed = true), false)));
      this.flush();
    }
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
