/**
 * Lines of the Temporal dev server that look like faults in `npm run dev`'s terminal and are not:
 * - an update or a long poll that waits (the resubmit and redeliver updates wait for the
 *   shipment) is logged as a slow call;
 * - under a burst (an import of dozens of orders, many deliveries at once) its SQLite store
 *   takes longer than a task's deadline: the task is logged as failed and retried, and the write
 *   it cancelled is logged at ERROR. Nothing is lost: the server retries the task.
 * - a shipment joining a tracking shard (update-with-start) while the shard continues as new is
 *   refused with "workflow is closing"; the client asks again and reaches the new run.
 * Anything else at ERROR or above, and the same messages with another cause, are always shown.
 */
const RETRIED_TASK =
  /msg="Fail to process task".* error="(context deadline exceeded|context canceled|stream terminated by RST_STREAM with error code: CANCEL)"/;
const CANCELLED_WRITE = /msg="Update workflow execution operation failed\.".* error="(context canceled|context deadline exceeded)"/;

/** Both lines the server logs for one refused join: the cause, then the operation's summary. */
const JOIN_WHILE_CLOSING =
  /msg="service failures" operation=ExecuteMultiOperation .*grpc_code=ResourceExhausted .*wf-id=tracking-poller-\S+ error="MultiOperation could not be executed: Update failed: workflow operation can not be applied because workflow is closing"/;
const JOIN_REFUSED_SUMMARY =
  /msg="service failures" operation=ExecuteMultiOperation wf-namespace=\S+ grpc_code=ResourceExhausted error="Update-with-Start could not be executed\."$/;

export function isHarmlessServerWarning(line: string): boolean {
  if (/level=WARN/i.test(line)) return /Slow gRPC call/.test(line) || RETRIED_TASK.test(line);
  if (!/level=ERROR/i.test(line)) return false;
  return CANCELLED_WRITE.test(line) || JOIN_WHILE_CLOSING.test(line) || JOIN_REFUSED_SUMMARY.test(line.trimEnd());
}
