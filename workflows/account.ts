/**
 * One long-lived workflow per shipping API account: the fleet's shared memory of the account's
 * Retry-After. A worker told to wait by a 429 signals the time; every worker reads the signal from
 * this workflow's history as the server writes it (pacing/fleet-rate-limit.ts), so the whole fleet
 * holds its calls. (Workers of earlier builds wait on an update instead, still answered here.)
 *
 * It also pools the fresh answers the workers counted (calls right after a hold, whose 429s are
 * noise: pacing/noise-floor.ts), so a worker started later knows the account's noise before
 * its first call, however short-lived the workers that counted them were.
 *
 * And it keeps the account's one rate for the fleet (pacing/fleet-pace.ts): each worker with calls
 * to make reports once a second (an update) and gets its share, by demand; a relayed hold is an
 * overshoot that cuts the rate.
 */
import { FleetPace, type FleetPaceState } from '../pacing/fleet-pace';
import { boundHold } from '../shipping-api/retry-after';
import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  accountFreshAnswersSignal,
  accountPaceUpdate,
  accountRateLimitedSignal,
  awaitAccountRateLimitUpdate,
  poolFresh,
  type FreshAnswers,
  type PaceReport,
} from '../workflow-definitions/account';

/** Continue-as-new well before the history grows large: each 429 relayed adds a few events. */
const HISTORY_LIMIT = 2_000;

export async function shippingAccountWorkflow(carried?: { notBefore: number; fresh?: FreshAnswers; pace?: FleetPaceState }): Promise<void> {
  // A carried hold is bounded as a relayed one is: a Retry-After of decades ends within MAX_HOLD_MS.
  let notBefore = boundHold(carried?.notBefore ?? 0, Date.now());
  let fresh = carried?.fresh ? poolFresh(null, carried.fresh) : null;
  let draining = false;
  const pace = new FleetPace(carried?.pace, notBefore);
  setHandler(accountPaceUpdate, (report) => pace.report(report, Date.now()), {
    validator: (report: PaceReport | undefined) => {
      const worker: unknown = report?.worker;
      if (typeof worker !== 'string' || worker.length === 0 || worker.length > 200) {
        throw new Error('pace report: worker must be a non-empty string of at most 200 characters');
      }
    },
  });
  setHandler(accountFreshAnswersSignal, (report) => {
    fresh = poolFresh(fresh, report);
  });
  setHandler(accountRateLimitedSignal, (requested) => {
    const until = boundHold(requested, Date.now());
    if (Number.isFinite(until) && until > notBefore) notBefore = until;
    if (Number.isFinite(until)) pace.overshoot(until, Date.now());
  });
  setHandler(awaitAccountRateLimitUpdate, async (known) => {
    await condition(() => notBefore > known || draining);
    return notBefore;
  });
  await condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_LIMIT);
  // Waiting callers get the current time and ask again, of the next run.
  draining = true;
  await condition(allHandlersFinished);
  await continueAsNew<typeof shippingAccountWorkflow>({ notBefore, ...(fresh ? { fresh } : {}), pace: pace.state() });
}
