/**
 * The faults met by one API request, in the order a real request meets them: the host in
 * front of WordPress (down, the fail-next queue, 429/503/504 pages, WordPress's fatal 500)
 * before the route runs, then what happens to the answer after it ran (cut off, never sent,
 * late). Every rate draws from one seeded PRNG in this fixed order, so a seed replays a run.
 */
import { mulberry32 } from '../fake-shipping-api/faults';
import { DEFAULTS } from './defaults';
import { DEFAULT_FAULTS, patchFaults, type FailNextEntry, type WooFaults } from './faults';
import { criticalError, hostPage, type Reply } from './replies';
import type { RouteKey } from './router';

/** The stats counter an injected answer counts under. */
export type FaultCounter = 'rateLimited' | 'unavailable' | 'gatewayTimeouts' | 'serverErrors' | 'slow' | 'lateWrites';

/** A write a slow host takes its time over: queued (applied after `ms`, then answered) or applied at once and answered after `ms`. */
export interface LateWrite {
  queued: boolean;
  ms: number;
}

export type BeforeFate =
  { kind: 'go'; entry?: FailNextEntry; late?: LateWrite } | { kind: 'reply'; reply: Reply; counter: FaultCounter } | { kind: 'drop' };

export type AfterFate = { kind: 'answer'; delayMs: number; replace?: Reply; counter?: FaultCounter } | { kind: 'drop' } | { kind: 'hang' };

export class WooFaultInjector {
  private faults: WooFaults = patchFaults(DEFAULT_FAULTS, {});
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = mulberry32(seed);
  }

  current(): WooFaults {
    return patchFaults(this.faults, {});
  }

  set(patch: unknown): WooFaults {
    this.faults = patchFaults(this.faults, patch);
    return this.current();
  }

  isDown(): boolean {
    return this.faults.down;
  }

  /** The webhook faults, read without a copy (the dispatcher asks on every order event). */
  webhookFaults(): { dropRate: number; disabled: boolean } {
    return { dropRate: this.faults.webhookDropRate, disabled: this.faults.webhooksDisabled };
  }

  private draw(rate: number): boolean {
    return rate > 0 && this.random() < rate;
  }

  /** The host's 429 or 503 page, with Retry-After when `seconds` is not null. */
  private busyPage(status: 429 | 503, seconds: number | null): Reply {
    return hostPage(status, seconds === null ? undefined : { 'retry-after': String(seconds) });
  }

  /** Before the route runs; `route` is null for a path no route matches; `params` is the URL's query string. */
  before(route: RouteKey | null, isWrite = false, params = ''): BeforeFate {
    const f = this.faults;
    const at = f.failNext.findIndex(
      (e) =>
        (e.route === undefined || e.route === route) &&
        (e.params?.has === undefined || params.includes(e.params.has)) &&
        (e.params?.lacks === undefined || !params.includes(e.params.lacks)),
    );
    if (at >= 0) {
      const entry = f.failNext.splice(at, 1)[0]!;
      switch (entry.kind) {
        case '429':
          return { kind: 'reply', reply: this.busyPage(429, entry.retryAfterSeconds ?? f.retryAfterSeconds), counter: 'rateLimited' };
        case '503':
          return { kind: 'reply', reply: this.busyPage(503, entry.retryAfterSeconds ?? f.retryAfterSeconds), counter: 'unavailable' };
        case '504':
          return { kind: 'reply', reply: hostPage(504), counter: 'gatewayTimeouts' };
        case '500':
          return { kind: 'reply', reply: criticalError(), counter: 'serverErrors' };
        case 'drop-before-commit':
          return { kind: 'drop' };
        case 'queued':
          return { kind: 'go', entry, late: { queued: true, ms: entry.delayMs ?? DEFAULTS.slowMs } };
        default:
          return { kind: 'go', entry };
      }
    }
    if (this.draw(f.rateLimitedRate)) return { kind: 'reply', reply: this.busyPage(429, f.retryAfterSeconds), counter: 'rateLimited' };
    if (this.draw(f.unavailableRate)) return { kind: 'reply', reply: this.busyPage(503, f.retryAfterSeconds), counter: 'unavailable' };
    if (this.draw(f.gatewayTimeoutRate)) return { kind: 'reply', reply: hostPage(504), counter: 'gatewayTimeouts' };
    if (this.draw(f.serverErrorRate)) return { kind: 'reply', reply: criticalError(), counter: 'serverErrors' };
    if (this.draw(f.badGatewayRate)) return { kind: 'reply', reply: hostPage(502), counter: 'gatewayTimeouts' };
    if (isWrite && this.draw(f.lateWriteRate)) {
      const { min, max } = f.lateWriteMs;
      return { kind: 'go', late: { queued: this.random() < 0.5, ms: Math.round(min + this.random() * (max - min)) } };
    }
    return { kind: 'go' };
  }

  /** After the route ran (its write applied); `entry` and `late` are what before() decided. */
  after(isWrite: boolean, entry: FailNextEntry | undefined, late?: LateWrite): AfterFate {
    const f = this.faults;
    if (late) return { kind: 'answer', delayMs: late.queued ? f.latencyMs : late.ms, counter: 'lateWrites' };
    if (entry?.kind === 'commit-then-drop') return { kind: 'drop' };
    // The gateway gave up while PHP went on and saved: the write is there, the client saw a 504.
    if (entry?.kind === '504-after-commit')
      return { kind: 'answer', delayMs: f.latencyMs, replace: hostPage(504), counter: 'gatewayTimeouts' };
    if (entry?.kind === 'slow') return { kind: 'answer', delayMs: entry.delayMs ?? DEFAULTS.slowMs, counter: 'slow' };
    if (isWrite && this.draw(f.commitThenDropRate)) return { kind: 'drop' };
    if (this.draw(f.hangRate)) return { kind: 'hang' };
    return { kind: 'answer', delayMs: f.latencyMs };
  }
}
