/**
 * A shipment's task priority for its local activities. A regular activity inherits the workflow's
 * priority and sees it in its info; a local one (the first attempt of a label or order read) runs
 * in the worker without a task and sees none. This header carries it, so the account pacer can
 * put a live order's first attempt ahead of the backlog's (activities/priority-header.ts). Headers of
 * local activities are not recorded in history: replay is unaffected.
 */
import { defaultPayloadConverter, workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { PRIORITY_HEADER } from '../domain/priority';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleLocalActivity(input, next) {
        const key = workflowInfo().priority?.priorityKey;
        if (!key) return next(input);
        return next({ ...input, headers: { ...input.headers, [PRIORITY_HEADER]: defaultPayloadConverter.toPayload(key) } });
      },
    },
  ],
});
