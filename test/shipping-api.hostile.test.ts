/**
 * ShippingApiClient against an API server written to misbehave, over real loopback HTTP: a body
 * far larger than any answer of the spec, an error body of hundreds of megabytes, a body that
 * never ends. Each call ends, bounded in memory and time, with an error naming what happened.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShippingApiClient } from '../shipping-api/client';
import { MAX_ERROR_TEXT, type ShippingApiError } from '../shipping-api/errors';

const MiB = 1024 * 1024;
let server: Server;
let baseUrl: string;
/** Bytes the server managed to write before the client gave up, per route. */
const written: Record<string, number> = {};

/** Streams `total` bytes of `{"x":"aaaa…` without ever holding them, until the client hangs up. */
function stream(res: ServerResponse, route: string, total: number, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(MiB, 'a');
  written[route] = 0;
  res.write('{"error":"');
  const pump = () => {
    while (written[route]! < total) {
      written[route]! += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end('"}');
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const route = req.url ?? '';
    if (route.startsWith('/tracking/huge')) return stream(res, 'huge', 1024 * MiB);
    if (route.startsWith('/tracking/error-huge')) return stream(res, 'error-huge', 300 * MiB, 500);
    if (route.startsWith('/tracking/error-long')) {
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'x'.repeat(50_000) }));
      return;
    }
    if (route.startsWith('/tracking/endless')) {
      // A byte every 100 ms: never idle long enough for an idle timeout, never done.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      const timer = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const client = (o: Partial<ConstructorParameters<typeof ShippingApiClient>[0]> = {}) =>
  new ShippingApiClient({ baseUrl, apiKey: 'k', apiToken: 't', ...o });

async function failure(call: Promise<unknown>): Promise<ShippingApiError> {
  return call.then(
    () => expect.fail('the call should have failed'),
    (err: ShippingApiError) => err,
  );
}

describe('a hostile shipping API', () => {
  it('a 1 GB answer is abandoned at the size limit as a contract violation naming it, without the memory it would take', async () => {
    const c = client();
    global.gc?.();
    const before = process.memoryUsage().rss;
    const err = await failure(c.getTracking('huge-1'));
    const grown = process.memoryUsage().rss - before;
    await c.close();
    // Not retryable by itself: the activity asks again a bounded number of times (isRetryable), then it stands.
    expect(err).toMatchObject({ kind: 'contract_violation', retryable: false, path: '(body)' });
    expect(err.message).toMatch(/larger than the 4194304-byte limit \(SHIPPING_API_MAX_RESPONSE_BYTES\)/);
    // It stopped reading near the limit, not at the end of the gigabyte.
    expect(written.huge!).toBeLessThan(256 * MiB);
    console.log(
      `1 GB answer: RSS grew ${(grown / MiB).toFixed(1)} MiB, server wrote ${(written.huge! / MiB).toFixed(0)} MiB before the client hung up`,
    );
    expect(grown).toBeLessThan(50 * MiB);
  });

  it('the limit is configurable', async () => {
    const c = client({ maxResponseBytes: 128 * 1024 });
    const err = await failure(c.getTracking('huge-2'));
    await c.close();
    expect(err.message).toMatch(/131072-byte limit/);
  });

  it('a 300 MB error body is not read: the status decides, and no body text is kept', async () => {
    const c = client();
    const err = await failure(c.getTracking('error-huge'));
    await c.close();
    expect(err).toMatchObject({ kind: 'server_error', status: 500, retryable: true });
    expect(err.message).toBe('getTracking: HTTP 500 with an unrecognised body (HTTP 500)');
    expect(written['error-huge']!).toBeLessThan(64 * MiB);
  });

  it("an error's text is cut before it reaches logs and history", async () => {
    const c = client();
    const err = await failure(c.getTracking('error-long'));
    await c.close();
    expect(err).toMatchObject({ kind: 'server_error', status: 503 });
    expect(err.message.length).toBeLessThan(MAX_ERROR_TEXT + 100);
    expect(err.message).toMatch(/… \(49000 more characters\)/);
  });

  it('a body that never ends meets the total deadline, without a caller signal', async () => {
    const c = client({ totalTimeoutMs: 1_500 });
    const started = Date.now();
    const err = await failure(c.getTracking('endless'));
    await c.close();
    expect(err).toMatchObject({ kind: 'network', retryable: true });
    expect(err.message).toMatch(/no complete answer within 1500 ms/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a caller's signal still wins over the deadline, as an abort", async () => {
    const c = client({ totalTimeoutMs: 60_000 });
    const err = await failure(c.getTracking('endless', { signal: AbortSignal.timeout(300) }));
    await c.close();
    expect(err.kind).toBe('network');
    expect(err.message).not.toMatch(/no complete answer within/);
  });
});
