/**
 * The receiver's admin endpoints under /__admin: GET stats, POST reset, GET|POST faults.
 * `syncListening` makes the socket follow a patch that takes the receiver down or up.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidFaultsError } from '../fake-shipping-api/faults';
import { parseJson, readBody } from '../local-http';
import { error, type ReceiverAnswer } from './answers';
import { cloneFaults } from './faults';
import type { ReceiverState } from './receiver-state';
import { RECEIVER_DEFAULTS } from './types';

export async function handleAdmin(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  path: string,
  receiver: ReceiverState,
  syncListening: () => Promise<void>,
): Promise<ReceiverAnswer> {
  const allow = (methods: string) => error(405, `method ${method} not allowed; allowed: ${methods}`, {}, { allow: methods });
  switch (path) {
    case 'stats':
      return method === 'GET' ? { status: 200, body: structuredClone(receiver.stats) } : allow('GET');
    case 'reset':
      if (method !== 'POST') return allow('POST');
      receiver.reset();
      return { status: 200, body: structuredClone(receiver.stats) };
    case 'faults': {
      if (method === 'GET') return { status: 200, body: cloneFaults(receiver.faults) };
      if (method !== 'POST') return allow('GET, POST');
      const raw = await readBody(req, RECEIVER_DEFAULTS.maxBodyBytes);
      if (raw === null) return error(413, 'body too large');
      const json = raw.length === 0 ? { ok: true as const, value: {} } : parseJson(raw.toString('utf8'));
      if (!json.ok) return error(400, 'body is not JSON');
      try {
        const applied = receiver.updateFaults(json.value, true);
        // Going down closes every socket, this one included: answer first.
        res.once('finish', () => void syncListening());
        return { status: 200, body: applied };
      } catch (e) {
        if (e instanceof InvalidFaultsError) return error(400, 'invalid faults patch', { details: e.details });
        throw e;
      }
    }
    default:
      return error(404, 'unknown admin endpoint');
  }
}
