/**
 * What a production Temporal endpoint asks of a client, put in front of a plain dev server
 * (the Temporal CLI's dev server has no TLS or auth options) over loopback:
 *
 * - `startTlsProxy`: terminates TLS (ALPN h2, as gRPC needs) and passes the bytes on, optionally
 *   requiring a client certificate signed by the test CA (mutual TLS);
 * - `startApiKeyProxy`: an HTTP/2 TLS proxy that checks `authorization: Bearer <key>` on every
 *   gRPC call, answers UNAUTHENTICATED without it, and forwards each stream to the dev server;
 * - `makeTestPki`: a throwaway CA, a server certificate for 127.0.0.1/localhost and a client
 *   certificate, made with the openssl command line.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';

export interface TestPki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA nobody signed the server certificate with. */
  otherCaCert: string;
}

/** EC P-256 keys (fast); v3 extensions as rustls (the worker's TLS) insists on them. */
export function makeTestPki(dir: string): TestPki {
  mkdirSync(dir, { recursive: true });
  const f = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const ca = (name: string, cn: string) =>
    openssl(
      'req',
      '-x509',
      '-new',
      ...newKey,
      '-keyout',
      f(`${name}.key`),
      '-out',
      f(`${name}.pem`),
      '-days',
      '2',
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
  ca('ca', 'shipments test CA');
  ca('other-ca', 'some other CA');
  const leaf = (name: string, cn: string, extensions: string) => {
    openssl('req', '-new', ...newKey, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', `/CN=${cn}`);
    writeFileSync(f(`${name}.ext`), extensions);
    openssl(
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      f('ca.pem'),
      '-CAkey',
      f('ca.key'),
      '-set_serial',
      String(Date.now()),
      '-out',
      f(`${name}.pem`),
      '-days',
      '2',
      '-extfile',
      f(`${name}.ext`),
    );
  };
  leaf(
    'server',
    'localhost',
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n',
  );
  leaf('client', 'shipments-worker', 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
  return {
    dir,
    caCert: f('ca.pem'),
    serverCert: f('server.pem'),
    serverKey: f('server.key'),
    clientCert: f('client.pem'),
    clientKey: f('client.key'),
    otherCaCert: f('other-ca.pem'),
  };
}

export interface TestProxy {
  /** host:port to give as TEMPORAL_ADDRESS. */
  address: string;
  /** Handshakes the proxy refused (e.g. no client certificate) or calls it turned away (bad key). */
  refused(): number;
  /** Calls or connections it passed on to the dev server. */
  passed(): number;
  close(): Promise<void>;
}

const port = (hostPort: string) => Number(hostPort.slice(hostPort.lastIndexOf(':') + 1));

/** TLS in front of `target` (the dev server's host:port); with `requireClientCert`, mutual TLS against the test CA. */
export async function startTlsProxy(pki: TestPki, target: string, opts: { requireClientCert?: boolean } = {}): Promise<TestProxy> {
  let refused = 0;
  let passed = 0;
  const sockets = new Set<net.Socket>();
  const server = tls.createServer(
    {
      cert: readFileSync(pki.serverCert),
      key: readFileSync(pki.serverKey),
      ALPNProtocols: ['h2'],
      ...(opts.requireClientCert ? { requestCert: true, rejectUnauthorized: true, ca: readFileSync(pki.caCert) } : {}),
    },
    (client) => {
      passed++;
      const upstream = net.connect(port(target), '127.0.0.1');
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    },
  );
  server.on('tlsClientError', () => refused++);
  return listen(
    server,
    () => ({ refused, passed }),
    () => {
      for (const s of sockets) s.destroy();
    },
  );
}

/** HTTP/2 over TLS that lets a gRPC call through only with `authorization: Bearer <apiKey>`. */
export async function startApiKeyProxy(pki: TestPki, target: string, apiKey: string): Promise<TestProxy> {
  let refused = 0;
  let passed = 0;
  const upstream = http2.connect(`http://127.0.0.1:${port(target)}`);
  upstream.on('error', () => undefined);
  const sessions = new Set<http2.ServerHttp2Session>();
  const server = http2.createSecureServer({ cert: readFileSync(pki.serverCert), key: readFileSync(pki.serverKey) });
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    if (headers.authorization !== `Bearer ${apiKey}`) {
      refused++;
      // A trailers-only gRPC answer, as a server with API key auth gives.
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': '16',
          'grpc-message': headers.authorization ? 'invalid API key' : 'API key required',
        },
        { endStream: true },
      );
      return;
    }
    passed++;
    const forwarded: http2.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      if (name === 'authorization' || (name.startsWith(':') && name !== ':method' && name !== ':path')) continue;
      forwarded[name] = value;
    }
    const call = upstream.request(forwarded);
    call.on('error', () => undefined);
    let trailers: http2.OutgoingHttpHeaders = {};
    call.on('response', (h) => {
      const response = Object.fromEntries(Object.entries(h).filter(([name]) => name === ':status' || !name.startsWith(':')));
      if ('grpc-status' in h)
        stream.respond(response, { endStream: true }); // trailers-only answer
      else stream.respond(response, { waitForTrailers: true });
    });
    call.on('trailers', (t) => (trailers = t));
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    call.on('data', (chunk: Buffer) => {
      if (!stream.writableEnded) stream.write(chunk);
    });
    call.on('end', () => {
      if (!stream.writableEnded) stream.end();
    });
    stream.pipe(call);
    stream.on('close', () => {
      if (!call.closed) call.close(http2.constants.NGHTTP2_CANCEL);
    });
    // Only a reset travels back: a normal end still owes the client its trailers.
    call.on('close', () => {
      if (call.rstCode && call.rstCode !== http2.constants.NGHTTP2_NO_ERROR && !stream.closed) stream.close(call.rstCode);
    });
  });
  return listen(
    server,
    () => ({ refused, passed }),
    () => {
      for (const s of sessions) s.destroy();
      upstream.destroy();
    },
  );
}

async function listen(server: net.Server, counts: () => { refused: number; passed: number }, destroyAll: () => void): Promise<TestProxy> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port: p } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${p}`,
    refused: () => counts().refused,
    passed: () => counts().passed,
    close: () =>
      new Promise<void>((resolve) => {
        destroyAll();
        server.close(() => resolve());
      }),
  };
}
