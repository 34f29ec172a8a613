/**
 * Injected faults of the fake, each classified by the client: rate limit, server errors,
 * hangs (timeout and AbortSignal), latency, malformed bodies; plus concurrent idempotency.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ShippingApiClient } from '../shipping-api/client';
import { startFakeShippingApi, type FakeAccount, type FakeShippingApi } from '../fake-shipping-api/server';
import { sampleLabelRequest, shippingError } from './helpers/api';

const main: FakeAccount = { name: 'main', apiKey: 'key-main', apiToken: 'token-main' };
const other: FakeAccount = { name: 'other', apiKey: 'key-other', apiToken: 'token-other' };

let api: FakeShippingApi;
let client: ShippingApiClient;
const extraClients: ShippingApiClient[] = [];

function newClient(account: FakeAccount, extra: Partial<ConstructorParameters<typeof ShippingApiClient>[0]> = {}) {
  const c = new ShippingApiClient({ baseUrl: api.baseUrl, apiKey: account.apiKey, apiToken: account.apiToken, ...extra });
  extraClients.push(c);
  return c;
}

beforeAll(async () => {
  // Tracking step 0: every label is immediately trackable (terminal), so GET /tracking answers 200.
  api = await startFakeShippingApi({ accounts: [main, other], trackingStepMs: 0, seed: 42 });
  client = new ShippingApiClient({ baseUrl: api.baseUrl, apiKey: main.apiKey, apiToken: main.apiToken });
});

afterAll(async () => {
  await client.close();
  // Clients of hang tests may hold sockets the fake never answers: destroy those first.
  await api.close();
  await Promise.all(extraClients.map((c) => c.close()));
});

beforeEach(() => {
  api.setFaults({ failNext: [], rateLimit: null, serverErrorRate: 0, hangRate: 0, malformedRate: 0, latencyMs: 0, endpoints: null });
  api.resetStats();
});

describe('rate limit', () => {
  it('a per-account token bucket answers 429 with Retry-After; classified rate_limited', async () => {
    api.setFaults({ rateLimit: { perSecond: 0.2, burst: 2 } });
    await client.listCouriers();
    await client.listCouriers();
    const e = await shippingError(client.listCouriers());
    // No token left and 0.2 tokens/s: the next one is ~5 s away.
    expect(e).toMatchObject({ kind: 'rate_limited', retryable: true, status: 429, retryAfterSeconds: 5, code: 'RATE_LIMITED' });
    // Another account has its own bucket.
    const theirs = newClient(other);
    await expect(theirs.listCouriers()).resolves.toHaveLength(4);
    expect(api.stats().requests['GET /couriers']).toEqual({ '200': 3, '429': 1 });
  });

  it('Retry-After is at least 1 and the bucket refills', async () => {
    api.setFaults({ rateLimit: { perSecond: 2, burst: 1 } });
    await client.listCouriers();
    const e = await shippingError(client.listCouriers());
    expect(e.retryAfterSeconds).toBe(1); // ~0.5 s until the next token, rounded up
    await new Promise((r) => setTimeout(r, 600)); // 2/s: one token per 500 ms
    await expect(client.listCouriers()).resolves.toHaveLength(4);
  });

  it('a limiter that counts refused calls too: a 429 spends a token, so calls inside its Retry-After push the next token back', async () => {
    api.setFaults({ rateLimit: { perSecond: 2, burst: 1, refusedTakesToken: true } });
    await client.listCouriers();
    // Two refused calls right away: the bucket goes to -2 tokens, 1.5 s from the next one.
    expect((await shippingError(client.listCouriers())).retryAfterSeconds).toBe(1);
    expect((await shippingError(client.listCouriers())).retryAfterSeconds).toBe(1);
    await new Promise((r) => setTimeout(r, 600)); // a token's refill: still short of one
    expect((await shippingError(client.listCouriers())).retryAfterSeconds).toBe(1);
    // The same wait after one refusal only, without the charge: a token is there.
    api.setFaults({ rateLimit: { perSecond: 2, burst: 1 } });
    await client.listCouriers();
    await shippingError(client.listCouriers());
    await new Promise((r) => setTimeout(r, 600));
    await expect(client.listCouriers()).resolves.toHaveLength(4);
  });

  it('a sliding window: at most perSecond calls in any second, nothing saved up, Retry-After until it has room', async () => {
    api.setFaults({ rateLimit: { perSecond: 2, kind: 'window' } });
    const sleepUntil = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms - Date.now())));
    await client.listCouriers();
    const first = Date.now(); // the first call reached the API before this
    await sleepUntil(first + 500);
    await client.listCouriers();
    // A bucket of 2 a second would have a token again by now; the window counts both calls.
    expect((await shippingError(client.listCouriers())).retryAfterSeconds).toBe(1);
    // Once the first call has left the window, one more fits, and only one (the second is in it).
    await sleepUntil(first + 1050);
    await expect(client.listCouriers()).resolves.toHaveLength(4);
    expect((await shippingError(client.listCouriers())).kind).toBe('rate_limited');
    // Each account has its own window.
    await expect(newClient(other).listCouriers()).resolves.toHaveLength(4);
    // A window counts whole calls, and has no burst; a bucket needs one.
    expect(() => api.setFaults({ rateLimit: { perSecond: 2.5, kind: 'window' } })).toThrow(
      /rateLimit\.perSecond: a window counts whole calls/,
    );
    expect(() => api.setFaults({ rateLimit: { perSecond: 2, burst: 2, kind: 'window' } })).toThrow(/rateLimit\.burst: a window has none/);
    expect(() => api.setFaults({ rateLimit: { perSecond: 2 } })).toThrow(/rateLimit\.burst: a bucket needs its size/);
  });

  it('endpoints restricts faults to the listed endpoint keys', async () => {
    api.setFaults({ rateLimit: { perSecond: 0.1, burst: 1 }, endpoints: ['GET /products'] });
    await client.listProducts('ups');
    expect((await shippingError(client.listProducts('ups'))).kind).toBe('rate_limited');
    for (let i = 0; i < 5; i += 1) await expect(client.listCouriers()).resolves.toHaveLength(4);
  });
});

describe('server errors', () => {
  it('serverErrorRate 1: every request is a retryable server_error, and nothing is created', async () => {
    api.setFaults({ serverErrorRate: 1 });
    for (const call of [client.listCouriers(), client.createLabel(sampleLabelRequest()), client.getTracking('x')]) {
      expect(await shippingError(call)).toMatchObject({ kind: 'server_error', retryable: true, status: 500 });
    }
    expect(api.stats()).toMatchObject({ labelsCreated: 0, requests: { 'POST /labels': { '500': 1 } } });
  });
});

describe('hangs, latency and abort', () => {
  it('hang: the label is created but never answered; a short headersTimeout gives network, and a replay finds the label', async () => {
    const impatient = newClient(main, { headersTimeoutMs: 200 });
    api.setFaults({ hangRate: 1, endpoints: ['POST /labels'] });
    const request = sampleLabelRequest();
    const started = Date.now();
    const e = await shippingError(impatient.createLabel(request));
    expect(e).toMatchObject({ kind: 'network', retryable: true, operation: 'createLabel' });
    // undici checks headersTimeout with a ~0.5-1 s resolution timer.
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(api.stats().requests['POST /labels']).toEqual({ hang: 1 });
    const created = api.labels().filter((l) => l.idempotencyKey === request.idempotencyKey);
    expect(created).toHaveLength(1);

    // The retry with the same key returns the label whose answer was lost.
    api.setFaults({ hangRate: 0 });
    const replay = await client.createLabel(request);
    expect(replay.id).toBe(created[0]!.id);
    expect(api.stats()).toMatchObject({ labelsCreated: 1, idempotentReplays: 1 });
  });

  it('latency is added after the state changed: a client that gives up loses the answer, not the label', async () => {
    api.setFaults({ latencyMs: 1_000 });
    const request = sampleLabelRequest();
    const started = Date.now();
    const e = await shippingError(client.createLabel(request, { signal: AbortSignal.timeout(150) }));
    expect(e.kind).toBe('network');
    expect(Date.now() - started).toBeLessThan(900);
    // The label already exists although its answer is still being delayed.
    expect(api.labels().filter((l) => l.idempotencyKey === request.idempotencyKey)).toHaveLength(1);

    api.setFaults({ latencyMs: 100 });
    const t0 = Date.now();
    await client.listCouriers();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    // The lost answer is counted when its delay ends: let it end here, not in a later test's stats.
    while (api.stats().requests['POST /labels']?.['201'] !== 1) await new Promise((r) => setTimeout(r, 50));
  });

  it('an AbortSignal ends a hanging call quickly with kind network', async () => {
    api.setFaults({ hangRate: 1 });
    const started = Date.now();
    const e = await shippingError(client.listCouriers({ signal: AbortSignal.timeout(150) }));
    expect(e).toMatchObject({ kind: 'network', retryable: true, operation: 'listCouriers' });
    expect(Date.now() - started).toBeLessThan(1_000);

    const controller = new AbortController();
    const pending = client.getTracking('anything', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect((await shippingError(pending)).kind).toBe('network');
  });
});

describe('malformed bodies', () => {
  it('each endpoint breaks a documented field; the client names it in a contract_violation', async () => {
    const label = await client.createLabel(sampleLabelRequest());
    api.setFaults({ malformedRate: 1 });
    const cases: Array<[Promise<unknown>, string]> = [
      [client.createLabel(sampleLabelRequest()), 'id'],
      [client.getOrder(label.id), 'order.createdAt'],
      [client.getTracking(label.id), 'checkpoints'],
      [client.listCouriers(), 'couriers'],
      [client.listProducts('postnl'), 'products'],
    ];
    for (const [call, path] of cases) {
      const e = await shippingError(call);
      expect(e).toMatchObject({ kind: 'contract_violation', retryable: false, path });
      expect(e.message).toContain(path);
    }
    // GET /labels/{id} is not validated by the client (payload not in the spec): the broken id passes through.
    expect(await client.getLabel(label.id)).toMatchObject({ id: 12345 });
    // Only 2xx answers are malformed: errors keep their shape.
    expect((await shippingError(client.getOrder('0b9e8f2a-1c3d-4e5f-8a9b-0c1d2e3f4a5b'))).kind).toBe('not_found');
  });
});

describe('concurrent idempotency', () => {
  it('50 identical requests in parallel create exactly one label', async () => {
    const wide = newClient(main, { connections: 50 });
    const request = sampleLabelRequest();
    const results = await Promise.all(Array.from({ length: 50 }, () => wide.createLabel(request)));
    const ids = new Set(results.map((r) => r.id));
    expect(ids.size).toBe(1);
    expect(api.labels().filter((l) => l.idempotencyKey === request.idempotencyKey)).toHaveLength(1);
    expect(api.stats()).toMatchObject({
      labelsCreated: 1,
      idempotentReplays: 49,
      idempotencyPayloadMismatches: 0,
      requests: { 'POST /labels': { '201': 1, '200': 49 } },
    });
  });
});
