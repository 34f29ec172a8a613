/** What `npm run dev` leaves out of its terminal: only the dev server's warnings known to be harmless. */
import { describe, expect, it } from 'vitest';
import { isHarmlessServerWarning } from '../dev-server/server-warnings';

// Lines the dev server printed during the sample's 30-order import and the deliveries after it
// (SQLite under a burst: the server retries the task, nothing is lost).
const RETRIED_TASK =
  'time=2026-12-02T04:40:15.892 level=WARN msg="Fail to process task" shard-id=1 component=transfer-queue-processor wf-id=shipment-amsterdam-bikes-AB-20107 queue-task-type=TransferWorkflowTask wf-history-event-id=24 error="context deadline exceeded" error-type=serviceerror.DeadlineExceeded attempt=2 unexpected-error-attempts=1 lifecycle=ProcessingFailed';
const RETRIED_TASK_RST =
  'time=2026-12-02T04:44:07.878 level=WARN msg="Fail to process task" shard-id=1 component=transfer-queue-processor wf-id=tracking-poller-shipments/sandbox-4 error="stream terminated by RST_STREAM with error code: CANCEL" error-type=serviceerror.DeadlineExceeded attempt=2 lifecycle=ProcessingFailed';
const CANCELLED_WRITE =
  'time=2026-12-02T04:44:07.363 level=ERROR msg="Update workflow execution operation failed." shard-id=1 wf-id=shipment-oslo-outdoor-OO-1003 store-operation=update-wf-execution error="context canceled"';

// A shipment joining its tracking shard while the shard continues as new (the client asks again).
const JOIN_WHILE_CLOSING =
  'time=2026-12-02T05:38:19.852 level=ERROR msg="service failures" operation=ExecuteMultiOperation wf-namespace=default grpc_code=ResourceExhausted wf-id=tracking-poller-shipments-7 error="MultiOperation could not be executed: Update failed: workflow operation can not be applied because workflow is closing"';
const JOIN_REFUSED_SUMMARY =
  'time=2026-12-02T05:38:19.856 level=ERROR msg="service failures" operation=ExecuteMultiOperation wf-namespace=default grpc_code=ResourceExhausted error="Update-with-Start could not be executed."';

describe("the dev server's output in npm run dev", () => {
  it('drops the slow-call warning of an update that waits, and nothing else', () => {
    expect(
      isHarmlessServerWarning(
        'time=2026-11-24T10:00:00.000 level=WARN msg="Slow gRPC call" method=/temporal.api.workflowservice.v1.WorkflowService/UpdateWorkflowExecution duration=20s',
      ),
    ).toBe(true);
    expect(isHarmlessServerWarning('time=2026-11-24T10:00:00.000 level=ERROR msg="Slow gRPC call" duration=20s')).toBe(false);
    expect(isHarmlessServerWarning('time=2026-11-24T10:00:00.000 level=WARN msg="persistence unavailable"')).toBe(false);
  });

  it('drops the retried tasks and cancelled writes of a burst (the server retries them), and keeps other failures', () => {
    for (const line of [RETRIED_TASK, RETRIED_TASK_RST, CANCELLED_WRITE]) expect(isHarmlessServerWarning(line), line).toBe(true);
    // The same messages with another cause are shown: a store that fails for real says so.
    expect(isHarmlessServerWarning(RETRIED_TASK.replace('context deadline exceeded', 'database is locked'))).toBe(false);
    expect(isHarmlessServerWarning(CANCELLED_WRITE.replace('context canceled', 'disk I/O error'))).toBe(false);
    expect(isHarmlessServerWarning(CANCELLED_WRITE.replace('level=ERROR', 'level=FATAL'))).toBe(false);
  });

  it('drops a tracking join refused while its shard continues as new, and keeps other refused operations', () => {
    for (const line of [JOIN_WHILE_CLOSING, JOIN_REFUSED_SUMMARY]) expect(isHarmlessServerWarning(line), line).toBe(true);
    expect(isHarmlessServerWarning(JOIN_WHILE_CLOSING.replace('because workflow is closing', 'because of a rate limit'))).toBe(false);
    expect(isHarmlessServerWarning(JOIN_WHILE_CLOSING.replace('wf-id=tracking-poller-', 'wf-id=shipment-'))).toBe(false);
    expect(isHarmlessServerWarning(JOIN_REFUSED_SUMMARY.replace('ExecuteMultiOperation', 'StartWorkflowExecution'))).toBe(false);
  });
});
