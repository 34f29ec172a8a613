/**
 * Faults the reference receiver can inject into its webhook answers, to watch the sender
 * retry, back off, honour Retry-After and stop on 410. Set at start (CLI flags) or at run
 * time with POST /__admin/faults (a partial JSON patch, validated here).
 */
import { z } from 'zod';

export interface ReceiverFailNext {
  status: number;
  /** 429/503: the Retry-After value; null = header omitted. Default "1" for 429, omitted otherwise. */
  retryAfter?: string | null;
}

export interface ReceiverFaults {
  /** Not listening: connections are refused (see listening.ts for what "down" does exactly). */
  down: boolean;
  /** Delay before every webhook answer, after the event is applied. */
  slowMs: number;
  /** Share of webhook requests answered 500 before they are processed. */
  errorRate: number;
  /** Token bucket over all webhook requests; beyond it: 429 with Retry-After in seconds. */
  rateLimit: { perSecond: number; burst: number } | null;
  /** 410 for every shop (true) or for the listed shops. */
  gone: boolean | string[];
  /** The next webhook requests get these statuses, in order, one each. */
  failNext: ReceiverFailNext[];
}

export const NO_FAULTS: Readonly<ReceiverFaults> = Object.freeze({
  down: false,
  slowMs: 0,
  errorRate: 0,
  rateLimit: null,
  gone: false,
  failNext: [],
});

export const ReceiverFaultsPatch = z
  .strictObject({
    down: z.boolean(),
    /** Down now, listening again after this many ms (the only way to go down over HTTP). */
    downForMs: z.number().int().min(1).max(3_600_000),
    slowMs: z.number().int().min(0).max(600_000),
    errorRate: z.number().min(0).max(1),
    rateLimit: z.strictObject({ perSecond: z.number().positive(), burst: z.number().int().min(1) }).nullable(),
    gone: z.union([z.boolean(), z.array(z.string().min(1))]),
    failNext: z.array(
      z.strictObject({
        status: z.number().int().min(400).max(599),
        retryAfter: z.string().nullable().optional(),
      }),
    ),
  })
  .partial();
export type ReceiverFaultsPatch = z.input<typeof ReceiverFaultsPatch>;

export function cloneFaults(f: ReceiverFaults): ReceiverFaults {
  return {
    down: f.down,
    slowMs: f.slowMs,
    errorRate: f.errorRate,
    rateLimit: f.rateLimit === null ? null : { ...f.rateLimit },
    gone: Array.isArray(f.gone) ? [...f.gone] : f.gone,
    failNext: f.failNext.map((e) => ({ ...e })),
  };
}

export function isGone(faults: ReceiverFaults, shop: string): boolean {
  return Array.isArray(faults.gone) ? faults.gone.includes(shop) : faults.gone;
}

/** The faults in force, in a few words for the orders page ("none" when there are none). */
export function describeFaults(f: ReceiverFaults): string {
  const on = [
    f.down ? 'down' : '',
    f.slowMs > 0 ? `slowMs ${f.slowMs}` : '',
    f.errorRate > 0 ? `errorRate ${f.errorRate}` : '',
    f.rateLimit ? `rateLimit ${f.rateLimit.perSecond}/s burst ${f.rateLimit.burst}` : '',
    f.gone === true ? 'gone (all shops)' : Array.isArray(f.gone) && f.gone.length > 0 ? `gone (${f.gone.join(', ')})` : '',
    f.failNext.length > 0 ? `failNext ${f.failNext.map((e) => e.status).join(',')}` : '',
  ].filter(Boolean);
  return on.length > 0 ? on.join(', ') : 'none';
}
