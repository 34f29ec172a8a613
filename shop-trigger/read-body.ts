/**
 * The body's time bound. Fastify bounds its size (`bodyLimit`, before reading anything when
 * Content-Length already says so); this endpoint faces the internet, so a slow sender also gets
 * `timeoutMs` in all. Fastify reads the stream a `preParsing` hook returns: this one passes the
 * bytes through and fails with 408 when the time is up, which fastify answers like its own 413.
 */
import { PassThrough, type Readable } from 'node:stream';

export const READ_TIMED_OUT = 'SHOP_TRIGGER_READ_TIMED_OUT';

/** What fastify reads instead of the request: the same bytes, failing with a 408 error after `timeoutMs`. */
export function timedBody(payload: Readable, timeoutMs: number): Readable & { receivedEncodedLength: number } {
  const body = Object.assign(new PassThrough(), { receivedEncodedLength: 0 });
  const timer = setTimeout(() => {
    payload.unpipe(body);
    // Stop pulling bytes we will not use; the socket closes after the answer.
    payload.pause();
    body.destroy(Object.assign(new Error(`body not received within ${timeoutMs} ms`), { statusCode: 408, code: READ_TIMED_OUT }));
  }, timeoutMs);
  payload.on('data', (chunk: Buffer) => (body.receivedEncodedLength += chunk.length));
  payload.once('end', () => clearTimeout(timer));
  payload.once('close', () => clearTimeout(timer));
  payload.once('error', (err) => {
    clearTimeout(timer);
    body.destroy(err);
  });
  payload.pipe(body);
  return body;
}
