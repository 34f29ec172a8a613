/** The workflow code every bundle is made of: the worker's at start, `npm run build`'s, the tests' and benches'. */
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';

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

/** Bundles the workflows at start (development); webpack's module listing is kept out of the logs. */
export function bundleFromSource(): Promise<{ code: string }> {
  const runtimeLogger = Runtime.instance().logger;
  return bundleWorkflowCode({
    ...WORKFLOW_CODE,
    logger: new DefaultLogger('WARN', (entry) => {
      runtimeLogger.log(entry.level, entry.message, entry.meta);
    }),
  });
}
