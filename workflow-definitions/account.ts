/**
 * The shipping account's workflow as the rest of the house calls it: its type, its signals and
 * updates, and what they carry (the workflow is workflows/account.ts; the pacers that call it are
 * in pacing/).
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';

/** No call of the account before this time (epoch ms). */
export const accountRateLimitedSignal = defineSignal<[number]>('rateLimited');
/**
 * Answers the account's not-before time once it is later than the caller's `known` one. Workers
 * of builds before 1.1 wait on it; later ones read the signals from the history instead.
 */
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

/** A worker's report to the account's pace; answers its share of the account's rate. */
export const accountPaceUpdate = defineUpdate<PaceGrant, [PaceReport]>('pace');

export const ACCOUNT_WORKFLOW_TYPE = 'shippingAccountWorkflow';

/**
 * The account's hold mailbox: a workflow no worker runs, on a task queue no worker polls, that
 * holds only the `rateLimited` signals the workers send it. With no workflow task ever started,
 * the server writes a signal to its history at once; the account workflow's signals wait while
 * one of its tasks runs (its workers' pace reports keep one running most of the time), and a task
 * that replays its history first held a relayed hold 0.3-1.9 s (pacing/fleet-rate-limit.ts).
 */
export const ACCOUNT_HOLDS_WORKFLOW_TYPE = 'shippingAccountHolds';
export const ACCOUNT_HOLDS_TASK_QUEUE = 'shipping-api-account-holds';
/** Each run of a mailbox times out after this long (its history stays small); the next hold or listener starts another. */
export const ACCOUNT_HOLDS_RUN_MS = 60 * 60_000;

/** Each worker reports this often while it has calls to make. */
export const REPORT_MS = 1000;
/** A share lasts this long without a new report; a report's counts span it. */
export const LEASE_MS = 3000;

/** What a worker tells the fleet's pace, once a REPORT_MS while it has calls to make. */
export interface PaceReport {
  /** A stable id of the worker process (for its lease). */
  worker: string;
  /** Calls a second this worker would send if let: sent over its last period plus waiting now. */
  want: number;
  /**
   * Calls a second this worker's work runs at: sent plus waiting over its last period, a waiting
   * call counted once (in `want` it counts a call a second, which is what growth asks). Its share
   * goes by it; a report of an older build lacks it, and its share goes by `want`.
   */
  need?: number;
  /** Calls a second the API accepted of this worker over its last period (any answer but 429). */
  accepted: number;
  /** 429s a second this worker got over the same period, noise or not (the fleet's noise floor is learned from them). */
  limited?: number;
  /**
   * Fresh answers (calls right after a hold, which no limit refuses: pacing/noise-floor.ts) this
   * worker counted since its last report, and the 429s among them: the fleet's noise floor is
   * learned from them within a report, not at the next pool read ten seconds later.
   */
  fresh?: { answers: number; limited: number };
  /** The worker's configured ceiling for the account, calls a second (the account's, not the worker's). */
  maxRate?: number;
}

/** The worker's share of the account's rate, and the rate itself. */
export interface PaceGrant {
  rate: number;
  /**
   * Where this worker's span of the grid's slots starts, 0 to 1 (its span: rate ÷ grid.rate):
   * each slot of the grid is one worker's, so the fleet's calls come evenly spaced and never
   * several at once (four workers sharing an account of 2 a second met an empty burst).
   */
  phase: number;
  /**
   * The fleet's slots: `rate` a second from `origin` (epoch ms, the workflow's clock), a little over
   * the account's rate (pacing/account-pacer.ts). Absent from an account workflow of an older build.
   */
  grid?: { rate: number; origin: number };
  accountRate: number;
  slowStart: boolean;
  /**
   * The share of 429s no pace causes, learned by the fleet from its pooled answers (0: none
   * known), and how many answers it rests on: a worker takes a 429 within it as noise, holding
   * only that call, and does not relay it as an overshoot.
   */
  noise?: { share: number; answers: number };
  /**
   * The share of its rate (0 to 1) at which this worker's calls after a hold may still count as
   * fresh: the fleet's rate is that far under what the API lately accepted of it (pacing/fleet-pace.ts).
   * Absent from an account workflow of an older build.
   */
  freshShare?: number;
}

/**
 * Adds a worker's report to the pool (a report that is not a count is ignored), scaled down to
 * FRESH_POOL_ANSWERS answers at most; `at` is the newest report's. Readers sum the same way
 * (pacing/fleet-rate-limit.ts), so the pool carried over a continue-as-new is what they read.
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
