/** Waiting, for the launchers: one delay that a signal can end early, one bounded wait. */
import { setTimeout as sleep } from 'node:timers/promises';

/** Resolves after `ms`, or at once when `signal` aborts (a stopping chaos run must not sleep on). */
export async function delay(ms: number, signal?: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch((err: unknown) => {
    if (!signal?.aborted) throw err;
  });
}

/**
 * Whether `promise` settles within `ms`. The timer is cleared either way, so a child that
 * stopped at once does not keep the launcher alive for the rest of its grace period.
 */
export async function within(promise: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<boolean> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([promise.then(() => true), delay(ms, controller.signal).then(() => false)]);
  } finally {
    controller.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}
