/**
 * Tracing of the process: on when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
 * is set, exported by OTLP over HTTP; off otherwise, and then nothing here is loaded and no span
 * is made (the OpenTelemetry API's no-op tracer answers every call).
 */
import { context, propagation, trace } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { ConfigError, type Env } from '../config/settings';
import { activeTracing, setActiveTracing, type Tracing } from './active';
import { PrivateSpanProcessor } from './privacy';

export { activeTracing, type Tracing } from './active';

export const TRACING_HELP = `Tracing (docs/production.md, "Tracing"): OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://localhost:4318)
turns OpenTelemetry traces on, sent by OTLP over HTTP; OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME
and the other standard OTEL_* variables apply. Unset: no tracing.`;

const Endpoint = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. http://localhost:4318' });

/** The OTLP endpoint that turns tracing on, checked; undefined when none is set. */
export function loadTracingSettings(env: Env = process.env): { endpoint: string } | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  for (const variable of ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'] as const) {
    const value = env[variable]?.trim();
    if (!value) continue;
    const parsed = Endpoint.safeParse(value);
    if (!parsed.success) throw new ConfigError([{ variable, message: parsed.error.issues[0]!.message }]);
    return { endpoint: parsed.data };
  }
  return undefined;
}

/**
 * Starts tracing when the environment asks for it (loadTracingSettings), exporting by OTLP; the
 * exporter reads the standard variables itself. Undefined when off, and when this process traces
 * already (an import run inside a traced process uses that tracing: nothing of its own to stop).
 */
export async function startTracingFromEnv(serviceName: string, env: Env = process.env): Promise<Tracing | undefined> {
  if (!loadTracingSettings(env) || activeTracing()) return undefined;
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  return startTracing({ serviceName, exporter: new OTLPTraceExporter() });
}

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
