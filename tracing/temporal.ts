/**
 * Temporal's OpenTelemetry interceptors (@temporalio/interceptors-opentelemetry), limited to
 * orders' traces: a shipment's start carries the trace only from inside its order's span
 * (spans.ts orderSpan), and only a workflow or activity started with the trace header makes
 * spans (workflows/tracing-interceptor.ts for the workflow side). Pollers, pulls from the
 * schedule and the CLI's reads start no trace.
 */
import { trace } from '@opentelemetry/api';
import type { ClientInterceptors } from '@temporalio/client';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { TRACE_HEADER } from './header';
import { activeTracing, type TemporalInterceptors } from './active';

/** A Client's `interceptors`: the order's trace into its shipment's start. Undefined when tracing is off. */
export function tracingClientInterceptors(): ClientInterceptors | undefined {
  const tracing = activeTracing();
  if (!tracing) return undefined;
  const otel = new tracing.temporal.OpenTelemetryWorkflowClientInterceptor();
  const inOrder = () => trace.getActiveSpan()?.isRecording() === true;
  return {
    workflow: [
      {
        start: (input, next) => (inOrder() ? otel.start(input, next) : next(input)),
        startWithDetails: (input, next) => (inOrder() ? otel.startWithDetails(input, next) : next(input)),
      },
    ],
  };
}

/** Activities of a traced workflow get a span, the parent of their HTTP calls' spans; others none. */
const tracedActivities =
  (otel: TemporalInterceptors): ActivityInterceptorsFactory =>
  (ctx) => {
    const inbound = new otel.OpenTelemetryActivityInboundInterceptor(ctx);
    return {
      inbound: { execute: (input, next) => (input.headers[TRACE_HEADER] ? inbound.execute(input, next) : next(input)) },
      // Logs of a traced activity name its trace and span.
      outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
    };
  };

/** A worker's activity interceptors for tracing: none when it is off. */
export function tracingActivityInterceptors(): ActivityInterceptorsFactory[] {
  const tracing = activeTracing();
  return tracing ? [tracedActivities(tracing.temporal)] : [];
}

/**
 * A worker's `sinks`: the one the workflow interceptors export through. Given with tracing off
 * too, where it drops the spans: a workflow started traced may run on a worker without tracing,
 * which would otherwise log each of its spans as a call of a missing sink.
 */
export function tracingSinks(): InjectedSinks<OpenTelemetrySinks> {
  const tracing = activeTracing();
  return {
    exporter: tracing ? tracing.temporal.makeWorkflowExporter(tracing.processor, tracing.resource) : { export: { fn: () => undefined } },
  };
}
