/**
 * One shipping API call as the shipment makes it. Since change-driven tracking the first attempt
 * runs inside the workflow task (a local activity: one marker, no task round trip); a retryable
 * failure continues as a regular activity, after the Retry-After of a 429.
 */
import { isCancellation, sleep } from '@temporalio/workflow';
import type { ShipmentActivities } from '../../activities';
import type { RecordedError } from '../definitions';
import { recordError, shippingErrorOf, shopChangeOf } from './failures';
import { firstAttempt, HEED_SENT_ATTEMPT, shippingApi } from './proxies';
import type { ShipmentRun } from './run';

export type ApiCall = 'createLabel' | 'readOrder';
export type ApiArgs<K extends ApiCall> = Parameters<ShipmentActivities[K]>;
export type ApiResult<K extends ApiCall> = Awaited<ReturnType<ShipmentActivities[K]>>;

export async function callApi<K extends ApiCall>(run: ShipmentRun, name: K, summary: string, ...args: ApiArgs<K>): Promise<ApiResult<K>> {
  type Call = (...a: ApiArgs<K>) => Promise<ApiResult<K>>;
  let recorded: RecordedError | null = null;
  const options = run.shop ? HEED_SENT_ATTEMPT : {};
  if (run.changeDriven) {
    try {
      return await (firstAttempt(summary, options)[name] as Call)(...args);
    } catch (err) {
      if (isCancellation(err) || shopChangeOf(err)) throw err; // the label step takes the shop's change
      const failure = shippingErrorOf(err);
      if (failure && !failure.retryable) throw err; // e.g. a courier rejection: the caller decides
      // Anything else (5xx, 429, network, a timed-out attempt) is retried as a regular activity.
      if (failure) recorded = run.state.lastError = recordError(failure);
      run.publish();
      if (failure?.kind === 'rate_limited') await sleep(Math.max(1, failure.retryAfterSeconds ?? 1) * 1000);
    }
  }
  const result = await (shippingApi(summary, options)[name] as Call)(...args);
  if (recorded !== null && run.state.lastError === recorded) run.state.lastError = null;
  return result;
}
