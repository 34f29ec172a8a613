/**
 * POST /webhooks/:shop, the way a careful shop integration takes a shipment event: injected
 * faults first, then the signature, then the event schema and its ids, then the store, which
 * de-duplicates on webhook-id and never lets a late event downgrade an order.
 */
import type { IncomingMessage } from 'node:http';
import { fieldProblems } from '../shipping-api/contract';
import { ShipmentEvent, shipmentEventId } from '../domain/events';
import { header, parseJson, readBody } from '../local-http';
import { error, type ReceiverAnswer } from './answers';
import { isGone } from './faults';
import type { ReceiverState } from './receiver-state';
import { RECEIVER_DEFAULTS } from './types';
import { verifyRequest } from './verify';

export async function handleWebhook(req: IncomingMessage, shop: string, receiver: ReceiverState): Promise<ReceiverAnswer> {
  const raw = await readBody(req, RECEIVER_DEFAULTS.maxBodyBytes);
  if (raw === null) return error(413, `body larger than ${RECEIVER_DEFAULTS.maxBodyBytes} bytes`);

  const faulted = injectedFault(shop, receiver);
  if (faulted) return faulted;

  const refused = verifyRequest(raw, req, receiver.secrets, Date.now());
  if (refused) return refused;

  const json = parseJson(raw.toString('utf8'));
  if (!json.ok) return error(400, 'body is not JSON');
  const parsed = ShipmentEvent.safeParse(json.value);
  if (!parsed.success) return error(400, 'body is not a valid shipment event', { details: fieldProblems(parsed.error) });
  const event = parsed.data;
  const webhookId = header(req, 'webhook-id')!;
  if (event.id !== webhookId) return error(400, 'id: does not equal the webhook-id header');
  if (event.shop !== shop) return error(400, `shop: "${event.shop}" does not match the URL's shop "${shop}"`);
  // Receivers need not do this; the reference receiver does, to catch a sender bug.
  if (event.id !== shipmentEventId(event)) return error(400, 'id: is not the id derived from shop, orderId and sequence');

  const { status } = receiver.accept(webhookId, event);
  if (status === 'duplicate') receiver.stats.duplicates += 1;
  else receiver.stats[status] += 1;
  return { status: 200, body: { status, id: event.id, sequence: event.sequence } };
}

/** Faults first: a failing shop does not get as far as reading the event. */
function injectedFault(shop: string, receiver: ReceiverState): ReceiverAnswer | null {
  const { faults, buckets } = receiver;
  const queued = faults.failNext.shift();
  if (queued) {
    const retryAfter = queued.retryAfter === undefined ? (queued.status === 429 ? '1' : null) : queued.retryAfter;
    return error(
      queued.status,
      `injected failure (failNext)`,
      {},
      { 'x-fault': 'fail-next', ...(retryAfter === null ? {} : { 'retry-after': retryAfter }) },
    );
  }
  if (isGone(faults, shop)) return error(410, `shop ${shop} no longer accepts webhooks (injected: gone)`, {}, { 'x-fault': 'gone' });
  if (buckets) {
    const wait = buckets.take('webhooks', Date.now());
    if (wait > 0)
      return error(429, 'too many requests (injected: rateLimit)', {}, { 'retry-after': String(wait), 'x-fault': 'rate-limit' });
  }
  if (faults.errorRate > 0 && receiver.random() < faults.errorRate)
    return error(500, 'internal error (injected: errorRate)', {}, { 'x-fault': 'error-rate' });
  return null;
}
