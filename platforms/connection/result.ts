/**
 * What a platform connector's delivery of one event comes to, in the webhook sender's terms (so
 * the activity treats every connector alike), and the platform ids it learns on the way.
 */
import type { LabelCreatedData, LabelRejectedData, ShipmentEvent, TrackingUpdatedData } from '../../domain/events';
import { classifyResponse, type DeliveryResult } from '../webhook/write-back';
import { excerpt } from './http';
import { scrubSecrets } from './secrets';
import type { PlatformRefs } from '../../domain/shipment';

export type { PlatformRefs };
export type PlatformResult = Exclude<DeliveryResult, { kind: 'gone' }>;

export interface PlatformDelivery {
  event: ShipmentEvent;
  /** The order's id on the platform, from the import record. */
  platformOrderId: string;
  /** The shipment's courier code (null from a workflow that did not send it). */
  courier: string | null;
  /** One parcel of an order shipping from several locations: the platform's location id it ships from. */
  location?: string;
  /** Ids remembered in the workflow; the connector adds what it creates or adopts. */
  refs: PlatformRefs;
  signal: AbortSignal;
  /** Longest the connector may wait for the platform's budget inside this attempt. */
  maxWaitMs: number;
  /**
   * Set by the connector: when it sent the last write whose fate it does not know (no answer in
   * time, the connection cut, a 5xx), which the store may still apply. Epoch ms.
   */
  uncertainWriteAt?: number;
}

/** Runs one call of a delivery; a write that ends without knowing whether it landed is noted on the delivery. */
export async function noteUncertainWrite<T>(d: PlatformDelivery, isWrite: boolean, call: () => Promise<T>): Promise<T> {
  const sentAt = Date.now();
  try {
    return await call();
  } catch (err) {
    if (isWrite && err instanceof StopDelivery && err.result.kind === 'retry') d.uncertainWriteAt = sentAt;
    throw err;
  }
}

export interface PlatformConnection {
  deliver(delivery: PlatformDelivery): Promise<PlatformResult>;
}

/** Ends an event's delivery with `result`: thrown by a call that did not succeed. */
export class StopDelivery extends Error {
  constructor(readonly result: PlatformResult) {
    super(result.kind);
  }
}

/** What a stopped call says, for a message: the wait asked for, the failure, or the refusal's status and excerpt. */
export function describeStop(result: PlatformResult): string {
  switch (result.kind) {
    case 'retry_after':
      return `the shop asked to wait ${Math.ceil(result.retryAfterMs / 1000)} s (HTTP ${result.status})`;
    case 'retry':
      return result.message;
    case 'rejected':
      return `refused (HTTP ${result.status}): ${result.bodyExcerpt}`;
    case 'delivered':
      return `answered HTTP ${result.status}`;
  }
}

/** The result with its message or excerpt scrubbed of `known` secrets and of credential parameters. */
export function scrubResult(result: PlatformResult, known: readonly string[]): PlatformResult {
  if (result.kind === 'retry') return { ...result, message: scrubSecrets(result.message, known) };
  if (result.kind === 'rejected') return { ...result, bodyExcerpt: scrubSecrets(result.bodyExcerpt, known) };
  return result;
}

/** Runs `call`; a StopDelivery it throws leaves scrubbed of `known` secrets (every platform answer's text passes here). */
export async function scrubbingStops<T>(known: () => readonly string[], call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof StopDelivery) throw new StopDelivery(scrubResult(err.result, known()));
    throw err;
  }
}

/** An HTTP answer that is not a success, as the shared rules classify it (429/503 wait, 5xx back off, 4xx stop). */
export function failedAnswer(status: number, headers: Record<string, string>, text: string, now: number): StopDelivery {
  const result = classifyResponse(status, headers['retry-after'], excerpt(text), now);
  return new StopDelivery(result.kind === 'gone' ? { kind: 'rejected', status, bodyExcerpt: excerpt(text) } : result);
}

/** The platform answered something the connector does not understand: an operator should look. */
export function unexpectedAnswer(what: string, problem: string): StopDelivery {
  return new StopDelivery({ kind: 'rejected', status: 200, bodyExcerpt: `unexpected ${what} answer: ${problem}` });
}

/** What a platform connector does per event type; `shipment.completed` writes nothing on either platform. */
export interface EventSteps {
  labelCreated(delivery: PlatformDelivery, data: LabelCreatedData): Promise<void>;
  trackingUpdated(delivery: PlatformDelivery, data: TrackingUpdatedData): Promise<void>;
  labelRejected(delivery: PlatformDelivery, data: LabelRejectedData): Promise<void>;
}

/** Runs a connector's steps for the delivery's event; a StopDelivery becomes its result. */
export async function applyEvent(delivery: PlatformDelivery, steps: EventSteps): Promise<PlatformResult> {
  const { event } = delivery;
  try {
    if (event.type === 'label.created') await steps.labelCreated(delivery, event.data);
    else if (event.type === 'tracking.updated') await steps.trackingUpdated(delivery, event.data);
    else if (event.type === 'label.rejected') await steps.labelRejected(delivery, event.data);
    return { kind: 'delivered', status: 200 };
  } catch (err) {
    if (err instanceof StopDelivery) return err.result;
    throw err;
  }
}
