/**
 * A store's hold in the worker (platforms/connection/store-hold.ts): a call that waits for one of
 * the store's connections looks at the hold when it gets one, right before it is sent, so a
 * Retry-After that arrives while calls queue is honoured by every queued call too.
 */
import { describe, expect, it } from 'vitest';
import { PLATFORM_CONNECTIONS } from '../platforms/connection/http';
import { StopDelivery } from '../platforms/connection/result';
import { StoreHold } from '../platforms/connection/store-hold';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('StoreHold.run', () => {
  it('a call queued behind busy connections is not sent before a Retry-After that came while it waited', async () => {
    const hold = new StoreHold();
    const signal = new AbortController().signal;
    const busy = gate();
    const inFlight = Array.from({ length: PLATFORM_CONNECTIONS }, () => hold.run(5_000, signal, () => busy.opened));
    let sentAt = 0;
    const queued = hold.run(5_000, signal, async () => void (sentAt = Date.now()));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sentAt).toBe(0); // every connection is taken
    // One of the calls in flight is answered 503 with Retry-After: 0.3 s.
    hold.hold(503, 300);
    const holdEnds = Date.now() + 300;
    busy.open();
    await Promise.all([...inFlight, queued]);
    expect(sentAt).toBeGreaterThanOrEqual(holdEnds - 5);
  });

  it('a hold longer than the call may wait gives what is left to the caller, and frees the connection', async () => {
    const hold = new StoreHold();
    const signal = new AbortController().signal;
    hold.hold(429, 60_000);
    const failure = await hold.run(1_000, signal, async () => 'sent').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StopDelivery);
    expect((failure as StopDelivery).result).toMatchObject({ kind: 'retry_after', status: 429 });
    // Every connection is free again: as many calls as connections pass at once once the hold is over.
    const later = new StoreHold();
    const all = await Promise.all(Array.from({ length: PLATFORM_CONNECTIONS + 1 }, (_, i) => later.run(1_000, signal, async () => i)));
    expect(all).toHaveLength(PLATFORM_CONNECTIONS + 1);
  });

  it('a queued call whose signal aborts leaves the queue and is never sent', async () => {
    const hold = new StoreHold();
    const busy = gate();
    const inFlight = Array.from({ length: PLATFORM_CONNECTIONS }, () => hold.run(5_000, new AbortController().signal, () => busy.opened));
    const abort = new AbortController();
    let sent = false;
    const queued = hold.run(5_000, abort.signal, async () => void (sent = true)).catch((e: unknown) => e);
    abort.abort(new Error('cancelled'));
    expect(await queued).toMatchObject({ message: 'cancelled' });
    busy.open();
    await Promise.all(inFlight);
    expect(sent).toBe(false);
    // The connection the aborted call never took is still there for the next one.
    expect(await hold.run(5_000, new AbortController().signal, async () => 'next')).toBe('next');
  });
});
