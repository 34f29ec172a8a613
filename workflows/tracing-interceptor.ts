/**
 * OpenTelemetry spans of a workflow started inside an order's trace (tracing/), by
 * @temporalio/interceptors-opentelemetry: the run, its activities, child workflows and
 * continue-as-new (which carries the trace on). A workflow started without the trace header,
 * every one while tracing is off, runs these interceptors as plain pass-throughs, makes no
 * span and never loads the OpenTelemetry SDK; signals and updates join only when they carry
 * the header. Spans leave the sandbox through a sink, never through commands: history and
 * replay are unchanged.
 */
import type {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type { Headers } from '@temporalio/common';
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { TRACE_HEADER } from '../tracing/header';

const carriesTrace = (headers: Headers) => headers[TRACE_HEADER] !== undefined;

/**
 * The package's workflow side, evaluated at a traced workflow's start only. Each workflow
 * evaluates the modules it loads (the SDK keeps a module cache per workflow), and this one
 * brings the OpenTelemetry SDK: an untraced workflow never loads it.
 */
function openTelemetryWorkflow(): typeof import('@temporalio/interceptors-opentelemetry/lib/workflow') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand, see above
  return require('@temporalio/interceptors-opentelemetry/lib/workflow') as typeof import('@temporalio/interceptors-opentelemetry/lib/workflow');
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  // Per workflow: made at its start when that carries the trace.
  let otel:
    | { inbound: OpenTelemetryInboundInterceptor; outbound: OpenTelemetryOutboundInterceptor; internals: OpenTelemetryInternalsInterceptor }
    | undefined;
  return {
    inbound: [
      {
        execute(input, next) {
          if (!carriesTrace(input.headers)) return next(input);
          const sdk = openTelemetryWorkflow();
          otel = {
            inbound: new sdk.OpenTelemetryInboundInterceptor(),
            outbound: new sdk.OpenTelemetryOutboundInterceptor(),
            internals: new sdk.OpenTelemetryInternalsInterceptor(),
          };
          return otel.inbound.execute(input, next);
        },
        handleSignal: (input, next) => (otel && carriesTrace(input.headers) ? otel.inbound.handleSignal(input, next) : next(input)),
        handleUpdate: (input, next) => (otel && carriesTrace(input.headers) ? otel.inbound.handleUpdate(input, next) : next(input)),
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => (otel ? otel.outbound.scheduleActivity(input, next) : next(input)),
        scheduleLocalActivity: (input, next) => (otel ? otel.outbound.scheduleLocalActivity(input, next) : next(input)),
        startChildWorkflowExecution: (input, next) => (otel ? otel.outbound.startChildWorkflowExecution(input, next) : next(input)),
        continueAsNew: (input, next) => (otel ? otel.outbound.continueAsNew(input, next) : next(input)),
        signalWorkflow: (input, next) => (otel ? otel.outbound.signalWorkflow(input, next) : next(input)),
        getLogAttributes: (input, next) => (otel ? otel.outbound.getLogAttributes(input, next) : next(input)),
      },
    ],
    internals: [
      {
        dispose(input, next) {
          // The package's dispose is async in name only: it releases the span context and calls next.
          if (otel) void otel.internals.dispose(input, next);
          else next(input);
        },
      },
    ],
  };
};
