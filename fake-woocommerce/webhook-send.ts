/**
 * The bytes of one webhook request, as WC_Webhook::deliver and deliver_ping make them, and one
 * HTTP attempt with a deadline that closing the fake cuts short. WordPress sends HTTP/1.0 on a
 * new connection; node sends HTTP/1.1, on a new connection too (no keep-alive agent).
 */
import { createHmac } from 'node:crypto';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * wp_json_encode with no flags, as deliver() encodes the payload: PHP's json_encode escapes
 * every "/" as "\/" and every non-ASCII character as \uXXXX (a surrogate pair beyond the BMP).
 * A "/" occurs in JSON text only inside strings, so escaping the serialized text is exact. A
 * receiver that re-serializes the parsed body before checking the signature fails, as it
 * would against a real store.
 */
export function phpJsonEncode(value: unknown): string {
  return JSON.stringify(value)
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** generate_signature: base64 of HMAC-SHA256 over the body exactly as sent. */
export function webhookSignature(body: string, secret: string): string {
  return createHmac('sha256', secret).update(body, 'utf8').digest('base64');
}

export interface Attempt {
  /** The HTTP status, or null when none came (refused, reset, timed out). */
  status: number | null;
  error?: string;
  durationMs: number;
}

/** In-flight requests, so closing the fake can end them. */
export class Outgoing {
  private readonly open = new Set<ClientRequest>();
  private closed = false;

  /** One POST, no redirects followed; resolves (never rejects) once the answer is read or given up. */
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<Attempt> {
    const started = Date.now();
    const done = (status: number | null, error?: string): Attempt => ({ status, error, durationMs: Date.now() - started });
    if (this.closed) return Promise.resolve(done(null, 'closed'));
    return new Promise((resolve) => {
      const target = new URL(url);
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(target, {
        method: 'POST',
        agent: false,
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      });
      this.open.add(req);
      const timer = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
      const finish = (attempt: Attempt): void => {
        clearTimeout(timer);
        this.open.delete(req);
        resolve(attempt);
      };
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => finish(done(res.statusCode ?? null)));
        res.on('error', (e) => finish(done(null, e.message)));
        // The first settlement wins; after 'end' this changes nothing.
        res.on('close', () => finish(done(null, 'connection closed before the answer was complete')));
      });
      req.on('error', (e) => finish(done(null, this.closed ? 'closed' : e.message)));
      req.end(body);
    });
  }

  /** Ends every request in flight and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const req of this.open) req.destroy(new Error('closed'));
  }
}
