/**
 * The task priority of the call an activity makes (domain/priority.ts): its info's, or for a
 * local activity, which has none, the header its workflow gave it (workflows/priority-interceptor.ts).
 */
import { Context } from '@temporalio/activity';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { effectivePriorityKey, PRIORITY_HEADER } from '../domain/priority';

const fromHeader = new WeakMap<Context, number>();

export const priorityHeaderInterceptor: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    execute(input, next) {
      const payload = input.headers[PRIORITY_HEADER];
      if (payload) {
        const key: unknown = defaultPayloadConverter.fromPayload(payload);
        // Our own workflow's, but checked all the same: a small positive integer or nothing.
        if (typeof key === 'number' && Number.isInteger(key) && key >= 1 && key <= 100) fromHeader.set(ctx, key);
      }
      return next(input);
    },
  },
});

/** The current activity's priority key, Temporal's default (3) when it has none. */
export function callPriorityKey(ctx: Context = Context.current()): number {
  return effectivePriorityKey(ctx.info.priority?.priorityKey || fromHeader.get(ctx));
}
