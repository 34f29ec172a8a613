import { Context } from '@temporalio/activity';

/**
 * Runs one API call: passes the activity's cancellation signal so a cancelled activity aborts
 * its HTTP request, and heartbeats while a call is slow so a dead worker is noticed within the
 * heartbeat timeout rather than the start-to-close timeout. A fast call (most) sends none: each
 * heartbeat that reaches the server is a billed action on Temporal Cloud. Heartbeats repeat the
 * attempt's details, so what a retry reads back is never replaced by an empty heartbeat.
 */
export async function withHeartbeat<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  // A local activity (a first attempt) runs inside a workflow task: nothing to heartbeat to.
  const heartbeatMs = ctx.info.isLocal ? undefined : ctx.info.heartbeatTimeoutMs;
  const details: unknown = ctx.info.heartbeatDetails;
  const timer = heartbeatMs ? setInterval(() => ctx.heartbeat(details), Math.max(200, heartbeatMs / 3)) : undefined;
  try {
    return await call(ctx.cancellationSignal);
  } catch (err) {
    // A cancelled activity must report the cancellation, not the abort error it caused.
    if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
    throw err;
  } finally {
    clearInterval(timer);
  }
}
