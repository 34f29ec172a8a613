/**
 * Injected faults: the patch schema (shared by setFaults, POST /_fake/faults and the CLI), a
 * seeded PRNG so rates replay, and the decisions in the order a request meets them: before
 * running (fail-next queue, 500, 503) and after (slow, hang, commit-then-drop, latency). Webhook
 * faults (duplicates, delays that reorder, none at all) draw from a PRNG of their own, so
 * webhook traffic does not change which API requests fail.
 */
import { z } from 'zod';
import { DEFAULTS, LIMITS } from './defaults';
import { parseOrThrow } from './invalid';
import { ROOT_FIELD_NAMES } from './schema';
import { mulberry32 } from '../fake-shipping-api/faults';

export const FAIL_KINDS = ['commit-then-drop', 'drop-before-commit', '500', '503', 'throttled', 'slow'] as const;
export type FailKind = (typeof FAIL_KINDS)[number];

const Rate = z.number().min(0).max(1);
const Millis = z.number().int().min(0).max(600_000);

const DelayRange = z
  .strictObject({ min: Millis, max: Millis })
  .refine((r) => r.min <= r.max, { message: 'min must not be above max', path: ['max'] });

const FailNextEntry = z.strictObject({
  /** Root field the entry waits for (e.g. fulfillmentCreate); absent = the next runnable request. */
  operation: z.enum(ROOT_FIELD_NAMES as [string, ...string[]]).optional(),
  kind: z.enum(FAIL_KINDS),
  /** 'slow' only: how long the answer waits (default 30 s). */
  delayMs: Millis.optional(),
  /**
   * Only a request whose string variables (a search: `updated_at:>=…` of a pull from a cursor,
   * `id:…` of named orders) have / lack this text: two reads of one root field told apart.
   */
  search: z.strictObject({ has: z.string().min(1).max(200).optional(), lacks: z.string().min(1).max(200).optional() }).optional(),
});
export type FailNextEntry = z.infer<typeof FailNextEntry>;

export const ShopifyFaultsPatchSchema = z
  .strictObject({
    serverErrorRate: Rate,
    unavailableRate: Rate,
    latencyMs: Millis,
    hangRate: Rate,
    commitThenDropRate: Rate,
    down: z.boolean(),
    /** Replaces the queue. */
    failNext: z.array(FailNextEntry).max(1000),
    /** Share of webhook deliveries sent a second time: same event id, new webhook id. */
    webhookDuplicateRate: Rate,
    /** Each first delivery attempt waits a random time in [min, max] ms, so events overtake each other; null = none. */
    webhookDelayMs: DelayRange.nullable(),
    /** No webhook is sent at all (events are counted as suppressed): delivery is not guaranteed. */
    webhooksDisabled: z.boolean(),
    /** Restarts the PRNG behind the rates. */
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1),
  })
  .partial();
export type ShopifyFaultsPatch = z.input<typeof ShopifyFaultsPatchSchema>;

export interface ShopifyFaults {
  serverErrorRate: number;
  unavailableRate: number;
  latencyMs: number;
  hangRate: number;
  commitThenDropRate: number;
  down: boolean;
  failNext: FailNextEntry[];
  webhookDuplicateRate: number;
  webhookDelayMs: { min: number; max: number } | null;
  webhooksDisabled: boolean;
}

/** The webhook PRNG's seed: derived, so one `seed` replays both streams. */
const webhookSeed = (seed: number) => (seed ^ 0x5bd1e995) >>> 0;

/** Before running: go on, or answer/drop instead. */
export type Before = { kind: 'run' } | { kind: '500' | '503' | 'throttled' | 'drop' };
/** After running: answer (after a delay), never answer, or cut the connection. */
export type After = { kind: 'answer'; delayMs: number } | { kind: 'hang' } | { kind: 'drop' };

export class FaultInjector {
  private faults: ShopifyFaults = {
    serverErrorRate: 0,
    unavailableRate: 0,
    latencyMs: 0,
    hangRate: 0,
    commitThenDropRate: 0,
    down: false,
    failNext: [],
    webhookDuplicateRate: 0,
    webhookDelayMs: null,
    webhooksDisabled: false,
  };
  private random: () => number;
  private webhookRandom: () => number;

  constructor(seed: number = DEFAULTS.seed) {
    this.random = mulberry32(seed);
    this.webhookRandom = mulberry32(webhookSeed(seed));
  }

  current(): ShopifyFaults {
    const { failNext, webhookDelayMs } = this.faults;
    return { ...this.faults, failNext: failNext.map((e) => ({ ...e })), webhookDelayMs: webhookDelayMs && { ...webhookDelayMs } };
  }

  /** Validates and applies a partial patch; throws InvalidInputError naming the field. */
  set(patch: unknown): ShopifyFaults {
    const { seed, ...rest } = parseOrThrow(ShopifyFaultsPatchSchema, 'faults', patch);
    if (seed !== undefined) {
      this.random = mulberry32(seed);
      this.webhookRandom = mulberry32(webhookSeed(seed));
    }
    this.faults = { ...this.faults, ...rest };
    return this.current();
  }

  webhooksDisabled(): boolean {
    return this.faults.webhooksDisabled;
  }

  /** Whether this delivery is also sent a second time. */
  duplicateWebhook(): boolean {
    const rate = this.faults.webhookDuplicateRate;
    return rate > 0 && this.webhookRandom() < rate;
  }

  /** How long a first delivery attempt waits (0 without the fault). */
  webhookDelay(): number {
    const range = this.faults.webhookDelayMs;
    return range === null ? 0 : Math.round(range.min + this.webhookRandom() * (range.max - range.min));
  }

  isDown(): boolean {
    return this.faults.down;
  }

  /** Takes the first queued entry for one of these root fields (or for any) and this request's search. */
  takeQueued(rootFields: string[], variables: Record<string, unknown> = {}): FailNextEntry | null {
    const search = Object.values(variables)
      .filter((v): v is string => typeof v === 'string')
      .join('\n');
    const i = this.faults.failNext.findIndex(
      (e) =>
        (e.operation === undefined || rootFields.includes(e.operation)) &&
        (e.search?.has === undefined || search.includes(e.search.has)) &&
        (e.search?.lacks === undefined || !search.includes(e.search.lacks)),
    );
    return i < 0 ? null : this.faults.failNext.splice(i, 1)[0]!;
  }

  private draw(rate: number): boolean {
    return rate > 0 && this.random() < rate;
  }

  before(queued: FailNextEntry | null): Before {
    if (queued?.kind === 'drop-before-commit') return { kind: 'drop' };
    if (queued?.kind === '500' || queued?.kind === '503' || queued?.kind === 'throttled') return { kind: queued.kind };
    if (this.draw(this.faults.serverErrorRate)) return { kind: '500' };
    if (this.draw(this.faults.unavailableRate)) return { kind: '503' };
    return { kind: 'run' };
  }

  /** A hang also applies a mutation first: the client cannot tell it from a slow success. */
  after(queued: FailNextEntry | null, isMutation: boolean): After {
    if (queued?.kind === 'commit-then-drop') return { kind: 'drop' };
    if (queued?.kind === 'slow') return { kind: 'answer', delayMs: queued.delayMs ?? LIMITS.slowMs };
    if (this.draw(this.faults.hangRate)) return { kind: 'hang' };
    if (isMutation && this.draw(this.faults.commitThenDropRate)) return { kind: 'drop' };
    return { kind: 'answer', delayMs: this.faults.latencyMs };
  }
}
