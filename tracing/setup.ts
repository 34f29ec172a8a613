/**
 * Tracing of the process, started when its settings ask for it (config/tracing.ts); off, nothing
 * here is loaded and no span is made (the OpenTelemetry API's no-op tracer answers every call).
 */
import { context, propagation, trace } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { activeTracing, setActiveTracing, type Tracing } from './active';
import { PrivateSpanProcessor } from './privacy';

export { activeTracing, type Tracing } from './active';

/**
 * Registers the process's tracer provider with `exporter` behind the privacy allowlist. `batch`
 * false exports each span as it ends (tests read them at once).
 */
export async function startTracing(options: { serviceName: string; exporter: SpanExporter; batch?: boolean }): Promise<Tracing> {
  if (activeTracing()) throw new Error('tracing is already started in this process');
  const [{ NodeTracerProvider }, { BatchSpanProcessor, SimpleSpanProcessor }, { Resource, envDetectorSync }, client, worker] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      import('@temporalio/interceptors-opentelemetry/lib/client'),
      import('@temporalio/interceptors-opentelemetry/lib/worker'),
    ]);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the name given here.
  const resource = Resource.default()
    .merge(new Resource({ 'service.name': options.serviceName }))
    .merge(envDetectorSync.detect());
  const exporting = options.batch === false ? new SimpleSpanProcessor(options.exporter) : new BatchSpanProcessor(options.exporter);
  const processor = new PrivateSpanProcessor(exporting);
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // The AsyncLocalStorage context: an activity's span is the parent of the calls it makes.
  provider.register();
  const tracing: Tracing = {
    resource,
    processor,
    temporal: { ...client, ...worker },
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
      if (activeTracing() === tracing) setActiveTracing(undefined);
    },
  };
  setActiveTracing(tracing);
  return tracing;
}
