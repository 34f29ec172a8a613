/**
 * Whether this process traces, and its tracer: what the spans and interceptors ask at each call.
 * Kept apart from setup.ts (settings, SDK loading) so the HTTP clients can import it without the
 * configuration module, which imports them.
 */
import { trace, type Tracer } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

/** The instrumentation scope of the project's own spans (orders, HTTP calls). */
export const TRACER_NAME = 'shipping-sync-worker';

export interface Tracing {
  readonly resource: Resource;
  /** Every span passes it: the privacy allowlist, then the exporter's batch. */
  readonly processor: SpanProcessor;
  /** @temporalio/interceptors-opentelemetry's client and worker parts, loaded only when tracing is on. */
  readonly temporal: TemporalInterceptors;
  /** Sends what is still batched and stops. */
  shutdown(): Promise<void>;
}

export type TemporalInterceptors = typeof import('@temporalio/interceptors-opentelemetry/lib/client') &
  typeof import('@temporalio/interceptors-opentelemetry/lib/worker');

let active: Tracing | undefined;

export function setActiveTracing(tracing: Tracing | undefined): void {
  active = tracing;
}

/** The process's tracing, or undefined when it is off. */
export function activeTracing(): Tracing | undefined {
  return active;
}

/** The project's tracer: a no-op one unless tracing was started. */
export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}
