/** What `npm run dev` leaves out of its terminal: only the dev server's warnings known to be harmless. */
import { describe, expect, it } from 'vitest';
import { isHarmlessServerWarning } from '../dev-server/server-warnings';

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
});
