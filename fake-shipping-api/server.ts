/**
 * A local fake of the shipping API (spec 1.0.0) on plain node:http, for development and
 * tests: authentication, idempotent labels, courier rejections, orders, time-driven tracking,
 * couriers and products, plus injectable faults (rate limit, 500s, latency, hangs, malformed
 * bodies, a deterministic fail-next queue) and admin endpoints to steer and observe it.
 *
 * This file wires the parts: router.ts names the endpoint, serve-api.ts takes an API request
 * through authentication and faults (fault-injector.ts) to its route in routes/, and state.ts
 * holds what one running fake knows. Every response shape comes from ../shipping-api/contract.ts;
 * behaviour the spec leaves open is chosen in the routes and documented in docs/fake-shipping-api.md.
 */
import type { ServerResponse } from 'node:http';
import { baseUrlOf, cancellableDelays, JSON_TYPE, jsonText, LocalHttpServer, requestLine, writeAnswer } from '../local-http';
import { standard, type Answer } from './answers';
import { DEFAULTS } from './defaults';
import type { EndpointKey } from './faults';
import { route, unmatchedKey } from './router';
import { handleAdmin } from './routes/admin';
import { listCouriers } from './routes/couriers';
import { createLabel } from './routes/create-label';
import type { EndpointHandler } from './routes/endpoint';
import { listProducts } from './routes/products';
import { readLabel } from './routes/read-label';
import { readOrder } from './routes/read-order';
import { readTracking } from './routes/tracking';
import { serveApi } from './serve-api';
import { keepLabels } from './persistence';
import { FakeState } from './state';
import type { FakeShippingApi, FakeShippingApiOptions } from './types';

export type { EndpointKey, FailNextEntry, Faults, RateLimit, RetryAfterRange } from './faults';
export { defaultBurst, ENDPOINT_KEYS, FaultsPatch, InvalidFaultsError, normalizeEndpointKey, RateLimitSchema } from './faults';
export { INTEGRATION_CODE } from './catalog';
export { defaultAccount, DEFAULTS, DEV_API_KEY, DEV_API_TOKEN } from './defaults';
export type {
  AnyFakeAccount,
  FakeAccount,
  FakeBearerAccount,
  FakeCredentials,
  FakeFault,
  FakeLabelSummary,
  FakeRequest,
  FakeShippingApi,
  FakeShippingApiOptions,
  FakeStats,
} from './types';

/** The spec's endpoints, one module each under routes/ (the admin ones: routes/admin.ts). */
const ENDPOINTS: Readonly<Record<EndpointKey, EndpointHandler>> = {
  'POST /labels': createLabel,
  'GET /labels': readLabel,
  'GET /orders': readOrder,
  'GET /tracking': readTracking,
  'GET /couriers': listCouriers,
  'GET /products': listProducts,
};

export async function startFakeShippingApi(options: FakeShippingApiOptions = {}): Promise<FakeShippingApi> {
  const host = options.host ?? DEFAULTS.host;
  const fake = new FakeState(options);
  const kept =
    options.stateFile === undefined
      ? undefined
      : keepLabels(options.stateFile, fake.labels, (message) => process.stderr.write(`${message}\n`));
  let closed = false;
  const { delay, releaseAll: releaseDelays } = cancellableDelays();

  function send(res: ServerResponse, answer: Answer): void {
    if (closed || res.destroyed || !res.socket || res.socket.destroyed) return;
    const text = jsonText(answer.body);
    writeAnswer(res, answer.status, text, text === '' ? null : JSON_TYPE, answer.headers);
  }

  const http = new LocalHttpServer(
    'fake shipping API',
    async (req, res) => {
      const { method, url, segments } = requestLine(req);
      if (segments === null) {
        fake.traffic.count(`${method} (unmatched)`, 404);
        return send(res, standard(404, 'Resource not found'));
      }
      if (segments[0] === '__admin') return send(res, await handleAdmin(req, method, segments.slice(1).join('/'), fake));
      const r = route(method, segments);
      if (r.kind === 'status') {
        fake.traffic.count(unmatchedKey(method, segments), r.answer.status);
        return send(res, r.answer);
      }
      return serveApi({ fake, endpoints: ENDPOINTS, send, delay }, req, res, url, r.key, r.id);
    },
    // A bug in the fake itself: answer 500 rather than leaving the client hanging.
    (res) => send(res, standard(500, 'Internal server error (fake bug)')),
  );
  await http.listen(options.port ?? DEFAULTS.port, host);
  const port = http.port();

  return {
    baseUrl: baseUrlOf(host, port),
    port,
    stats: () => fake.traffic.snapshot(),
    requestLog: () => fake.traffic.requestLog(),
    labels: () => fake.labels.summaries(),
    setFaults: (patch) => fake.faults.set(patch),
    rotateCredentials: (account, credentials) => void fake.rotateCredentials(account, credentials),
    resetStats: () => fake.traffic.resetStats(),
    close: async () => {
      if (closed) return;
      closed = true;
      kept?.close();
      releaseDelays();
      await http.stopListening();
    },
  };
}
