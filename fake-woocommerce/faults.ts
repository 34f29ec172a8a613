/**
 * Fault configuration of the fake store (the faults a WooCommerce host shows, not WooCommerce
 * itself: wc/v3 has no rate limit). One zod schema serves setFaults, POST /_fake/faults and
 * the CLI, so a bad value is refused with its field named, wherever it comes from.
 */
import { z } from 'zod';
import { fieldProblems } from '../shipping-api/contract';
import { ROUTE_KEYS } from './router';

export const FAIL_NEXT_KINDS = [
  'commit-then-drop',
  'drop-before-commit',
  '429',
  '503',
  '504',
  '504-after-commit',
  '500',
  'slow',
  'queued',
] as const;
export type FailNextKind = (typeof FAIL_NEXT_KINDS)[number];

export interface FailNextEntry {
  /** Route key the entry waits for; absent = the next API request of any route. */
  route?: (typeof ROUTE_KEYS)[number];
  kind: FailNextKind;
  /** 429 and 503: the Retry-After seconds; null = no header; absent = the faults' retryAfterSeconds. */
  retryAfterSeconds?: number | null;
  /** slow: how long the answer waits after the write applied; queued: how long the request waits before it runs (ms, default 30 000). */
  delayMs?: number;
  /** Only a request whose query string has / lacks this text (e.g. `include=` of named orders): two reads of one route told apart. */
  params?: { has?: string; lacks?: string };
}

export interface WooFaults {
  /** Share of API requests the host answers 429 (an HTML page). */
  rateLimitedRate: number;
  /** Retry-After of the 429 and 503 pages, in seconds; null = the header is left out. */
  retryAfterSeconds: number | null;
  /** Share answered 503 (the host's HTML page). */
  unavailableRate: number;
  /** Share answered 504 by the gateway before WordPress ran. */
  gatewayTimeoutRate: number;
  /** Share answered 502 by the proxy before WordPress ran (PHP-FPM restarting). */
  badGatewayRate: number;
  /** Share answered 500 (WordPress's "critical error" JSON). */
  serverErrorRate: number;
  /** Added before every answer. */
  latencyMs: number;
  /** Share handled (writes applied) and then never answered. */
  hangRate: number;
  /** Share of writes applied and then cut off without an answer (the socket is destroyed). */
  commitThenDropRate: number;
  /**
   * Share of writes a slow shared host takes lateWriteMs over: half of them queued (applied,
   * then answered, after the wait), half applied at once and answered after the wait.
   */
  lateWriteRate: number;
  /** The wait of a late write, drawn uniformly in [min, max] ms. */
  lateWriteMs: { min: number; max: number };
  /** Every API connection is destroyed at once, nothing read or applied. */
  down: boolean;
  /** Deterministic faults, consumed in order by the first request each matches. */
  failNext: FailNextEntry[];
  /** Share of webhook deliveries silently never sent (no attempt, no failure counted). */
  webhookDropRate: number;
  /** No webhook delivery is queued or sent, as when the host's WP-Cron never runs (pings still go). */
  webhooksDisabled: boolean;
}

export const DEFAULT_FAULTS: Readonly<WooFaults> = Object.freeze({
  rateLimitedRate: 0,
  retryAfterSeconds: null,
  unavailableRate: 0,
  gatewayTimeoutRate: 0,
  badGatewayRate: 0,
  serverErrorRate: 0,
  latencyMs: 0,
  hangRate: 0,
  commitThenDropRate: 0,
  lateWriteRate: 0,
  lateWriteMs: { min: 3_000, max: 6_000 },
  down: false,
  failNext: [],
  webhookDropRate: 0,
  webhooksDisabled: false,
});

const Rate = z.number().min(0).max(1);
const Seconds = z.number().int().min(0).max(86_400);

export const WooFaultsPatchSchema = z
  .strictObject({
    rateLimitedRate: Rate,
    retryAfterSeconds: Seconds.nullable(),
    unavailableRate: Rate,
    gatewayTimeoutRate: Rate,
    badGatewayRate: Rate,
    serverErrorRate: Rate,
    latencyMs: z.number().int().min(0).max(600_000),
    hangRate: Rate,
    commitThenDropRate: Rate,
    lateWriteRate: Rate,
    lateWriteMs: z
      .strictObject({ min: z.number().int().min(0).max(600_000), max: z.number().int().min(0).max(600_000) })
      .refine((r) => r.min <= r.max, { message: 'min must not be above max', path: ['max'] }),
    down: z.boolean(),
    failNext: z.array(
      z.strictObject({
        route: z.enum(ROUTE_KEYS).optional(),
        kind: z.enum(FAIL_NEXT_KINDS),
        retryAfterSeconds: Seconds.nullable().optional(),
        delayMs: z.number().int().min(0).max(600_000).optional(),
        params: z.strictObject({ has: z.string().min(1).max(200).optional(), lacks: z.string().min(1).max(200).optional() }).optional(),
      }),
    ),
    webhookDropRate: Rate,
    webhooksDisabled: z.boolean(),
  })
  .partial();
/** A partial patch: absent fields keep their value; `failNext` replaces the queue. */
export type WooFaultsPatch = z.input<typeof WooFaultsPatchSchema>;

export class InvalidWooFaultsError extends Error {
  override readonly name = 'InvalidWooFaultsError';
  constructor(readonly details: Array<{ field: string; message: string }>) {
    super(`invalid faults: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`);
  }
}

/** The patch applied to `current`; throws InvalidWooFaultsError naming each bad field. */
export function patchFaults(current: WooFaults, patch: unknown): WooFaults {
  const parsed = WooFaultsPatchSchema.safeParse(patch);
  if (!parsed.success) throw new InvalidWooFaultsError(fieldProblems(parsed.error));
  const next: WooFaults = { ...current, ...parsed.data };
  return {
    ...next,
    failNext: next.failNext.map((e) => ({ ...e, ...(e.params && { params: { ...e.params } }) })),
    lateWriteMs: { ...next.lateWriteMs },
  };
}
