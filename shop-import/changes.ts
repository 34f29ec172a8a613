/**
 * Change detection: for a pulled order that already has a shipment, what matters to the label
 * (status, hold, address, lines and their locations) is compared with what the shipment knows,
 * and the shipment is told only when it differs. Told with an Update (`shopOrderChanged`), whose
 * validator refuses an unchanged or stale reading without a history event; readings already
 * settled are remembered per worker, so a re-read order (the overlap, a retried page) costs no
 * Temporal call either. A reading with the same facts but a newer modified time is told: the
 * shipment may have learnt another reading meanwhile by a path this memory never sees.
 */
import { createHash } from 'node:crypto';
import {
  ServiceError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from '@temporalio/client';
import { ShopOrderChange as ShopOrderChangeSchema } from '../domain/schemas';
import { shipmentWorkflowId } from '../domain/shipment';
import { readBefore, type ShopOrderChange } from '../domain/shop-order';
import type { LabelRequestWithoutKey } from '../shipping-api/contract';
import { validateRecord } from '../order-import/record';
import { workflowIdProblem } from '../order-import/start-shipment';
import { shopOrderChangedUpdate } from '../workflow-definitions/shipment';
import { seenOf } from './facts';
import { mapOrder, orderIdOf } from './mapping';
import { isRefused, type PlatformOrder, type ReadOrder } from '../domain/platform-order';
import type { ImportMapping } from '../config/shop-import';

/** Settled readings remembered per worker (about 150 bytes each). */
const REMEMBERED = 50_000;
/** Updates in flight at once per page. */
const CONCURRENCY = 8;
/**
 * How long a shipment has to accept its update. The client otherwise asks again until the update
 * is accepted, and a shipment whose workflow task cannot run (its worker killed, a task queue no
 * worker polls) held its page, and so its shop's pull from the cursor, for 60-95 s in the bench
 * after a SIGKILL; past this the order is deferred and read again by the next pull (the same
 * update id then answers at once if it was taken meanwhile).
 */
export const UPDATE_ANSWER_MS = 10_000;

export interface ChangeCounts {
  /** Shipments told of a change (the update was accepted). */
  told: number;
  /** Updates the shipment refused: unchanged, stale, or not a pulled shipment. */
  unchanged: number;
  /**
   * Platform ids of orders whose shipment could not take an update now (its workflow task is
   * failing, as after a worker's crash or a bug, or no answer within UPDATE_ANSWER_MS): the cursor keeps them to be
   * read again, and the rest of the page goes on. One stuck shipment never stops its shop's pulls.
   */
  deferred: string[];
}

export class ShopChangeNotifier {
  /** workflow id → the reading last settled for it: its facts' digest and modified time. */
  private readonly settled = new Map<string, Settled>();

  constructor(
    private readonly client: Client,
    private readonly answerWithinMs: number = UPDATE_ANSWER_MS,
  ) {}

  /**
   * Tells the shipments of `orders` what changed. Those this page started know the reading
   * already: it is remembered, so reading it again (the overlap, a retried page) costs nothing.
   * An order the reader refused is a rejection only: nothing of it is believed, so no shipment
   * hears of it.
   */
  async notice(shop: string, orders: readonly ReadOrder[], mapping: ImportMapping, startedNow: ReadonlySet<string>): Promise<ChangeCounts> {
    const counts: ChangeCounts = { told: 0, unchanged: 0, deferred: [] };
    const queue: PlatformOrder[] = [];
    for (const order of orders) {
      if (isRefused(order)) continue;
      const workflowId = this.workflowIdOf(shop, order, mapping);
      if (workflowId !== null && startedNow.has(workflowId)) this.remember(workflowId, settledOf(seenOf(order)));
      else queue.push(order);
    }
    const work = async () => {
      for (let order = queue.shift(); order; order = queue.shift()) {
        const result = await this.tell(shop, order, mapping);
        if (result === 'told') counts.told++;
        else if (result === 'unchanged') counts.unchanged++;
        else if (result === 'deferred') counts.deferred.push(order.platformOrderId);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, work));
    return counts;
  }

  private async tell(shop: string, order: PlatformOrder, mapping: ImportMapping): Promise<'told' | 'unchanged' | 'deferred' | 'skipped'> {
    const workflowId = this.workflowIdOf(shop, order, mapping);
    if (workflowId === null) return 'skipped';
    const change = changeOf(shop, order, mapping);
    const reading = settledOf(change);
    if (isSameReading(this.settled.get(workflowId), reading)) return 'skipped';
    const { key } = reading;
    try {
      const args: [ShopOrderChange] = [ShopOrderChangeSchema.parse(change)];
      await this.client.withDeadline(Date.now() + this.answerWithinMs, () =>
        this.client.workflow.getHandle(workflowId).executeUpdate(shopOrderChangedUpdate, {
          args,
          // The same reading sent twice (a retried page, two pulls) is one update.
          updateId: `shop-change-${key.slice(0, 32)}-${change.modifiedAt}`,
        }),
      );
      this.remember(workflowId, reading);
      return 'told';
    } catch (err) {
      if (cannotTakeItNow(err)) return 'deferred';
      // Refused by the validator (unchanged, stale, not a pulled shipment), or no such shipment (never started, or ended).
      if (!(err instanceof WorkflowUpdateFailedError) && !(err instanceof WorkflowNotFoundError) && !isCompleted(err)) throw err;
      this.remember(workflowId, reading);
      return 'unchanged';
    }
  }

  private workflowIdOf(shop: string, order: PlatformOrder, mapping: ImportMapping): string | null {
    const identity = { shop, orderId: orderIdOf(order, mapping) };
    return workflowIdProblem(identity) ? null : shipmentWorkflowId(identity);
  }

  /** Keeps the newest reading settled (a stale copy refused after a fresher one is not remembered over it). */
  private remember(workflowId: string, reading: Settled): void {
    const known = this.settled.get(workflowId);
    if (known && readBefore(reading, known)) return;
    this.settled.delete(workflowId);
    this.settled.set(workflowId, reading);
    if (this.settled.size > REMEMBERED) this.settled.delete(this.settled.keys().next().value!);
  }
}

/**
 * The reading as a shipment takes it: its facts, and while the order is to be shipped, the order
 * mapped anew (validated like an import) or why it does not map. A held order is sent without
 * either (Shopify lists no lines to fulfil while held): its release brings them.
 */
export function changeOf(shop: string, order: PlatformOrder, mapping: ImportMapping): ShopOrderChange {
  const seen = { ...seenOf(order), platformOrderId: order.platformOrderId };
  if (seen.facts.status !== 'open') return seen;
  const mapped = mapOrder(shop, order, mapping);
  if (!mapped.ok) return { ...seen, problems: mapped.problems.slice(0, 50) };
  const validated = validateRecord(mapped.record);
  if (!validated.ok) return { ...seen, problems: validated.problems.slice(0, 50) };
  const { labelRequest, parcels } = validated.value;
  return { ...seen, labelRequest, ...parcelsOf(order, parcels), ...(order.locations ? { locations: order.locations } : {}) };
}

/**
 * Shopify: where the reading ships from, so an order shipping as parcels hands each its own
 * request (one location: its id only, the request is `labelRequest`).
 */
function parcelsOf(
  order: PlatformOrder,
  mapped: Array<{ location: string; name: string; labelRequest: LabelRequestWithoutKey }> | undefined,
) {
  if (mapped) return { parcels: mapped.map(({ location, name, labelRequest }) => ({ location, name, labelRequest })) };
  const only = order.parcels?.length === 1 ? order.parcels[0]! : null;
  return only?.location == null ? {} : { parcels: [{ location: only.location, name: only.name }] };
}

interface Settled {
  key: string;
  modifiedAt: string;
  readAt?: string;
}

function settledOf({ facts, modifiedAt, readAt }: Pick<ShopOrderChange, 'facts' | 'modifiedAt' | 'readAt'>): Settled {
  const key = createHash('sha256')
    .update(JSON.stringify([facts.status, facts.address, facts.lines]))
    .digest('hex');
  return { key, modifiedAt, ...(readAt !== undefined ? { readAt } : {}) };
}

/** The same reading read again: same facts, same modified time. */
function isSameReading(known: Settled | undefined, reading: Settled): boolean {
  return known !== undefined && known.key === reading.key && known.modifiedAt === reading.modifiedAt;
}

/** An update to a workflow that has completed: the server's answer names it. */
function isCompleted(err: unknown): boolean {
  return err instanceof Error && /already completed|workflow execution .*not found/i.test(err.message);
}

/**
 * The shipment cannot take an update now, for reasons of its own: the server refuses updates while
 * its workflow task is failing (a worker killed mid-task, a bug), or the update got no answer in time.
 */
function cannotTakeItNow(err: unknown): boolean {
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const cause = err instanceof ServiceError ? err.cause : undefined;
  return cause instanceof Error && /workflow task in failed state/i.test(cause.message);
}
