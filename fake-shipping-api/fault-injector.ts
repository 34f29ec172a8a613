/**
 * The faults the fake injects around an API request, in the order a request meets them:
 * before the handler (fail-next queue, rate limit, random 429s and 500s) and after it
 * (malformed body, hang, lost answer, latency). Every rate draws from one seeded PRNG, so a
 * seed replays the same faults; the draws happen in this fixed order.
 */
import { fieldProblems } from '../shipping-api/contract';
import { standard, type Answer } from './answers';
import {
  cloneFaults,
  DEFAULT_FAULTS,
  FaultsPatch,
  InvalidFaultsError,
  mulberry32,
  accountLimiter,
  type AccountLimiter,
  type EndpointKey,
  type Faults,
  type RateLimit,
} from './faults';
import type { AnyFakeAccount } from './types';

/** What becomes of a handled request: answered (after `delayMs`), never answered, or cut off. */
export type Fate = { kind: 'answer'; delayMs: number } | { kind: 'hang' } | { kind: 'lost' };

export class FaultInjector {
  private faults: Faults = cloneFaults(DEFAULT_FAULTS);
  private limiter: AccountLimiter | null = null;
  /** Accounts with a limit of their own (AnyFakeAccount.rateLimit), by name. */
  private readonly ownLimiters = new Map<string, AccountLimiter>();
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = mulberry32(seed);
  }

  current(): Faults {
    return cloneFaults(this.faults);
  }

  /** Validates and applies a partial patch; throws InvalidFaultsError naming the field. */
  set(patch: Partial<Faults>): Faults {
    const parsed = FaultsPatch.safeParse(patch);
    if (!parsed.success) throw new InvalidFaultsError(fieldProblems(parsed.error));
    const p = parsed.data;
    this.faults = cloneFaults({ ...this.faults, ...(p as Partial<Faults>) });
    if (p.rateLimit !== undefined) this.limiter = this.faults.rateLimit === null ? null : accountLimiter(this.faults.rateLimit);
    return cloneFaults(this.faults);
  }

  /** Whether the rate faults apply to this endpoint (the fail-next queue always does). */
  inScope(key: EndpointKey): boolean {
    return this.faults.endpoints === null || this.faults.endpoints.includes(key);
  }

  /** Steps 1-4: an answer that takes the handler's place, or null to go on to the handler. */
  before(key: EndpointKey, { name: account, rateLimit: own }: AnyFakeAccount, inScope: boolean): Answer | null {
    const faults = this.faults;
    // 1. the deterministic fail-next queue
    const queued = faults.failNext.findIndex(
      (e) => (e.endpoint === undefined || e.endpoint === key) && (e.account === undefined || e.account === account),
    );
    if (queued >= 0) {
      const [entry] = faults.failNext.splice(queued, 1);
      const headers: Record<string, string> = { 'x-fake-fault': 'fail-next' };
      if (entry!.status === 429 && entry!.retryAfter !== null) headers['retry-after'] = entry!.retryAfter ?? '1';
      return standard(entry!.status, undefined, headers);
    }
    // 2. per-account rate limit: the account's own, else the fake's
    const limiter = own ? this.ownLimiterOf(account, own) : this.limiter;
    if (inScope && limiter) {
      const wait = limiter.take(account, Date.now());
      if (wait > 0) {
        return standard(429, 'Too many requests: rate limit exceeded', { 'retry-after': String(wait), 'x-fake-fault': 'rate-limit' });
      }
    }
    // 3. random 429s, as from a quota shared with other clients of the account
    if (inScope && faults.rateLimitedRate > 0 && this.random() < faults.rateLimitedRate) {
      const { minSeconds, maxSeconds } = faults.rateLimitedRetryAfter;
      const wait = minSeconds + Math.floor(this.random() * (maxSeconds - minSeconds + 1));
      return standard(429, 'Too many requests: rate limit exceeded', { 'retry-after': String(wait), 'x-fake-fault': 'rate-limited' });
    }
    // 4. random server errors
    if (inScope && faults.serverErrorRate > 0 && this.random() < faults.serverErrorRate) {
      return standard(500, 'Internal server error', { 'x-fake-fault': 'server-error' });
    }
    return null;
  }

  private ownLimiterOf(account: string, limit: RateLimit): AccountLimiter {
    let limiter = this.ownLimiters.get(account);
    if (!limiter) this.ownLimiters.set(account, (limiter = accountLimiter(limit)));
    return limiter;
  }

  /** Step 6, after the handler changed state: may malform `answer` in place, then decides its fate. */
  after(key: EndpointKey, answer: Answer, inScope: boolean): Fate {
    const faults = this.faults;
    if (!inScope) return { kind: 'answer', delayMs: 0 };
    if (answer.status >= 200 && answer.status < 300 && faults.malformedRate > 0 && this.random() < faults.malformedRate) {
      answer.body = malform(key, answer.body);
      answer.headers = { ...answer.headers, 'x-fake-fault': 'malformed' };
    }
    if (faults.hangRate > 0 && this.random() < faults.hangRate) return { kind: 'hang' };
    if (faults.lostAnswerRate > 0 && this.random() < faults.lostAnswerRate) return { kind: 'lost' };
    return { kind: 'answer', delayMs: faults.latencyMs };
  }
}

/** What a malformed answer breaks, per endpoint (documented in docs/fake-shipping-api.md). */
function malform(key: EndpointKey, body: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(body ?? {})) as Record<string, unknown>;
  switch (key) {
    case 'POST /labels':
    case 'GET /labels':
      copy.id = 12345;
      break;
    case 'GET /orders':
      if (copy.order && typeof copy.order === 'object') delete (copy.order as Record<string, unknown>).createdAt;
      break;
    case 'GET /tracking':
      copy.checkpoints = 'n/a';
      break;
    case 'GET /couriers':
      copy.couriers = null;
      break;
    case 'GET /products':
      copy.products = null;
      break;
  }
  return copy;
}
