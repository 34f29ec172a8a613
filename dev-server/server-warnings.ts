/**
 * Lines of the Temporal dev server that look like faults in `npm run dev`'s terminal and are not:
 * - an update or a long poll that waits (the resubmit and redeliver updates wait for the
 *   shipment) is logged as a slow call;
 * - under a burst (an import of dozens of orders, many deliveries at once) its SQLite store
 *   takes longer than a task's deadline: the task is logged as failed and retried, and the write
 *   it cancelled is logged at ERROR. Nothing is lost: the server retries the task.
 * Anything else at ERROR or above, and the same messages with another cause, are always shown.
 */
const RETRIED_TASK =
  /msg="Fail to process task".* error="(context deadline exceeded|context canceled|stream terminated by RST_STREAM with error code: CANCEL)"/;
const CANCELLED_WRITE = /msg="Update workflow execution operation failed\.".* error="(context canceled|context deadline exceeded)"/;

export function isHarmlessServerWarning(line: string): boolean {
  if (/level=WARN/i.test(line)) return /Slow gRPC call/.test(line) || RETRIED_TASK.test(line);
  return /level=ERROR/i.test(line) && CANCELLED_WRITE.test(line);
}
