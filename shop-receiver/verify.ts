/**
 * Standard Webhooks verification of one request, with the receiver's own clearer answers for
 * what the package would only reject: missing headers, a non-integer or stale timestamp.
 */
import type { IncomingMessage } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { header } from '../local-http';
import { error, type ReceiverAnswer } from './answers';
import { RECEIVER_DEFAULTS } from './types';

/**
 * Standard Webhooks verification with any of `secrets`: 400 for missing or malformed headers,
 * 401 for a timestamp outside the tolerance or a signature no secret produces.
 */
export function verifyRequest(raw: Buffer, req: IncomingMessage, secrets: readonly string[], nowMs: number): ReceiverAnswer | null {
  const id = header(req, 'webhook-id');
  const timestamp = header(req, 'webhook-timestamp');
  const signature = header(req, 'webhook-signature');
  const absent = [
    ['webhook-id', id],
    ['webhook-timestamp', timestamp],
    ['webhook-signature', signature],
  ].filter(([, v]) => v === undefined || v === '');
  if (absent.length > 0) return error(400, `missing header${absent.length > 1 ? 's' : ''} ${absent.map(([n]) => n).join(', ')}`);
  if (!/^\d+$/.test(timestamp!)) return error(400, 'webhook-timestamp must be integer Unix seconds');
  const skew = Math.floor(nowMs / 1000) - Number(timestamp);
  if (Math.abs(skew) > RECEIVER_DEFAULTS.toleranceSeconds) {
    const which = skew > 0 ? `${skew} s old` : `${-skew} s in the future`;
    return error(
      401,
      `webhook-timestamp is ${which}; tolerance is ${RECEIVER_DEFAULTS.toleranceSeconds} s (replayed message, or a clock off)`,
    );
  }
  const headers = { 'webhook-id': id!, 'webhook-timestamp': timestamp!, 'webhook-signature': signature! };
  for (const secret of secrets) {
    try {
      new Webhook(secret).verify(raw, headers, { jsonParse: false });
      return null;
    } catch {
      // try the next secret
    }
  }
  return error(401, 'webhook-signature: no signature matches any configured secret');
}
