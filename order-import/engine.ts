/**
 * The import pipeline, free of I/O setup so it can be tested with fakes: records stream in,
 * each is validated (contract schemas), checked for a repeat of its shop+orderId in the same
 * input, preflighted (courier and product codes) and started, with at most `concurrency`
 * records between validation and a settled start. Reading waits while all slots are busy, so
 * memory and connections stay bounded however long the input is.
 */
import type { FieldProblem } from '../shipping-api/contract';
import type { ShipmentInput } from '../domain/shipment';
import { canonicalPlatformOrderId } from '../domain/platform-order-id';
import { shipmentWorkflowId } from '../domain/shipment';
import type { StartResult } from './start-shipment';
import { identityOf, validateRecord, type PlatformOf } from './record';
import type { SourceRecord } from './source';
import type { AccountOf } from '../config/shipping-accounts';
import { AccountPreflightError, type AccountPreflights } from './preflight';
import type { ProgressCounts } from './progress';

export interface Position {
  line: number;
  /** JSON array input only. */
  index?: number;
}

export interface Rejection extends Position {
  shop: string | null;
  orderId: string | null;
  reasons: FieldProblem[];
}

export interface StartFailure extends Position {
  shop: string;
  orderId: string;
  workflowId: string;
  message: string;
}

/** The orders of one shipping account that were not started because its preflight could not be read. */
export interface AccountNotStarted {
  account: string;
  /** Orders of the account that failed to start for it (all of them also count as failed). */
  orders: number;
  /** The first such failure's: what could not be read, and why. */
  reason: string;
}

export interface ImportResult {
  counts: ProgressCounts;
  /** Per shipping account whose preflight could not be read, in the order they first failed. */
  notStarted: AccountNotStarted[];
  /** The first KEPT_IN_RESULT rejections and start failures (all of them go to onRejected/onFailed, e.g. the rejects file). */
  rejections: Rejection[];
  failures: StartFailure[];
}

/**
 * Rejections and failures the result keeps: an input of millions of bad lines must not be held
 * in memory (300,000 kept ones took 693 MB); counts cover all of them.
 */
export const KEPT_IN_RESULT = 20;

export interface ImportEngineOptions {
  records: AsyncIterable<SourceRecord>;
  /** Absent with --skip-preflight: checks each record against its shop's account. */
  preflight?: Pick<AccountPreflights, 'check'>;
  /** The shipping account of a shop's new shipments (set in each input); absent: inputs name none (`default`). */
  accountOf?: AccountOf;
  /** Absent with --dry-run: records are validated and preflighted only. */
  start?: (input: ShipmentInput) => Promise<StartResult>;
  concurrency: number;
  /** Which platform a shop's connector writes to: its records need a platformOrderId. */
  platformOf?: PlatformOf;
  /** Resolves when the next start may go ahead (backpressure); absent = always. */
  admit?: () => Promise<void>;
  /** Awaited: a slow rejects file holds the reading (backpressure) instead of filling memory. */
  onRejected?: (rejection: Rejection, record: SourceRecord) => void | Promise<void>;
  onFailed?: (failure: StartFailure, record: SourceRecord) => void | Promise<void>;
  onProgress?: (counts: ProgressCounts) => void;
}

export async function importRecords(options: ImportEngineOptions): Promise<ImportResult> {
  const counts: ProgressCounts = { records: 0, accepted: 0, started: 0, alreadyKnown: 0, rejected: 0, failed: 0 };
  const rejections: Rejection[] = [];
  const failures: StartFailure[] = [];
  const notStarted = new Map<string, AccountNotStarted>();
  /**
   * shop and orderId → where that order first appeared in this input. Not keyed by workflow id:
   * shop "a-b" order "c" and shop "a" order "b-c" share one, and the second is another order
   * (its start reports the clash), not a duplicate.
   */
  const seen = new Map<string, Position & { platformOrderId?: string }>();
  const inFlight = new Set<Promise<void>>();
  const inOrder = new InputOrder();
  let sequence = 0;

  const position = (record: SourceRecord): Position =>
    record.index === undefined ? { line: record.line } : { line: record.line, index: record.index };

  const reject = async (seq: number, record: SourceRecord, reasons: FieldProblem[]): Promise<void> => {
    const rejection: Rejection = { ...position(record), ...identityOf(record.value), reasons };
    counts.rejected++;
    if (rejections.length < KEPT_IN_RESULT) rejections.push(rejection);
    await inOrder.settle(seq, () => options.onRejected?.(rejection, record));
    options.onProgress?.(counts);
  };

  const handle = async (seq: number, record: SourceRecord, input: ShipmentInput): Promise<void> => {
    const workflowId = shipmentWorkflowId(input);
    try {
      const problems = options.preflight ? await options.preflight.check(input.labelRequest, input.account) : [];
      if (problems.length > 0) return reject(seq, record, problems);
      counts.accepted++;
      if (options.start) {
        await options.admit?.();
        const result = await options.start(input);
        if (result.status === 'taken') {
          counts.accepted--; // another platform order holds its id: a rejection after all
          return reject(seq, record, [result.problem]);
        }
        if (result.status === 'started') counts.started++;
        else counts.alreadyKnown++;
      }
      await inOrder.settle(seq, null);
    } catch (err) {
      const failure: StartFailure = {
        ...position(record),
        shop: input.shop,
        orderId: input.orderId,
        workflowId,
        message: err instanceof Error ? err.message : String(err),
      };
      counts.failed++;
      if (err instanceof AccountPreflightError) {
        const held = notStarted.get(err.account) ?? { account: err.account, orders: 0, reason: err.reason };
        held.orders++;
        notStarted.set(err.account, held);
      }
      if (failures.length < KEPT_IN_RESULT) failures.push(failure);
      await inOrder.settle(seq, () => options.onFailed?.(failure, record));
    }
    options.onProgress?.(counts);
  };

  for await (const record of options.records) {
    counts.records++;
    const seq = sequence++;
    // Reports wait for the records before them: a slow one holds back at most this many.
    await inOrder.room();
    const reasons = [...record.problems];
    let input: ShipmentInput | undefined;
    if (record.value !== undefined) {
      const validated = validateRecord(record.value, options.platformOf);
      if (validated.ok) input = validated.value;
      else reasons.push(...validated.problems);
    }
    if (input && options.accountOf) {
      const account = options.accountOf(input.shop);
      if ('problem' in account) reasons.push({ field: 'shop', message: account.problem });
      else input = { ...input, account: account.account };
    }

    // The first occurrence of an order wins; later ones are rejected as duplicates, valid or not.
    const { shop, orderId } = identityOf(record.value);
    if (shop !== null && orderId !== null) {
      const id = JSON.stringify([shop, orderId]);
      const first = seen.get(id);
      const platformOrderId = platformOrderIdOf(record.value);
      if (first) {
        const where = first.index === undefined ? `line ${first.line}` : `index ${first.index}`;
        // Two platform orders mapped to one id are named both: neither is a repeat of the other.
        const platforms =
          first.platformOrderId !== undefined && platformOrderId !== undefined && first.platformOrderId !== platformOrderId
            ? ` (platform order ${first.platformOrderId} there, ${platformOrderId} here)`
            : '';
        reasons.push({
          field: 'orderId',
          message: `duplicate: shop ${shop} order ${orderId} already appears at ${where} of this input${platforms}; only the first is imported`,
        });
      } else {
        seen.set(id, { ...position(record), platformOrderId });
      }
    }

    if (reasons.length > 0 || input === undefined) {
      await reject(seq, record, reasons);
      continue;
    }

    while (inFlight.size >= options.concurrency) await Promise.race(inFlight);
    const task: Promise<void> = handle(seq, record, input).finally(() => inFlight.delete(task));
    inFlight.add(task);
  }
  await Promise.all(inFlight);

  const byPosition = (a: Position, b: Position) => (a.index ?? a.line) - (b.index ?? b.line);
  rejections.sort(byPosition);
  failures.sort(byPosition);
  return { counts, notStarted: [...notStarted.values()], rejections, failures };
}

function platformOrderIdOf(value: unknown): string | undefined {
  const id = typeof value === 'object' && value !== null ? (value as { platformOrderId?: unknown }).platformOrderId : undefined;
  return typeof id === 'string' ? canonicalPlatformOrderId(id) : undefined;
}

type Report = (() => void | Promise<void>) | null;

/**
 * Rejections and start failures reported in input order (line 21 before line 22), whatever
 * order the records finish in: a preflight or a start takes time, a bad field does not. A
 * report waits for every record before it; at most MAX_HELD wait, then reading waits too.
 */
class InputOrder {
  private static readonly MAX_HELD = 1_000;
  private next = 0;
  private readonly held = new Map<number, Report>();
  private flushing: Promise<void> = Promise.resolve();
  private wake: (() => void) | null = null;

  /** Record `seq` is done, with its report (null: nothing to say); reports what is now in order. */
  settle(seq: number, report: Report): Promise<void> {
    this.held.set(seq, report);
    this.flushing = this.flushing.then(() => this.flush());
    return this.flushing;
  }

  /** Resolves once fewer than MAX_HELD reports wait for an earlier record. */
  async room(): Promise<void> {
    while (this.held.size >= InputOrder.MAX_HELD) await new Promise<void>((resolve) => (this.wake = resolve));
  }

  private async flush(): Promise<void> {
    while (this.held.has(this.next)) {
      const report = this.held.get(this.next)!;
      this.held.delete(this.next);
      this.next++;
      await report?.();
    }
    this.wake?.();
    this.wake = null;
  }
}
