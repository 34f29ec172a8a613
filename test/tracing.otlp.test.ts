/**
 * Tracing by OTLP as the worker and the import turn it on: OTEL_EXPORTER_OTLP_ENDPOINT set, an
 * order's spans arrive over HTTP at `<endpoint>/v1/traces` (a capturing server on loopback)
 * when tracing shuts down, and nothing is sent for calls outside an order.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { startTracingFromEnv } from '../config/tracing';
import { callSpan, orderSpan } from '../tracing/spans';

it('sends the spans of an order to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces, with OTEL_EXPORTER_OTLP_HEADERS', async () => {
  const received: Array<{ url: string; headers: IncomingHttpHeaders; body: Buffer }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The exporter reads the standard variables from the process's environment, as in production.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    process.env.OTEL_EXPORTER_OTLP_HEADERS = 'authorization=Bearer collector-token';
    const tracing = await startTracingFromEnv('otlp-test');
    expect(tracing).toBeDefined();
    await callSpan('shipping-api listCouriers', {}, async () => undefined);
    await orderSpan({ shop: 'otlp-shop', orderId: 'OTLP-1' }, () =>
      callSpan('shipping-api createLabel', { 'shipping.operation': 'createLabel' }, async (span) => {
        span.answered(201);
        return { status: 'started' };
      }),
    );
    await tracing!.shutdown();
    expect(received.map((r) => r.url)).toEqual(['/v1/traces']);
    expect(received[0]!.headers.authorization).toBe('Bearer collector-token');
    const body = JSON.parse(received[0]!.body.toString('utf8')) as {
      resourceSpans: Array<{
        resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
        scopeSpans: Array<{ spans: Array<{ name: string }> }>;
      }>;
    };
    const names = body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => span.name)));
    // The call outside an order made no span.
    expect(names.sort()).toEqual(['order', 'shipping-api createLabel']);
    expect(body.resourceSpans[0]!.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'otlp-test' } });
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
    await new Promise((resolve) => server.close(resolve));
  }
});
