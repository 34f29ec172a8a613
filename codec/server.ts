/**
 * The remote codec server for the Temporal Web UI and CLI (`npm run codec-server`): POST
 * /encode and /decode take and answer `{payloads: [{metadata: {k: base64}, data: base64}]}`
 * (protobuf JSON of Payloads), so an operator's browser shows decrypted inputs and results
 * while Temporal itself only ever stores ciphertext. Every request needs the bearer token;
 * CORS answers only the configured Web UI origins.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload } from '@temporalio/common';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { CodecServerSettings } from '../config/settings';
import { EncryptionCodec, PayloadDecryptionError } from './encryption-codec';

/** Temporal refuses payloads over 2 MB by default; a batch of a whole history stays well below this. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/**
 * Payloads one request may carry: the Web UI and the CLI send the few payloads of one event or
 * one page at a time; 4 million empty ones in a 12 MB body took 206 s and 5.7 GB to answer.
 */
export const MAX_PAYLOADS_PER_REQUEST = 2000;
/** What the Web UI sends with each codec request. */
// Authorization-Extras: the ID token newer Web UIs add when they pass the user's access token.
const ALLOWED_HEADERS = 'Authorization, Authorization-Extras, Content-Type, X-Namespace';
const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
const CodecRequest = z.object({
  payloads: z.array(z.object({ metadata: z.record(z.string(), base64).nullish(), data: base64.nullish() }).loose()),
});

export interface CodecServer {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

export interface CodecServerOptions extends CodecServerSettings {
  host?: string;
  port?: number;
  logger?: Logger;
}

/** sha256 first, so the comparison takes the same time whatever the length of the guess. */
function tokenMatches(expected: string, header: string | undefined): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!match) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(expected), digest(match[1]!.trim()));
}

const toPayload = (p: z.infer<typeof CodecRequest>['payloads'][number]): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});

const fromPayload = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

export function createCodecRequestHandler(options: CodecServerSettings & { logger?: Logger }): http.RequestListener {
  const codec = new EncryptionCodec(options.encryption);
  const origins = new Set(options.corsOrigins);
  const log = options.logger;

  return (req, res) => {
    const origin = req.headers.origin;
    const corsHeaders: Record<string, string> =
      origin && origins.has(origin) ? { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' } : { Vary: 'Origin' };
    const answer = (status: number, body?: unknown, extra: Record<string, string> = {}) => {
      const text = body === undefined ? '' : JSON.stringify(body);
      res.writeHead(status, { ...corsHeaders, ...extra, ...(text ? { 'Content-Type': 'application/json' } : {}) });
      res.end(text);
    };
    const path = new URL(req.url ?? '/', 'http://codec').pathname; // the Web UI adds ?preserveStorageRefs=true
    const operation = path === '/encode' ? 'encode' : path === '/decode' ? 'decode' : undefined;

    if (req.method === 'OPTIONS') {
      if (!origin || !origins.has(origin)) {
        log?.warn({ origin, path }, 'codec server: preflight from an origin not in CODEC_SERVER_CORS_ORIGIN');
        return answer(403);
      }
      return answer(204, undefined, {
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': '600',
      });
    }
    if (!operation) return answer(404, { error: 'not found: POST /encode or /decode' });
    if (req.method !== 'POST') return answer(405, { error: 'use POST' }, { Allow: 'POST, OPTIONS' });
    // Without a token (loopback development) a page that rebinds its own domain to 127.0.0.1 could
    // read answers as same-origin: only requests addressed to a loopback name are served.
    if (options.token === undefined && !LOOPBACK_HOST.test(req.headers.host ?? '')) {
      return answer(403, { error: 'without a token only requests to 127.0.0.1, localhost or [::1] are served' });
    }
    if (options.token !== undefined && !tokenMatches(options.token, req.headers.authorization)) {
      log?.warn({ origin, path, namespace: req.headers['x-namespace'] }, 'codec server: refused a request without the right bearer token');
      return answer(401, { error: 'missing or wrong bearer token' }, { 'WWW-Authenticate': 'Bearer' });
    }

    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('error', (err) => log?.debug({ err, path }, 'codec server: request aborted')); // a closed tab, not a crash
    req.on('end', () => {
      if (tooLarge) return answer(413, { error: `body over ${MAX_BODY_BYTES} bytes` });
      let json: unknown;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return answer(400, { error: 'body is not JSON' });
      }
      const sent = (json as { payloads?: unknown } | null)?.payloads;
      if (Array.isArray(sent) && sent.length > MAX_PAYLOADS_PER_REQUEST) {
        return answer(413, { error: `${sent.length} payloads in one request; at most ${MAX_PAYLOADS_PER_REQUEST}` });
      }
      const parsed = CodecRequest.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        return answer(400, { error: `${issue.path.join('.') || '(body)'}: ${issue.message}` });
      }
      const payloads = parsed.data.payloads.map(toPayload);
      (operation === 'encode' ? codec.encode(payloads) : codec.decode(payloads)).then(
        (out) => answer(200, { payloads: out.map(fromPayload) }),
        (err: unknown) => {
          if (err instanceof PayloadDecryptionError) return answer(422, { error: err.message });
          log?.error({ err, path }, 'codec server: codec failed');
          return answer(500, { error: 'codec failed' });
        },
      );
    });
  };
}

export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const server = http.createServer(createCodecRequestHandler(options));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
