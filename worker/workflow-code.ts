/** The workflow code every bundle is made of: the worker's at start, `npm run build`'s, the tests' and benches'. */
import path from 'node:path';

const WORKFLOWS = path.join(__dirname, '..', 'workflows');

export const WORKFLOW_CODE = {
  workflowsPath: WORKFLOWS,
  workflowInterceptorModules: [
    // A shipment's priority for its local activities (without it they wait as default-priority calls).
    path.join(WORKFLOWS, 'priority-interceptor'),
    // OpenTelemetry spans of a workflow started in an order's trace; pass-throughs otherwise.
    path.join(WORKFLOWS, 'tracing-interceptor'),
  ],
};
