/**
 * Fault configuration of the fake shipping API: the patch schema (shared by setFaults, the
 * admin endpoint and the CLI), endpoint keys, a seeded PRNG and the per-account limiters (a token
 * bucket, or a sliding window).
 */
import { z } from 'zod';

/** Every API endpoint key the fake knows: `METHOD /first-path-segment`. */
export const ENDPOINT_KEYS = ['POST /labels', 'GET /labels', 'GET /orders', 'GET /tracking', 'GET /couriers', 'GET /products'] as const;
export type EndpointKey = (typeof ENDPOINT_KEYS)[number];

export interface RateLimit {
  perSecond: number;
  /** The bucket's size; a window (`kind`) has none. */
  burst?: number;
  /**
   * A refused call spends a token too (the bucket goes below empty, at most a burst's worth):
   * a limiter that counts every call, as fixed-window counters do. Default false: only accepted
   * calls spend one. The spec does not say which the real API does.
   */
  refusedTakesToken?: boolean;
  /**
   * `window`: at most `perSecond` calls (a whole number) in any second, a sliding window, with
   * no credit saved up over it, so no `burst`; a refused call counts in it too with
   * `refusedTakesToken`. Default `bucket`. The spec names a limit and a window and shows neither.
   */
  kind?: 'bucket' | 'window';
}

export interface FailNextEntry {
  /** Endpoint key the entry applies to; absent = the next API request of any endpoint. */
  endpoint?: string;
  /** Account (by name) the entry applies to; absent = any account. */
  account?: string;
  status: number;
  /** 429 only: the Retry-After header value; null = header omitted; default "1". */
  retryAfter?: string | null;
}

/** Range of the Retry-After (whole seconds) of a random 429 (`rateLimitedRate`). */
export interface RetryAfterRange {
  minSeconds: number;
  maxSeconds: number;
}

export interface Faults {
  rateLimit: RateLimit | null;
  /** Share of requests answered 429 at random, whatever the token bucket says (a shared quota). */
  rateLimitedRate: number;
  rateLimitedRetryAfter: RetryAfterRange;
  serverErrorRate: number;
  latencyMs: number;
  hangRate: number;
  malformedRate: number;
  /** Share of requests handled (a label is created) whose connection is then cut without an answer. */
  lostAnswerRate: number;
  endpoints: string[] | null;
  failNext: FailNextEntry[];
}

export const DEFAULT_FAULTS: Readonly<Faults> = Object.freeze({
  rateLimit: null,
  rateLimitedRate: 0,
  rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 1 },
  serverErrorRate: 0,
  latencyMs: 0,
  hangRate: 0,
  malformedRate: 0,
  lostAnswerRate: 0,
  endpoints: null,
  failNext: [],
});

/**
 * Normalises an endpoint key: method upper-cased, path reduced to its first segment, so
 * "get /tracking/{id}" and "GET /tracking" are the same key. Returns null when unknown.
 */
export function normalizeEndpointKey(raw: string): EndpointKey | null {
  const match = /^\s*([A-Za-z]+)\s+\/?([^/\s?]*)/.exec(raw);
  if (!match) return null;
  const key = `${match[1]!.toUpperCase()} /${match[2]!.toLowerCase()}`;
  return (ENDPOINT_KEYS as readonly string[]).includes(key) ? (key as EndpointKey) : null;
}

const EndpointKeySchema = z.string().transform((raw, ctx) => {
  const key = normalizeEndpointKey(raw);
  if (key === null) {
    ctx.addIssue({ code: 'custom', message: `unknown endpoint key "${raw}"; expected one of: ${ENDPOINT_KEYS.join(', ')}` });
    return z.NEVER;
  }
  return key;
});

const Rate = z.number().min(0).max(1);

/** A RateLimit as the admin endpoint, the CLI and an accounts file give it. */
export const RateLimitSchema = z
  .strictObject({
    perSecond: z.number().positive(),
    burst: z.number().int().min(1).optional(),
    refusedTakesToken: z.boolean().optional(),
    kind: z.enum(['bucket', 'window']).optional(),
  })
  .superRefine((l, ctx) => {
    if (l.kind !== 'window') {
      if (l.burst === undefined) ctx.addIssue({ code: 'custom', message: 'a bucket needs its size', path: ['burst'] });
      return;
    }
    if (!Number.isInteger(l.perSecond))
      ctx.addIssue({ code: 'custom', message: 'a window counts whole calls: an integer', path: ['perSecond'] });
    if (l.burst !== undefined) ctx.addIssue({ code: 'custom', message: 'a window has none', path: ['burst'] });
  });

export const FaultsPatch = z
  .strictObject({
    rateLimit: RateLimitSchema.nullable(),
    rateLimitedRate: Rate,
    rateLimitedRetryAfter: z
      .strictObject({
        minSeconds: z.number().int().min(0).max(3600),
        maxSeconds: z.number().int().min(0).max(3600),
      })
      .refine((r) => r.minSeconds <= r.maxSeconds, { message: 'minSeconds must not exceed maxSeconds', path: ['maxSeconds'] }),
    serverErrorRate: Rate,
    latencyMs: z.number().int().min(0).max(600_000),
    hangRate: Rate,
    malformedRate: Rate,
    lostAnswerRate: Rate,
    endpoints: z.array(EndpointKeySchema).nullable(),
    failNext: z.array(
      z.strictObject({
        endpoint: EndpointKeySchema.optional(),
        account: z.string().min(1).optional(),
        status: z.number().int().min(400).max(599),
        retryAfter: z.string().nullable().optional(),
      }),
    ),
  })
  .partial();
export type FaultsPatch = z.input<typeof FaultsPatch>;

/** Error thrown by setFaults for an invalid patch; `details` is the validation body's list. */
export class InvalidFaultsError extends Error {
  override readonly name = 'InvalidFaultsError';
  constructor(readonly details: Array<{ field: string; message: string }>) {
    super(`invalid faults: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`);
  }
}

export function cloneFaults(f: Faults): Faults {
  return {
    rateLimit: f.rateLimit === null ? null : { ...f.rateLimit },
    rateLimitedRate: f.rateLimitedRate,
    rateLimitedRetryAfter: { ...f.rateLimitedRetryAfter },
    serverErrorRate: f.serverErrorRate,
    latencyMs: f.latencyMs,
    hangRate: f.hangRate,
    malformedRate: f.malformedRate,
    lostAnswerRate: f.lostAnswerRate,
    endpoints: f.endpoints === null ? null : [...f.endpoints],
    failNext: f.failNext.map((e) => ({ ...e })),
  };
}

/** mulberry32: a tiny seeded PRNG, enough to make fault rates reproducible. Returns [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A per-account limit: `take` returns 0 when the call may go on, else its Retry-After in whole seconds (min 1). */
export interface AccountLimiter {
  take(account: string, now: number): number;
}

/** The limiter a limit asks for (RateLimit.kind). */
export function accountLimiter(limit: RateLimit): AccountLimiter {
  return limit.kind === 'window' ? new SlidingWindows(limit) : new TokenBuckets(limit);
}

/** A bucket's size when none is given (the CLI's `--burst` default): a second's worth, at least one call. */
export function defaultBurst(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond));
}

/** Per-account token bucket: `burst` tokens, refilled at `perSecond`. */
export class TokenBuckets implements AccountLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly limit: RateLimit) {}

  /** Takes a token; returns 0 when allowed, else the Retry-After in whole seconds (min 1) until a token would be there. */
  take(account: string, now: number): number {
    const { perSecond } = this.limit;
    const burst = this.limit.burst ?? defaultBurst(perSecond);
    const bucket = this.buckets.get(account) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    this.buckets.set(account, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
    if (this.limit.refusedTakesToken) bucket.tokens = Math.max(-burst, bucket.tokens - 1);
    return retryAfter;
  }
}

/** Per-account sliding window: at most `perSecond` calls counted in any second. */
export class SlidingWindows implements AccountLimiter {
  /** The times of the calls counted in the last second, oldest first. */
  private readonly windows = new Map<string, number[]>();

  constructor(private readonly limit: RateLimit) {}

  /** Counts the call; returns 0 when allowed, else the Retry-After in whole seconds (min 1) until the window has room. */
  take(account: string, now: number): number {
    const capacity = Math.max(1, Math.floor(this.limit.perSecond));
    const calls = this.windows.get(account) ?? [];
    this.windows.set(account, calls);
    while (calls.length > 0 && calls[0]! <= now - 1000) calls.shift();
    if (calls.length < capacity) {
      calls.push(now);
      return 0;
    }
    // Room once the oldest of the last `capacity` calls leaves the window.
    const retryAfter = Math.max(1, Math.ceil((calls[calls.length - capacity]! + 1000 - now) / 1000));
    if (this.limit.refusedTakesToken) calls.push(now);
    return retryAfter;
  }
}
