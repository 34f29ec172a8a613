/**
 * A command's reads (the import's preflight, `import --from`'s shop pages, `couriers`,
 * `products`) tried again after a failure in passing, until the command's `--deadline`. The one
 * loop they share; each brings its own retry rules (the shop pull's, the shipping API's) and its
 * own words.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDuration } from '../config/settings';

/** How long after its start a command reads again, unless `--deadline` says otherwise. */
export const DEFAULT_READ_DEADLINE_MS = 15 * 60_000;

/** `--deadline`: a duration in ms (the default when absent); undefined when the value is not a positive duration. */
export function readDeadlineMs(value: string | undefined): number | undefined {
  if (value === undefined) return DEFAULT_READ_DEADLINE_MS;
  const ms = parseDuration(value);
  return ms === undefined || ms <= 0 ? undefined : ms;
}

export interface ReadAgainOptions {
  /** No read is tried again after this time (epoch ms): `--deadline`. */
  deadline: number;
  /** A line for the operator each time a read waits. */
  onWait: (line: string) => void;
  signal?: AbortSignal;
}

/** A failure's verdict by the caller's rules: wait `waitMs` and read again (saying `line`), or null: the failure is final. */
export type ReadAgain = { waitMs: number; line: (deadline: string) => string } | null;

export interface ReadAgainRules {
  /** The verdict on the `failuresInARow`-th failure in a row (1 for the first). */
  next: (err: unknown, failuresInARow: number) => ReadAgain;
  /** What to throw: the failure when it is final (`deadlineFirst` null), or when the deadline (ISO) comes before the next read. */
  stop: (err: unknown, deadlineFirst: string | null) => unknown;
}

/** One read, tried again while `rules` say so and the next read can start before the deadline. */
export async function readAgainUntil<T>(read: () => Promise<T>, rules: ReadAgainRules, options: ReadAgainOptions): Promise<T> {
  for (let failures = 1; ; failures++) {
    try {
      return await read();
    } catch (err) {
      const again = rules.next(err, failures);
      if (again === null) throw rules.stop(err, null);
      const deadline = new Date(options.deadline).toISOString();
      if (Date.now() + again.waitMs > options.deadline) throw rules.stop(err, deadline);
      options.onWait(again.line(deadline));
      await sleep(again.waitMs, undefined, { signal: options.signal });
    }
  }
}
