/**
 * Tracing's parts without a server: when it is on, what a span may carry out, and that with it
 * off the project's calls make no span and the Temporal interceptors are not loaded.
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { TRACE_HEADER as PACKAGE_TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/settings';
import { TRACE_HEADER } from '../tracing/header';
import { PrivateSpanProcessor } from '../tracing/privacy';
import { activeTracing } from '../tracing/setup';
import { loadTracingSettings } from '../config/tracing';
import { callSpan, orderSpan } from '../tracing/spans';
import { tracingActivityInterceptors, tracingClientInterceptors } from '../tracing/temporal';

describe('loadTracingSettings', () => {
  it('is off without an OTLP endpoint, and with OTEL_SDK_DISABLED', () => {
    expect(loadTracingSettings({})).toBeUndefined();
    expect(loadTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBeUndefined();
    expect(loadTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  });

  it('is on with the standard endpoint, or the traces-only one', () => {
    expect(loadTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' })).toEqual({ endpoint: 'http://localhost:4318' });
    expect(loadTracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example/v1/traces' })).toEqual({
      endpoint: 'https://otel.example/v1/traces',
    });
  });

  it('names the variable of an endpoint that is not an http(s) URL', () => {
    for (const value of ['localhost:4318', 'grpc://collector:4317', 'not a url']) {
      let error: unknown;
      try {
        loadTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: value });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain('OTEL_EXPORTER_OTLP_ENDPOINT: must be an http(s) URL');
    }
  });
});

it("the trace header is the Temporal interceptors' own", () => {
  expect(TRACE_HEADER).toBe(PACKAGE_TRACE_HEADER);
});

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('adds no interceptors, makes no span and leaves the calls as they were', async () => {
    expect(activeTracing()).toBeUndefined();
    expect(tracingClientInterceptors()).toBeUndefined();
    expect(tracingActivityInterceptors()).toEqual([]);
    const started = await orderSpan({ shop: 's', orderId: 'o' }, async () => {
      expect(trace.getActiveSpan()).toBeUndefined();
      return { status: 'started' };
    });
    expect(started).toEqual({ status: 'started' });
    const answered: unknown[] = [];
    await callSpan('shipping-api createLabel', {}, async (span) => {
      answered.push(trace.getActiveSpan());
      span.answered(500);
    });
    expect(answered).toEqual([undefined]);
  });
});

describe('PrivateSpanProcessor', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new PrivateSpanProcessor(new SimpleSpanProcessor(exporter))] });
  const tracer = provider.getTracer('test');

  it('keeps listed attributes and the type of an error, and nothing else', () => {
    const span = tracer.startSpan('RunActivity:createLabel', {
      kind: SpanKind.INTERNAL,
      attributes: { temporalWorkflowId: 'shipment-acme-1001', 'shipment.shop': 'acme', recipient: 'Jan de Vries', email: 'jan@example.nl' },
    });
    span.addEvent('note', { phone: '+31 20 7654321' });
    span.recordException(Object.assign(new Error("Invalid Addressee Zipcode: '1015 CS'"), { name: 'ApplicationFailure' }));
    span.setStatus({ code: SpanStatusCode.ERROR, message: "Invalid Addressee Zipcode: '1015 CS'" });
    span.addLink({ context: span.spanContext(), attributes: { street: 'Keizersgracht 12', 'shipment.order_id': '1001' } });
    span.end();
    const [out] = exporter.getFinishedSpans();
    expect(out!.attributes).toEqual({ temporalWorkflowId: 'shipment-acme-1001', 'shipment.shop': 'acme' });
    expect(out!.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(out!.events.map((e) => [e.name, e.attributes])).toEqual([['exception', { 'exception.type': 'ApplicationFailure' }]]);
    expect(out!.links.map((l) => l.attributes)).toEqual([{ 'shipment.order_id': '1001' }]);
    expect(out!.droppedAttributesCount).toBe(2);
    expect(out!.spanContext().spanId).toBe(span.spanContext().spanId);
    const text = JSON.stringify({ a: out!.attributes, e: out!.events, l: out!.links.map((l) => l.attributes), s: out!.status });
    for (const secret of ['Jan de Vries', 'jan@example.nl', '+31 20 7654321', '1015 CS', 'Keizersgracht'])
      expect(text).not.toContain(secret);
  });
});
