/**
 * The raw request body, bounded in size and time. Unlike local-http's readBody, which reads an
 * oversize body to its end so a test client sees the 413, this endpoint faces the internet: it
 * stops at the limit (before reading anything when Content-Length already says so) and gives a
 * slow sender `timeoutMs` in all, and the caller answers with `connection: close`.
 */
import type { IncomingMessage } from 'node:http';
import { header } from '../local-http';

export type BodyResult =
  | { kind: 'complete'; body: Buffer }
  | { kind: 'too-large' }
  | { kind: 'timed-out' }
  /** The sender hung up (or the server is closing); there is no one to answer. */
  | { kind: 'aborted' };

export function readRawBody(req: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<BodyResult> {
  const declared = header(req, 'content-length');
  // Node has already refused a malformed Content-Length with 400, so this is digits.
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.resolve({ kind: 'too-large' });

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BodyResult): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      // Stop pulling bytes we will not use; the socket closes after the answer.
      if (result.kind !== 'complete') req.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) finish({ kind: 'too-large' });
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish({ kind: 'complete', body: Buffer.concat(chunks, size) });
    const onAbort = (): void => finish({ kind: 'aborted' });
    const timer = setTimeout(() => finish({ kind: 'timed-out' }), timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}
