/**
 * The project's own spans: an order's root, and the HTTP calls of the shipping API and shop
 * clients. A call's span is made only inside an order's trace (an active span): a tracking
 * poller's or a pull's reads serve many orders and start no trace of their own, and with
 * tracing off there is never an active span, so the call runs as it would without this.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { activeTracing, tracer } from './active';

/** What a call tells its span once answered. */
export interface CallSpan {
  answered(status: number): void;
}

const UNTRACED: CallSpan = { answered: () => undefined };

/**
 * Runs `call` in a client span named `name` when an order's trace is active. `attributes` must
 * be on the privacy allowlist (tracing/privacy.ts): operation names and hosts, never a path,
 * query, header or body.
 */
export async function callSpan<T>(name: string, attributes: Attributes, call: (span: CallSpan) => Promise<T>): Promise<T> {
  if (!trace.getActiveSpan()?.isRecording()) return call(UNTRACED);
  return tracer().startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      const result = await call({
        answered(status) {
          span.setAttribute('http.response.status_code', status);
          if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
        },
      });
      return result;
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Runs the start of one order's shipment as the root of its own trace: one order, one trace,
 * even when one import or pull starts thousands.
 */
export async function orderSpan<T extends { status: string }>(
  order: { shop: string; orderId: string },
  start: () => Promise<T>,
): Promise<T> {
  if (!activeTracing()) return start();
  return tracer().startActiveSpan(
    'order',
    { root: true, attributes: { 'shipment.shop': order.shop, 'shipment.order_id': order.orderId } },
    async (span) => {
      try {
        const result = await start();
        span.setAttribute('shipment.start', result.status);
        return result;
      } catch (err) {
        failed(span, err);
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** A call's `server.address` and `server.port`: the host only, never the path or query. */
export function serverOf(url: URL): { 'server.address': string; 'server.port': number } {
  return { 'server.address': url.hostname, 'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80) };
}

/** An error's kind (a ShippingApiError's, or its class name); its message stays out (privacy.ts). */
function failed(span: Span, err: unknown): void {
  const kind = (err as { kind?: unknown } | null)?.kind;
  const type = typeof kind === 'string' ? kind : err instanceof Error ? err.name : typeof err;
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}
