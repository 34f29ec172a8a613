/**
 * A warning from a platform connector about what a store sent (absurd figures, a repaired
 * cursor): in an activity, the activity's logger (with its workflow context); elsewhere (the
 * import command), a process warning on stderr.
 */
import { Context } from '@temporalio/activity';

export function platformWarning(message: string, meta: Record<string, unknown>): void {
  let log: Context['log'] | undefined;
  try {
    log = Context.current().log;
  } catch {
    log = undefined; // not inside an activity
  }
  if (log) log.warn(message, meta);
  else process.emitWarning(`${message} ${JSON.stringify(meta)}`);
}
