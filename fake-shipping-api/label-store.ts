/**
 * The labels the fake has created, indexed the three ways the API finds them: by id, by
 * idempotency key and by customer order number. Keys are scoped to the account, as the spec's
 * operations are.
 */
import type { FakeLabelSummary } from './types';
import type { LabelRecord } from './records';

/** Account-scoped key: NUL cannot occur in an account name, key or order number. */
const scoped = (account: string, value: string): string => `${account}\u0000${value}`;

export class LabelStore {
  private readonly byId = new Map<string, LabelRecord>();
  private readonly byIdempotencyKey = new Map<string, LabelRecord>();
  private readonly byCustomerOrderNumber = new Map<string, LabelRecord[]>();
  private generatedOrderNumbers = 0;

  get(id: string): LabelRecord | undefined {
    return this.byId.get(id);
  }

  byKey(account: string, idempotencyKey: string): LabelRecord | undefined {
    return this.byIdempotencyKey.get(scoped(account, idempotencyKey));
  }

  /** The account's newest label for a customer order number (a number can be reused). */
  newestForOrder(account: string, customerOrderNumber: string): LabelRecord | undefined {
    const own = this.byCustomerOrderNumber.get(scoped(account, customerOrderNumber));
    return own && own.length > 0 ? own[own.length - 1] : undefined;
  }

  hasOrder(account: string, customerOrderNumber: string): boolean {
    return this.byCustomerOrderNumber.has(scoped(account, customerOrderNumber));
  }

  /** Sequence of the customer order numbers the fake makes up when a request has none. */
  nextGeneratedOrderNumber(): number {
    return ++this.generatedOrderNumbers;
  }

  add(record: LabelRecord): void {
    this.byId.set(record.id, record);
    this.byIdempotencyKey.set(scoped(record.account, record.idempotencyKey), record);
    const key = scoped(record.account, record.customerOrderNumber);
    this.byCustomerOrderNumber.set(key, [...(this.byCustomerOrderNumber.get(key) ?? []), record]);
  }

  /** Every label and the counter, as plain data (persistence.ts keeps them across restarts). */
  snapshot(): LabelStoreSnapshot {
    return { labels: [...this.byId.values()], generatedOrderNumbers: this.generatedOrderNumbers };
  }

  restore(snapshot: LabelStoreSnapshot): void {
    for (const record of snapshot.labels) this.add(record);
    this.generatedOrderNumbers = snapshot.generatedOrderNumbers;
  }

  summaries(): FakeLabelSummary[] {
    return [...this.byId.values()].map((r) => ({
      idempotencyKey: r.idempotencyKey,
      id: r.id,
      status: r.status,
      account: r.account,
      customerOrderNumber: r.customerOrderNumber,
      shipToPostalCode: r.request.shipment.shipTo?.address?.postalCode ?? null,
      createdAt: new Date(r.createdAtMs).toISOString(),
    }));
  }
}

export interface LabelStoreSnapshot {
  labels: LabelRecord[];
  generatedOrderNumbers: number;
}
