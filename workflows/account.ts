/**
 * One long-lived workflow per shipping API account: the fleet's shared memory of the account's
 * Retry-After. A worker told to wait by a 429 signals the time; every worker waits on an update
 * that answers as soon as a later time is known, so the whole fleet holds its calls.
 *
 * It also pools the fresh answers the workers counted (calls right after a hold, whose 429s are
 * noise: activities/noise-floor.ts), so a worker started later knows the account's noise before
 * its first call, however short-lived the workers that counted them were.
 */
import { boundHold } from '../shipping-api/retry-after';
import { allHandlersFinished, condition, continueAsNew, defineSignal, defineUpdate, setHandler, workflowInfo } from '@temporalio/workflow';

/** No call of the account before this time (epoch ms). */
export const accountRateLimitedSignal = defineSignal<[number]>('rateLimited');
/** Answers the account's not-before time once it is later than the caller's `known` one. */
export const awaitAccountRateLimitUpdate = defineUpdate<number, [number]>('awaitRateLimit');

/** Fresh answers a worker counted since its last report, and when it sent them (epoch ms). */
export interface FreshAnswers {
  answers: number;
  limited: number;
  at: number;
}
export const accountFreshAnswersSignal = defineSignal<[FreshAnswers]>('freshAnswers');
/** The pool keeps the proportion of this many answers at most: it follows noise that changes. */
export const FRESH_POOL_ANSWERS = 300;

export const ACCOUNT_WORKFLOW_TYPE = 'shippingAccountWorkflow';
/** Continue-as-new well before the history grows large: each 429 relayed adds a few events. */
const HISTORY_LIMIT = 2_000;

export async function shippingAccountWorkflow(carried?: { notBefore: number; fresh?: FreshAnswers }): Promise<void> {
  // A carried hold is bounded as a relayed one is: a Retry-After of decades ends within MAX_HOLD_MS.
  let notBefore = boundHold(carried?.notBefore ?? 0, Date.now());
  let fresh = carried?.fresh ? poolFresh(null, carried.fresh) : null;
  let draining = false;
  setHandler(accountFreshAnswersSignal, (report) => {
    fresh = poolFresh(fresh, report);
  });
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
  await continueAsNew<typeof shippingAccountWorkflow>(fresh ? { notBefore, fresh } : { notBefore });
}

/**
 * Adds a worker's report to the pool (a report that is not a count is ignored), scaled down to
 * FRESH_POOL_ANSWERS answers at most; `at` is the newest report's. Readers sum the same way
 * (worker/fleet-rate-limit.ts), so the pool carried over a continue-as-new is what they read.
 */
export function poolFresh(pool: FreshAnswers | null, report: FreshAnswers): FreshAnswers | null {
  const { answers, limited, at } = report ?? {};
  if (
    ![answers, limited, at].every((n) => typeof n === 'number' && Number.isFinite(n)) ||
    answers <= 0 ||
    limited < 0 ||
    limited > answers
  ) {
    return pool;
  }
  const sum = { answers: (pool?.answers ?? 0) + answers, limited: (pool?.limited ?? 0) + limited };
  const scale = Math.min(1, FRESH_POOL_ANSWERS / sum.answers);
  return { answers: sum.answers * scale, limited: sum.limited * scale, at: Math.max(pool?.at ?? 0, at) };
}
