/**
 * One API request from authentication to answer: read the label body, authenticate, meet
 * the faults, run the endpoint, then log and count what the client saw (or did not see).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from '../local-http';
import { standard, type Answer } from './answers';
import { DEFAULTS } from './defaults';
import type { EndpointKey } from './faults';
import { labelIdentityOf } from './routes/create-label';
import type { EndpointHandler } from './routes/endpoint';
import type { FakeState } from './state';
import type { FakeFault } from './types';

export interface ApiServer {
  fake: FakeState;
  endpoints: Readonly<Record<EndpointKey, EndpointHandler>>;
  send(res: ServerResponse, answer: Answer): void;
  /** Injected latency; closing the server cuts it short. */
  delay(ms: number): Promise<void>;
}

export async function serveApi(
  server: ApiServer,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  key: EndpointKey,
  id: string | undefined,
): Promise<void> {
  const { fake } = server;
  const receivedAt = Date.now();
  const account = fake.authenticate(req);
  // Read before any fault, so a faulted label request is logged with its key and order.
  const body = account && key === 'POST /labels' ? ((await readBody(req, DEFAULTS.maxBodyBytes))?.toString('utf8') ?? null) : null;
  const labelIdentity = labelIdentityOf(body);
  const log = (answer: Answer, answered: boolean, fault: FakeFault | null): void =>
    fake.traffic.log({
      receivedAt,
      endpoint: key,
      id: id ?? null,
      account: account?.name ?? null,
      ...labelIdentity,
      status: answer.status,
      answered,
      fault,
      retryAfter: answer.headers?.['retry-after'] ?? null,
    });
  const reply = (answer: Answer): void => {
    fake.traffic.count(key, answer.status);
    log(answer, true, (answer.headers?.['x-fake-fault'] as FakeFault | undefined) ?? null);
    server.send(res, answer);
  };

  if (!account) return reply(standard(401, 'Unauthorized'));

  const inScope = fake.faults.inScope(key);
  const faulted = fake.faults.before(key, account, inScope);
  if (faulted) return reply(faulted);

  // 5. handle (state changes here)
  const answer = server.endpoints[key]({ account, id, url, body }, fake);

  const fate = fake.faults.after(key, answer, inScope);
  if (fate.kind === 'hang') {
    fake.traffic.count(key, 'hang');
    log(answer, false, 'hang');
    return; // handled, never answered: the socket stays open until the client gives up
  }
  if (fate.kind === 'lost') {
    fake.traffic.count(key, 'lost');
    log(answer, false, 'lost-answer');
    res.socket?.destroy(); // handled, then the connection drops: the client sees a reset
    return;
  }
  if (fate.delayMs > 0) await server.delay(fate.delayMs);
  reply(answer);
}
