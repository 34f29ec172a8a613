/**
 * The fake itself over raw HTTP: routing, auth, request validation bodies, admin endpoints,
 * seeded reproducibility of fault rates, and close() with hanging sockets.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OrderDetail, StandardErrorBody, TrackingRecord, ValidationErrorBody } from '../shipping-api/contract';
import {
  DEFAULTS,
  InvalidFaultsError,
  startFakeShippingApi,
  type FakeAccount,
  type FakeShippingApi,
  type FakeStats,
  type Faults,
} from '../fake-shipping-api/server';
import { authHeaders, rawRequest, sampleLabelRequest } from './helpers/api';

const main: FakeAccount = { name: 'main', apiKey: 'key-main', apiToken: 'token-main' };
const other: FakeAccount = { name: 'other', apiKey: 'key-other', apiToken: 'token-other' };
const auth = authHeaders(main);

let api: FakeShippingApi;

beforeAll(async () => {
  api = await startFakeShippingApi({ accounts: [main, other], trackingStepMs: 0 });
});
afterAll(async () => {
  await api.close();
});
beforeEach(() => {
  api.setFaults({
    failNext: [],
    rateLimit: null,
    rateLimitedRate: 0,
    rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 1 },
    serverErrorRate: 0,
    hangRate: 0,
    malformedRate: 0,
    lostAnswerRate: 0,
    latencyMs: 0,
    endpoints: null,
  });
  api.resetStats();
});

describe('routing and auth', () => {
  it('unknown path: 404 standard body; wrong method: 405 with Allow', async () => {
    const unknown = await rawRequest(api.baseUrl, 'GET', '/v2/labels', { headers: auth });
    expect(unknown.status).toBe(404);
    expect(StandardErrorBody.parse(unknown.json)).toMatchObject({ code: 'NOT_FOUND' });

    const wrong = await rawRequest(api.baseUrl, 'DELETE', '/couriers', { headers: auth });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    expect(wrong.json).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
    expect((await rawRequest(api.baseUrl, 'GET', '/labels', { headers: auth })).headers.get('allow')).toBe('POST');
    expect((await rawRequest(api.baseUrl, 'POST', '/orders/x', { headers: auth, body: {} })).status).toBe(405);
  });

  it('401 for missing, partial or mismatched credentials (key of one account, token of another)', async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { 'x-rr-apikey': main.apiKey },
      { 'x-rr-apikey': main.apiKey, 'x-rr-apitoken': other.apiToken },
    ];
    for (const headers of attempts) {
      const answer = await rawRequest(api.baseUrl, 'GET', '/couriers', { headers });
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' });
    }
    expect(api.stats().requests['GET /couriers']).toEqual({ '401': 3 });
  });

  it('GET /orders with a non-uuid id is a 404 standard body', async () => {
    const answer = await rawRequest(api.baseUrl, 'GET', '/orders/12345', { headers: auth });
    expect(answer.status).toBe(404);
    expect(answer.json).toEqual({ error: 'Order not found', code: 'NOT_FOUND' });
  });

  it('the default account comes from the environment, else the dev credentials', async () => {
    const saved = { key: process.env.SHIPPING_API_KEY, token: process.env.SHIPPING_API_TOKEN };
    const restore = () => {
      for (const [name, value] of [
        ['SHIPPING_API_KEY', saved.key],
        ['SHIPPING_API_TOKEN', saved.token],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    };
    try {
      delete process.env.SHIPPING_API_KEY;
      delete process.env.SHIPPING_API_TOKEN;
      const dev = await startFakeShippingApi();
      const ok = await rawRequest(dev.baseUrl, 'GET', '/couriers', {
        headers: { 'x-rr-apikey': 'dev-api-key', 'x-rr-apitoken': 'dev-api-token' },
      });
      await dev.close();
      expect(ok.status).toBe(200);

      process.env.SHIPPING_API_KEY = 'env-key';
      process.env.SHIPPING_API_TOKEN = 'env-token';
      const fromEnv = await startFakeShippingApi();
      const envOk = await rawRequest(fromEnv.baseUrl, 'GET', '/couriers', {
        headers: { 'x-rr-apikey': 'env-key', 'x-rr-apitoken': 'env-token' },
      });
      const devRefused = await rawRequest(fromEnv.baseUrl, 'GET', '/couriers', {
        headers: { 'x-rr-apikey': 'dev-api-key', 'x-rr-apitoken': 'dev-api-token' },
      });
      await fromEnv.close();
      expect(envOk.status).toBe(200);
      expect(devRefused.status).toBe(401);
    } finally {
      restore();
    }
  });
});

describe('POST /labels validation bodies', () => {
  it('invalid fields: 400 validation body with dotted paths, nothing created', async () => {
    const request = sampleLabelRequest();
    const body = {
      ...request,
      service: {},
      shipment: { ...request.shipment, parcels: [{ weight: 'heavy' }], shipTo: { address: { countryCode: 'Germany' } } },
    };
    const answer = await rawRequest(api.baseUrl, 'POST', '/labels', { headers: auth, body });
    expect(answer.status).toBe(400);
    const parsed = ValidationErrorBody.parse(answer.json);
    expect(parsed.details.map((d) => d.field).sort()).toEqual(
      ['service.productCode', 'shipment.parcels[0].weight', 'shipment.shipTo.address.countryCode'].sort(),
    );
    expect(api.labels()).toHaveLength(0);
  });

  it('a body that is not JSON is a 400 validation body', async () => {
    const answer = await rawRequest(api.baseUrl, 'POST', '/labels', { headers: auth, body: '{"idempotencyKey":' });
    expect(answer.status).toBe(400);
    expect(ValidationErrorBody.parse(answer.json).details[0]!.field).toBe('(body)');
  });

  it('first creation 201, replay 200 with the idempotent-replayed header; a changed payload is flagged', async () => {
    const request = sampleLabelRequest();
    const first = await rawRequest(api.baseUrl, 'POST', '/labels', { headers: auth, body: request });
    expect(first.status).toBe(201);
    const replay = await rawRequest(api.baseUrl, 'POST', '/labels', { headers: auth, body: request });
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual(first.json);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('x-fake-idempotency-mismatch')).toBeNull();
    const changed = await rawRequest(api.baseUrl, 'POST', '/labels', {
      headers: auth,
      body: { ...request, label: { format: 'ZPL' } },
    });
    expect(changed.json).toEqual(first.json);
    expect(changed.headers.get('x-fake-idempotency-mismatch')).toBe('true');
    expect(api.stats()).toMatchObject({ labelsCreated: 1, idempotentReplays: 2, idempotencyPayloadMismatches: 1 });
  });

  it('order detail and tracking of a created label conform to the contract', async () => {
    const created = await rawRequest(api.baseUrl, 'POST', '/labels', { headers: auth, body: sampleLabelRequest({ order: undefined }) });
    const id = (created.json as { id: string }).id;
    const order = await rawRequest(api.baseUrl, 'GET', `/orders/${id}`, { headers: auth });
    expect(OrderDetail.safeParse(order.json).success).toBe(true);
    const tracking = await rawRequest(api.baseUrl, 'GET', `/tracking/${id}`, { headers: auth });
    expect(TrackingRecord.parse(tracking.json).tag).toBe('Delivered');
  });
});

describe('admin endpoints', () => {
  it('GET stats / labels / faults, POST reset-stats; no auth; not counted; never faulted', async () => {
    await rawRequest(api.baseUrl, 'POST', '/labels', { headers: auth, body: sampleLabelRequest() });
    api.setFaults({ serverErrorRate: 1, hangRate: 1, malformedRate: 1 });

    const stats = await rawRequest(api.baseUrl, 'GET', '/__admin/stats');
    expect(stats.status).toBe(200);
    expect(stats.json as FakeStats).toEqual({
      labelsCreated: 1,
      labelsRejected: 0,
      idempotentReplays: 0,
      idempotencyPayloadMismatches: 0,
      requests: { 'POST /labels': { '201': 1 } },
    });

    const labels = await rawRequest(api.baseUrl, 'GET', '/__admin/labels');
    expect((labels.json as { labels: unknown[] }).labels).toEqual(api.labels());

    const faults = await rawRequest(api.baseUrl, 'GET', '/__admin/faults');
    expect(faults.json).toMatchObject({ serverErrorRate: 1, hangRate: 1, malformedRate: 1 });

    const labelCount = api.labels().length;
    const reset = await rawRequest(api.baseUrl, 'POST', '/__admin/reset-stats');
    expect(reset.status).toBe(200);
    expect(api.stats()).toEqual({
      labelsCreated: 0,
      labelsRejected: 0,
      idempotentReplays: 0,
      idempotencyPayloadMismatches: 0,
      requests: {},
    });
    expect(api.labels()).toHaveLength(labelCount); // labels survive a stats reset

    expect((await rawRequest(api.baseUrl, 'GET', '/__admin/nope')).status).toBe(404);
    expect((await rawRequest(api.baseUrl, 'DELETE', '/__admin/stats')).status).toBe(405);
  });

  it('POST /__admin/faults applies a partial patch and answers the new faults', async () => {
    const answer = await rawRequest(api.baseUrl, 'POST', '/__admin/faults', {
      body: { rateLimit: { perSecond: 5, burst: 10 }, endpoints: ['get /tracking/{id}', 'POST /labels'], failNext: [{ status: 503 }] },
    });
    expect(answer.status).toBe(200);
    const expected: Faults = {
      rateLimit: { perSecond: 5, burst: 10 },
      rateLimitedRate: 0,
      rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 1 },
      serverErrorRate: 0,
      latencyMs: 0,
      hangRate: 0,
      malformedRate: 0,
      lostAnswerRate: 0,
      endpoints: ['GET /tracking', 'POST /labels'],
      failNext: [{ status: 503 }],
    };
    expect(answer.json).toEqual(expected);
    expect(api.setFaults({})).toEqual(expected);
    // failNext ignores the endpoints filter: the next request of any endpoint pops it.
    expect((await rawRequest(api.baseUrl, 'GET', '/couriers', { headers: auth })).status).toBe(503);
  });

  it('a bad patch is a 400 validation body naming the field, and changes nothing', async () => {
    const before = api.setFaults({});
    const answer = await rawRequest(api.baseUrl, 'POST', '/__admin/faults', {
      body: { serverErrorRate: 1.5, failNext: [{ status: 200 }], endpoints: ['GET /nowhere'], surprise: true },
    });
    expect(answer.status).toBe(400);
    const fields = ValidationErrorBody.parse(answer.json).details.map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['serverErrorRate', 'failNext[0].status', 'endpoints[0]', 'surprise']));
    expect(api.setFaults({})).toEqual(before);
    expect((await rawRequest(api.baseUrl, 'POST', '/__admin/faults', { body: '{nope' })).status).toBe(400);
    expect(() => api.setFaults({ hangRate: -1 })).toThrow(InvalidFaultsError);
    expect(() => api.setFaults({ hangRate: -1 })).toThrow(/hangRate/);
    expect(() => api.setFaults({ rateLimitedRetryAfter: { minSeconds: 5, maxSeconds: 2 } })).toThrow(/rateLimitedRetryAfter\.maxSeconds/);
    expect(() => api.setFaults({ lostAnswerRate: 2 })).toThrow(/lostAnswerRate/);
  });
});

describe('random 429s and lost answers', () => {
  it('rateLimitedRate answers 429 with a Retry-After drawn from the range, whatever the bucket says', async () => {
    api.setFaults({ rateLimitedRate: 1, rateLimitedRetryAfter: { minSeconds: 2, maxSeconds: 4 } });
    const seen = new Set<string>();
    for (let i = 0; i < 40; i += 1) {
      const answer = await rawRequest(api.baseUrl, 'GET', '/couriers', { headers: auth });
      expect(answer.status).toBe(429);
      expect(answer.headers.get('x-fake-fault')).toBe('rate-limited');
      seen.add(String(answer.headers.get('retry-after')));
    }
    expect([...seen].sort()).toEqual(['2', '3', '4']);
    const log = api.requestLog().slice(-40);
    expect(log.every((r) => r.status === 429 && r.fault === 'rate-limited' && r.account === 'main' && r.answered)).toBe(true);
    expect(log.map((r) => r.retryAfter)).toEqual(expect.arrayContaining(['2', '3', '4']));
  });

  it('a 429 on POST /labels is logged with the idempotency key and order, and creates nothing', async () => {
    api.setFaults({ rateLimitedRate: 1, endpoints: ['POST /labels'] });
    const request = { ...sampleLabelRequest(), idempotencyKey: 'rl-key-1', order: { customerOrderNumber: 'RL-1' } };
    const answer = await rawRequest(api.baseUrl, 'POST', '/labels', { headers: auth, body: request });
    expect(answer.status).toBe(429);
    expect(api.labels().some((l) => l.idempotencyKey === 'rl-key-1')).toBe(false);
    const entry = api.requestLog().at(-1)!;
    expect(entry).toMatchObject({
      endpoint: 'POST /labels',
      idempotencyKey: 'rl-key-1',
      customerOrderNumber: 'RL-1',
      status: 429,
      retryAfter: '1',
    });
    expect(entry.receivedAt).toBeLessThanOrEqual(entry.at);
  });

  it('lostAnswerRate creates the label, then cuts the connection; the replay with the same key answers it', async () => {
    api.setFaults({ lostAnswerRate: 1, endpoints: ['POST /labels'] });
    const request = { ...sampleLabelRequest(), idempotencyKey: 'lost-key-1', order: { customerOrderNumber: 'LOST-1' } };
    await expect(rawRequest(api.baseUrl, 'POST', '/labels', { headers: auth, body: request })).rejects.toThrow();
    const created = api.labels().filter((l) => l.idempotencyKey === 'lost-key-1');
    expect(created).toHaveLength(1);
    expect(api.stats().requests['POST /labels']).toEqual({ lost: 1 });
    expect(api.requestLog().at(-1)).toMatchObject({ status: 201, answered: false, fault: 'lost-answer', idempotencyKey: 'lost-key-1' });

    api.setFaults({ lostAnswerRate: 0 });
    const replay = await rawRequest(api.baseUrl, 'POST', '/labels', { headers: auth, body: request });
    expect(replay.status).toBe(200);
    expect((replay.json as { id: string }).id).toBe(created[0]!.id);
  });
});

describe('determinism and shutdown', () => {
  async function statusSequence(seed: number): Promise<number[]> {
    const fake = await startFakeShippingApi({ accounts: [main], seed, faults: { serverErrorRate: 0.5 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 30; i += 1) statuses.push((await rawRequest(fake.baseUrl, 'GET', '/couriers', { headers: auth })).status);
      return statuses;
    } finally {
      await fake.close();
    }
  }

  it('the same seed gives the same fault sequence; another seed another one', async () => {
    const a = await statusSequence(7);
    const b = await statusSequence(7);
    const c = await statusSequence(8);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
    expect(a).toContain(500);
    expect(a).toContain(200);
  });

  it('close() destroys hanging sockets and resolves promptly', async () => {
    const fake = await startFakeShippingApi({ accounts: [main], faults: { hangRate: 1 } });
    const socket = connect(fake.port, '127.0.0.1');
    const closedByServer = new Promise<string>((resolve) => {
      let received = '';
      socket.on('data', (d) => (received += d.toString()));
      socket.on('close', () => resolve(received));
    });
    socket.write(`GET /couriers HTTP/1.1\r\nHost: x\r\nx-rr-apikey: ${main.apiKey}\r\nx-rr-apitoken: ${main.apiToken}\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.stats().requests['GET /couriers']).toEqual({ hang: 1 });
    const started = Date.now();
    await fake.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await closedByServer).toBe(''); // never answered, then cut
  });

  it('defaults match the documented values', () => {
    expect(DEFAULTS).toMatchObject({ host: '127.0.0.1', port: 0, trackingStepMs: 60_000, rejectPostalCodes: ['00000'], seed: 1 });
  });
});
