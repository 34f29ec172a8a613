/**
 * HTTP plumbing shared by the local fakes (the fake shipping API, the reference shop receiver
 * and any later one): reading a bounded body, JSON answers, request parts, a server that knows
 * its sockets so closing ends hanging ones too, and delays that closing cuts short.
 * Plain node:http on purpose: the fakes must show every byte they send.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** What a handler decides to send; each server writes it with its own headers. */
export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
export const HTML_TYPE = 'text/html; charset=utf-8';

/** The first value of a request header (node gives an array for a repeated one). */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Method, URL and decoded path segments (null when one is not valid percent-encoding). */
export function requestLine(req: IncomingMessage): { method: string; url: URL; segments: string[] | null } {
  // The base only fills in what a request line leaves out.
  const url = new URL(req.url ?? '/', 'http://local.invalid');
  let segments: string[] | null;
  try {
    segments = url.pathname
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
  } catch {
    segments = null;
  }
  return { method: (req.method ?? 'GET').toUpperCase(), url, segments };
}

/**
 * The whole body, or null once it passes `limit` bytes. It still reads to the end, so the
 * answer (413) reaches a client that is still sending.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** JSON.parse without a throw: the fakes answer a bad body, they do not crash on it. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, message: (e as Error).message };
  }
}

/** The JSON text of an answer body; an absent body is an empty one. */
export function jsonText(body: unknown): string {
  return body === undefined ? '' : JSON.stringify(body);
}

/** Writes a complete answer with its length; a null `contentType` sends no content-type. */
export function writeAnswer(
  res: ServerResponse,
  status: number,
  text: string,
  contentType: string | null,
  headers?: Record<string, string>,
): void {
  res.writeHead(status, {
    ...(contentType === null ? {} : { 'content-type': contentType }),
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** The base URL of a listening address (an IPv6 host in brackets). */
export function baseUrlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * A node:http server that keeps its sockets, so stopping it also ends kept-alive and hanging
 * connections. `name` starts its warnings and errors; `answerBug` answers a request whose
 * handler threw (a bug in the fake), so the client is not left hanging.
 */
export class LocalHttpServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly name: string,
    handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
    answerBug: (res: ServerResponse) => void,
  ) {
    this.server = createServer((req, res) => {
      handle(req, res).catch((err: unknown) => {
        process.emitWarning(`${name}: unexpected error: ${err instanceof Error ? err.stack : String(err)}`);
        if (!res.headersSent) answerBug(res);
        else res.destroy();
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  listen(port: number, host: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** The port it listens on (the chosen one when asked for port 0). */
  port(): number {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error(`${this.name}: no TCP address`);
    return address.port;
  }

  /** Stops listening and destroys every open socket, hanging ones included. */
  stopListening(): Promise<void> {
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    return done;
  }
}

/** Delays that `releaseAll()` ends early, so closing a server never waits for a slow fault. */
export function cancellableDelays() {
  const pending = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  return {
    delay: (ms: number): Promise<void> =>
      new Promise((resolve) => {
        const entry = {
          timer: setTimeout(() => {
            pending.delete(entry);
            resolve();
          }, ms),
          resolve,
        };
        pending.add(entry);
      }),
    releaseAll: (): void => {
      for (const entry of pending) {
        clearTimeout(entry.timer);
        entry.resolve();
      }
      pending.clear();
    },
  };
}
