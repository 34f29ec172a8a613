/**
 * One long-lived workflow per shipping API account: the fleet's shared memory of the account's
 * Retry-After. A worker told to wait by a 429 signals the time; every worker waits on an update
 * that answers as soon as a later time is known, so the whole fleet holds its calls.
 */
import { boundHold } from '../shipping-api/retry-after';
import { allHandlersFinished, condition, continueAsNew, defineSignal, defineUpdate, setHandler, workflowInfo } from '@temporalio/workflow';

/** No call of the account before this time (epoch ms). */
export const accountRateLimitedSignal = defineSignal<[number]>('rateLimited');
/** Answers the account's not-before time once it is later than the caller's `known` one. */
export const awaitAccountRateLimitUpdate = defineUpdate<number, [number]>('awaitRateLimit');

export const ACCOUNT_WORKFLOW_TYPE = 'shippingAccountWorkflow';
/** Continue-as-new well before the history grows large: each 429 relayed adds a few events. */
const HISTORY_LIMIT = 2_000;

export async function shippingAccountWorkflow(carried?: { notBefore: number }): Promise<void> {
  // A hold recorded before holds were bounded (a Retry-After of decades) ends within MAX_HOLD_MS.
  let notBefore = boundHold(carried?.notBefore ?? 0, Date.now());
  let draining = false;
  setHandler(accountRateLimitedSignal, (requested) => {
    const until = boundHold(requested, Date.now());
    if (Number.isFinite(until) && until > notBefore) notBefore = until;
  });
  setHandler(awaitAccountRateLimitUpdate, async (known) => {
    await condition(() => notBefore > known || draining);
    return notBefore;
  });
  await condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_LIMIT);
  // Waiting callers get the current time and ask again, of the next run.
  draining = true;
  await condition(allHandlersFinished);
  await continueAsNew<typeof shippingAccountWorkflow>({ notBefore });
}
