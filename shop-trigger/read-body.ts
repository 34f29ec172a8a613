/**
 * The body's time bound. Fastify bounds its size (`bodyLimit`, before reading anything when
 * Content-Length already says so); this endpoint faces the internet, so a slow sender also gets
 * `timeoutMs` in all. Fastify reads the stream a `preParsing` hook returns: this one passes the
 * bytes through and fails with 408 when the time is up, which fastify answers like its own 413.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';

export const READ_TIMED_OUT = 'SHOP_TRIGGER_READ_TIMED_OUT';

/**
 * What fastify reads instead of the request: the same bytes, failing with a 408 error after
 * `timeoutMs`. The bound ends with the answer (`answered`): one given before the body was read (a
 * 413 on its declared length) leaves nothing to time out.
 */
export function timedBody(payload: Readable, timeoutMs: number, answered: Writable): Readable & { receivedEncodedLength: number } {
  const body = Object.assign(new PassThrough(), { receivedEncodedLength: 0 });
  // Fastify listens while it reads; this one keeps a failure after that from being uncaught.
  body.on('error', () => {});
  const timer = setTimeout(() => {
    payload.unpipe(body);
    // Stop pulling bytes we will not use; the socket closes after the answer.
    payload.pause();
    const error = Object.assign(new Error(`body not received within ${timeoutMs} ms`), { statusCode: 408, code: READ_TIMED_OUT });
    // Fastify answers 408 to a body it reads; one nobody reads (yet) has no one to answer: drop it.
    if (body.listenerCount('error') > 1) body.destroy(error);
    else payload.destroy();
  }, timeoutMs);
  payload.on('data', (chunk: Buffer) => (body.receivedEncodedLength += chunk.length));
  payload.once('end', () => clearTimeout(timer));
  payload.once('close', () => clearTimeout(timer));
  answered.once('close', () => clearTimeout(timer));
  payload.once('error', (err) => {
    clearTimeout(timer);
    body.destroy(err);
  });
  payload.pipe(body);
  return body;
}
