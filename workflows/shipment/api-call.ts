/**
 * One shipping API call as the shipment makes it. The first attempt runs inside the workflow task
 * (a local activity: one marker, no task round trip); a retryable failure continues as a regular
 * activity, which waits the Retry-After of a 429 itself (no timer, no extra workflow task).
 */
import { isCancellation } from '@temporalio/workflow';
import type { RecordedError } from '../../workflow-definitions/shipment';
import { recordError, shippingErrorOf, shopChangeOf } from './failures';
import { firstAttempt, HEED_SENT_ATTEMPT, shippingApi } from './proxies';
import type { ApiArgs, ApiCall, ApiResult, ShipmentShell } from './shell';

export async function callApi<K extends ApiCall>(run: ShipmentShell, name: K, summary: string, ...args: ApiArgs<K>): Promise<ApiResult<K>> {
  type Call = (...a: ApiArgs<K>) => Promise<ApiResult<K>>;
  let recorded: RecordedError | null = null;
  let notBefore: number | undefined;
  const options = run.shop ? HEED_SENT_ATTEMPT : {};
  try {
    return await (firstAttempt(summary, options)[name] as Call)(...args);
  } catch (err) {
    if (isCancellation(err) || shopChangeOf(err)) throw err; // the label step takes the shop's change
    const failure = shippingErrorOf(err);
    if (failure && !failure.retryable) throw err; // e.g. a courier rejection: the caller decides
    // Anything else (5xx, 429, network, a timed-out attempt) is retried as a regular activity.
    if (failure) recorded = run.state.lastError = recordError(failure);
    run.publish();
    if (failure?.kind === 'rate_limited') {
      const waitMs = Math.max(1, failure.retryAfterSeconds ?? 1) * 1000;
      // The activity's clock when the 429 came, if it says: this task's clock stands at its start,
      // before the calls made earlier in it (an order read comes after the label's).
      notBefore = Math.max(Date.now() + waitMs, Number(failure.retryAfterEndsAt) || 0);
    }
  }
  const call = shippingApi(summary, options)[name] as Call;
  const result = await call(...(notBefore === undefined ? args : withNotBefore(name, args, notBefore)));
  if (recorded !== null && run.state.lastError === recorded) run.state.lastError = null;
  return result;
}

/** The call's arguments for the regular activity, which waits until `notBefore` before it calls. */
function withNotBefore<K extends ApiCall>(name: K, args: ApiArgs<K>, notBefore: number): ApiArgs<K> {
  if (name === 'createLabel') {
    const [input] = args as ApiArgs<'createLabel'>;
    return [{ ...input, notBefore }] as ApiArgs<K>;
  }
  const [labelId, account] = args as ApiArgs<'readOrder'>;
  return [labelId, account, notBefore] as unknown as ApiArgs<K>;
}
