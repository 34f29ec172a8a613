/**
 * Everything the shipment takes: answers of the shipping API, news from its tracking shard, the
 * merchant's changes, the operator's commands and its deadlines. The workflow turns each
 * activity result, signal, update and timer into one of these.
 */
import type { OutcomeKind } from '../shipment';
import type { ShopOrderFacts } from '../shop-order';
import type { TrackingChangeIn } from './state';

export type Deadline = 'correction' | 'hold' | 'tracking';

export type ShipmentEvent<R> =
  /** The workflow began: the first label is asked for (or the order's state settled first). */
  | { type: 'started' }
  | { type: 'labelCreated'; revision: number; labelId: string }
  /** A courier or validation rejection (`correctable`), or a failure retrying cannot fix. */
  | { type: 'labelRejected'; revision: number; correctable: boolean; kind: string }
  /** The call stopped because the merchant's change cancelled it (an attempt out failed meanwhile). */
  | { type: 'labelCallStopped'; revision: number }
  /** `trackingNumber`: the one the label and its order brought (tracking starts from it). */
  | { type: 'orderRead'; labelId: string; ok: boolean; trackingNumber?: string | null }
  /** A tracking shard's word: a change of the label's tracking, or a poll that failed. */
  | { type: 'trackingNews'; labelId: string; change: TrackingChangeIn | null; failed: boolean }
  /** The reconciler found no live shard watching the shipment. */
  | { type: 'trackingLost' }
  | {
      type: 'shopChanged';
      facts: ShopOrderFacts;
      modifiedAt: string;
      /** When the reading was taken (domain/shop-order.ts `readAt`): orders readings within one second. */
      readAt?: string;
      /** The platform order it was read from, when the reading says (another order's is refused). */
      platformOrderId?: string;
      /** The order mapped again; absent when it does not map (then `problems`). */
      labelRequest?: R;
      problems?: boolean;
      /** A parcel of a split order: no line of the order is at its location any more (the merchant moved them). */
      linesLeft?: boolean;
    }
  | { type: 'resubmitted'; labelRequest: R }
  | { type: 'relabelRequested'; modifiedAt: string }
  | { type: 'operatorCancelled' }
  | { type: 'redeliverRequested' }
  | { type: 'attentionResolved' }
  /** A wait's deadline passed; `wait` names the wait (a deadline of an older one is stale). */
  | { type: 'deadlinePassed'; deadline: Deadline; wait: number }
  /** The run ended without the machine's word (a Temporal cancellation request): it decides nothing more. */
  | { type: 'runEnded'; outcome: OutcomeKind };

export type EventType = ShipmentEvent<unknown>['type'];

export const EVENT_TYPES: readonly EventType[] = [
  'started',
  'labelCreated',
  'labelRejected',
  'labelCallStopped',
  'orderRead',
  'trackingNews',
  'trackingLost',
  'shopChanged',
  'resubmitted',
  'relabelRequested',
  'operatorCancelled',
  'redeliverRequested',
  'attentionResolved',
  'deadlinePassed',
  'runEnded',
];
