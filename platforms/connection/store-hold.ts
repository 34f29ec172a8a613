/**
 * A store's Retry-After for the store as a whole, in this worker. A 429 or 503 page from a
 * WooCommerce host (WordPress itself has no limit: the host, WAF or CDN speaks for the whole
 * site) or a Shopify HTTP 429/503 tells the client to wait, not one order: after it, no call of
 * any order of that store leaves this worker before the Retry-After has ended. A call that would
 * have to wait longer than its attempt may gives the rest of the wait to the caller's retry
 * (`retry_after` with what is left), so the next attempt comes after it too.
 *
 * `run` also keeps the store's calls to the connections the worker opens to it: a call waits for
 * a free one here, and looks at the hold once it has it, right before it is sent. Calls queued
 * inside the HTTP pool instead would all have passed the hold before the page came, and go out
 * after it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { PLATFORM_CONNECTIONS } from './http';
import { StopDelivery } from './result';

export class StoreHold {
  private until = 0;
  private status = 503;
  private free = PLATFORM_CONNECTIONS;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** The store answered `status` with a wait of `ms` (already clamped by the shared rules). */
  hold(status: number, ms: number): void {
    const until = this.now() + ms;
    if (until <= this.until) return;
    this.until = until;
    this.status = status;
  }

  /** What is left of the hold, in ms (0: none). */
  leftMs(): number {
    return Math.max(0, this.until - this.now());
  }

  /** Returns once the hold has ended: waits for it within `maxWaitMs`, else throws `retry_after` with what is left. */
  async pass(maxWaitMs: number, signal: AbortSignal): Promise<void> {
    const left = this.leftMs();
    if (left === 0) return;
    if (left > maxWaitMs) throw new StopDelivery({ kind: 'retry_after', status: this.status, retryAfterMs: left });
    await sleep(left, undefined, { signal });
  }

  /** Sends `call` on one of the store's connections, once the hold has ended (as `pass` waits for it). */
  async run<T>(maxWaitMs: number, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    for (;;) {
      await this.connection(signal);
      if (this.leftMs() === 0) {
        try {
          return await call();
        } finally {
          this.release();
        }
      }
      this.release();
      await this.pass(maxWaitMs, signal);
    }
  }

  private connection(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener('abort', cancelled);
        resolve();
      };
      const cancelled = () => {
        this.waiting.splice(this.waiting.indexOf(turn), 1);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted while waiting for a connection to the store'));
      };
      this.waiting.push(turn);
      signal.addEventListener('abort', cancelled, { once: true });
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

const holds = new Map<string, StoreHold>();

/** The one hold of a store in this worker, shared by its import reads and its write-back (`key`: where the store answers). */
export function storeHold(key: string, now: () => number = Date.now): StoreHold {
  let hold = holds.get(key);
  if (!hold) {
    hold = new StoreHold(now);
    holds.set(key, hold);
  }
  return hold;
}
