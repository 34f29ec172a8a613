/**
 * Turns many "this shop changed" into few trigger calls. Per shop: the first request calls at
 * once; requests while a call runs, or within `coalesceMs` of the last call's start, mark the
 * shop due, and one more call follows when both have passed. That trailing call matters: a pull
 * already under way may have read the orders before the change that asked for it.
 *
 * Each call carries the order ids its requests named (at most `maxOrderIds`), and `fromCursor`
 * when one named none, or more were named than that: then only a pull from the cursor finds them.
 *
 * Calls never reject into the caller: a rejection, a throw or a call passing `timeoutMs` is
 * reported to `onFailure`, and the shop is free for the next request.
 */
import type { TriggerContext } from './types';

interface Slot {
  due: boolean;
  ids: Set<string>;
  fromCursor: boolean;
  timer: NodeJS.Timeout | null;
  running: Promise<void> | null;
  controller: AbortController | null;
  lastStartMs: number;
}

export interface CoalescerOptions {
  coalesceMs: number;
  timeoutMs: number;
  maxOrderIds: number;
  trigger: (shop: string, context: TriggerContext) => Promise<void>;
  onCall: (shop: string, wanted: Omit<TriggerContext, 'signal'>) => void;
  onFailure: (shop: string, error: unknown) => void;
}

export class TriggerCoalescer {
  private readonly slots = new Map<string, Slot>();
  private draining = false;
  /** Set when drain gives up: no call starts after that, not even one still due. */
  private stopped = false;

  constructor(private readonly options: CoalescerOptions) {}

  /** Asks for a call for `shop`, for the order `orderId` (null: none named); ignored once draining has begun. */
  request(shop: string, orderId: string | null): void {
    if (this.draining) return;
    let slot = this.slots.get(shop);
    if (!slot) {
      slot = { due: false, ids: new Set(), fromCursor: false, timer: null, running: null, controller: null, lastStartMs: -Infinity };
      this.slots.set(shop, slot);
    }
    slot.due = true;
    if (orderId === null) slot.fromCursor = true;
    else if (slot.ids.has(orderId) || slot.ids.size < this.options.maxOrderIds) slot.ids.add(orderId);
    else slot.fromCursor = true;
    this.pump(shop, slot);
  }

  /**
   * Calls every shop still due now, then waits for all calls, at most `timeoutMs`; calls still
   * pending then are aborted. False when it had to give up.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.draining = true;
    for (const [shop, slot] of this.slots) {
      if (slot.timer) clearTimeout(slot.timer);
      slot.timer = null;
      this.pump(shop, slot);
    }
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // A call ending while draining starts its shop's due call at once, so look again.
      const running = [...this.slots.values()].flatMap((s) => (s.running ? [s.running] : []));
      if (running.length === 0) return true;
      const left = deadline - Date.now();
      if (left <= 0) {
        this.stopped = true;
        for (const slot of this.slots.values()) slot.controller?.abort(new Error('shop trigger closing'));
        await Promise.all(running);
        return false;
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(running), new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  }

  private pump(shop: string, slot: Slot): void {
    if (!slot.due || slot.running || slot.timer || this.stopped) return;
    const wait = this.draining ? 0 : slot.lastStartMs + this.options.coalesceMs - Date.now();
    if (wait > 0) {
      slot.timer = setTimeout(() => {
        slot.timer = null;
        this.pump(shop, slot);
      }, wait);
      return;
    }
    const wanted = { orderIds: [...slot.ids], fromCursor: slot.fromCursor };
    slot.due = false;
    slot.ids = new Set();
    slot.fromCursor = false;
    slot.lastStartMs = Date.now();
    const controller = new AbortController();
    slot.controller = controller;
    slot.running = this.call(shop, controller, wanted)
      // Only a throwing onCall/onFailure (a logger) gets here; it must not become an unhandled rejection.
      .catch(() => undefined)
      .finally(() => {
        slot.running = null;
        slot.controller = null;
        this.pump(shop, slot);
      });
  }

  /** One call; settles when the trigger settles, times out or is aborted, and never rejects. */
  private async call(shop: string, controller: AbortController, wanted: Omit<TriggerContext, 'signal'>): Promise<void> {
    this.options.onCall(shop, wanted);
    const { signal } = controller;
    // async wrapper: a trigger that throws synchronously becomes a rejection like any other.
    const attempt = (async () => this.options.trigger(shop, { signal, ...wanted }))();
    const outcome = attempt.then(
      () => null,
      (error: unknown) => ({ error }),
    );
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const cutOff = new Promise<{ error: unknown }>((resolve) => {
      timer = setTimeout(() => {
        const error = new Error(`trigger did not settle within ${this.options.timeoutMs} ms`);
        controller.abort(error);
        resolve({ error });
      }, this.options.timeoutMs);
      onAbort = () => resolve({ error: signal.reason });
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const failure = await Promise.race([outcome, cutOff]);
      if (failure) this.options.onFailure(shop, failure.error);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }
}
