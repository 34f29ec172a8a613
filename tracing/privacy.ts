/**
 * What a span may carry out of the process. Every span, the worker's and the ones the workflow
 * sandbox hands over through its sink, passes this processor before any exporter: attributes
 * are kept only when their key is on the list below, an error keeps its type but loses its
 * message and stack (a courier's message can echo an address), and other events are dropped.
 * An allowlist rather than a scrub: a field added to an order or an error later stays out.
 */
import type { Context, Link, SpanAttributes } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** The attributes a span keeps: identifiers of the order and the call, never its content. */
export const KEPT_ATTRIBUTES: ReadonlySet<string> = new Set([
  // The order (tracing/spans.ts, `orderSpan`); its id is the shop's order number, not a person.
  'shipment.shop',
  'shipment.order_id',
  'shipment.start',
  // The Temporal interceptors' ids, and what the workflow sink adds of the workflow's info.
  'temporalWorkflowId',
  'temporalActivityId',
  'temporalUpdateId',
  'run_id',
  'workflowId',
  'workflowType',
  'runId',
  'taskQueue',
  'namespace',
  'attempt',
  // HTTP calls (tracing/http.ts): the operation and the host, not the path or the query.
  'http.request.method',
  'http.response.status_code',
  'server.address',
  'server.port',
  'shipping.operation',
  'shop.platform',
  'shop.operation',
  'error.type',
]);

/** Of an exception event only its type; of other events nothing. */
const KEPT_EVENT_ATTRIBUTES: ReadonlySet<string> = new Set(['exception.type']);

export class PrivateSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    this.next.onEnd(privateView(span));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

/** The span as it may leave: the same identity and timing, only the kept attributes and events. */
export function privateView(span: ReadableSpan): ReadableSpan {
  const attributes = kept(span.attributes, KEPT_ATTRIBUTES);
  const events: TimedEvent[] = span.events
    .filter((e) => e.name === 'exception')
    .map((e) => ({ name: e.name, time: e.time, attributes: kept(e.attributes ?? {}, KEPT_EVENT_ATTRIBUTES) }));
  const links: Link[] = span.links.map((l) => ({ context: l.context, attributes: kept(l.attributes ?? {}, KEPT_ATTRIBUTES) }));
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanId: span.parentSpanId,
    startTime: span.startTime,
    endTime: span.endTime,
    // The code says failed or not; the message is an error's text, which is not ours to pass on.
    status: { code: span.status.code },
    attributes,
    links,
    events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationLibrary: span.instrumentationLibrary,
    droppedAttributesCount: span.droppedAttributesCount + Object.keys(span.attributes).length - Object.keys(attributes).length,
    droppedEventsCount: span.droppedEventsCount + span.events.length - events.length,
    droppedLinksCount: span.droppedLinksCount,
  };
}

function kept(attributes: SpanAttributes, keys: ReadonlySet<string>): SpanAttributes {
  const out: SpanAttributes = {};
  for (const [key, value] of Object.entries(attributes)) if (keys.has(key)) out[key] = value;
  return out;
}
