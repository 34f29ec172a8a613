/**
 * Tracing's settings: on when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
 * is set, exported by OTLP over HTTP; off otherwise.
 */
import { z } from 'zod';
import { activeTracing, startTracing, type Tracing } from '../tracing/setup';
import { ConfigError, type Env } from './settings';

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
