/**
 * A hostile store: a pass-through proxy in front of a local fake store (Shopify or WooCommerce)
 * whose answers a `tamper` function may rewrite before the worker sees them: an absurd
 * throttleStatus, an order dated in the year 2999, a page that never ends, a firewall page that
 * echoes the request. What the tamper leaves alone is the fake's faithful answer, so a test or
 * the chaos run changes one thing at a time and the rest stays a real store.
 */
import type { IncomingMessage } from 'node:http';
import { baseUrlOf, LocalHttpServer, readBody } from '../local-http';

/** The request as the store received it (the body as text). */
export interface StoreRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** An answer the worker will get: the fake's, or one the tamper made. */
export interface StoreAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** Returns the answer to send (changed or not); `undefined` sends the fake's unchanged. */
export type Tamper = (request: StoreRequest, answer: StoreAnswer) => StoreAnswer | undefined;

export interface HostileStore {
  url: string;
  /** Replaces the tamper (null: a plain pass-through). */
  tamper(fn: Tamper | null): void;
  /** Requests seen since the start or the last reset. */
  requests(): StoreRequest[];
  resetRequests(): void;
  close(): Promise<void>;
}

/** Answer headers worth passing on (the rest are node's own). */
const KEPT_HEADERS = ['content-type', 'retry-after', 'x-wp-total', 'x-wp-totalpages', 'link', 'x-shopify-api-version'];

export async function startHostileStore(target: string): Promise<HostileStore> {
  let tamper: Tamper | null = null;
  let seen: StoreRequest[] = [];
  const server = new LocalHttpServer(
    'hostile store',
    async (req, res) => {
      const request = await requestOf(req);
      seen.push(request);
      const answer = await forward(target, request);
      if (answer === null) return void res.destroy();
      const sent = tamper?.(request, answer) ?? answer;
      res.writeHead(sent.status, sent.headers);
      res.end(sent.text);
    },
    (res) => res.destroy(),
  );
  await server.listen(0, '127.0.0.1');
  return {
    url: baseUrlOf('127.0.0.1', server.port()),
    tamper: (fn) => void (tamper = fn),
    requests: () => [...seen],
    resetRequests: () => void (seen = []),
    close: () => server.stopListening(),
  };
}

async function requestOf(req: IncomingMessage): Promise<StoreRequest> {
  const body = (await readBody(req, 2 * 1024 * 1024)) ?? Buffer.alloc(0);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
  return { method: req.method ?? 'GET', url: req.url ?? '/', headers, body: body.toString('utf8') };
}

async function forward(target: string, request: StoreRequest): Promise<StoreAnswer | null> {
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
  );
  try {
    const answer = await fetch(`${target}${request.url}`, {
      method: request.method,
      headers,
      body: request.body.length > 0 ? request.body : undefined,
    });
    const text = await answer.text();
    const kept: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = answer.headers.get(name);
      if (value !== null) kept[name] = value;
    }
    return { status: answer.status, headers: kept, text };
  } catch {
    return null; // the store cut the connection: so does the proxy
  }
}

/** Rewrites a JSON answer with `edit` (which changes the parsed value in place); other answers pass. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a hostile store rewrites answers of any shape
export function editJson(answer: StoreAnswer, edit: (json: any) => void): StoreAnswer {
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    return answer;
  }
  edit(json);
  return { ...answer, text: JSON.stringify(json) };
}
