/**
 * The activities against the fake API over loopback, in the SDK's mock activity context:
 * cancellation aborts the HTTP call, and API errors become the Temporal failures the retry
 * policy acts on.
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createActivities, labelIdempotencyKey, type CreatedLabel } from '../activities/shipping-api';
import { AccountPacer, pacedCalls } from '../pacing/account-pacer';
import { ACCOUNT_HELD, PACED_BY_ACCOUNT, type FailureDetails } from '../workflow-definitions/activity-failures';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { ShippingApiClient } from '../shipping-api/client';
import { DEFAULT_TRACKING_POLICY } from '../domain/shipment';
import { TEST_CREDENTIALS } from './helpers/harness';
import { labelRequest } from './helpers/orders';
import { waitFor } from './helpers/wait';
import { installQuietRuntime } from './helpers/temporal-env';

let fake: FakeShippingApi;
let api: ShippingApiClient;
let activities: ReturnType<typeof createActivities>;

beforeAll(async () => {
  installQuietRuntime();
  fake = await startFakeShippingApi({ port: 0, trackingStepMs: 60_000, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
  // Timeouts far beyond the test's own: only the cancellation can end a hanging call in time.
  api = new ShippingApiClient({ baseUrl: fake.baseUrl, ...TEST_CREDENTIALS, headersTimeoutMs: 120_000, bodyTimeoutMs: 120_000 });
  activities = createActivities(api, DEFAULT_TRACKING_POLICY);
});
afterAll(async () => {
  await fake?.close(); // first: it ends any request still hanging, which api.close() would wait for
  await api?.close();
});

it('cancelling the activity aborts its hanging HTTP request and reports the cancellation', async () => {
  const env = activityEnv({ heartbeatTimeoutMs: 3_000 });
  fake.setFaults({ hangRate: 1, endpoints: ['GET /tracking'] });
  const hanging = () => fake.stats().requests['GET /tracking']?.hang ?? 0;
  const before = hanging();
  try {
    const running = env.run(activities.getTracking, '3b0ad3f6-27d4-4d5e-9b0e-1b0f8f0b7a11');
    await waitFor(() => (hanging() === before + 1 ? true : undefined), { what: 'the request to hang' });
    env.cancel();
    // The client's own timeouts are 120 s: settling within the test's 10 s needs the abort.
    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
  } finally {
    fake.setFaults({ hangRate: 0, endpoints: null });
  }
}, 10_000);

it('turns a 429 into a retryable failure whose next attempt waits exactly Retry-After', async () => {
  fake.setFaults({ failNext: [{ endpoint: 'POST /labels', status: 429, retryAfter: '7' }] });
  const err = await activityEnv()
    .run(activities.createLabel, { shop: 'acme', orderId: 'U-1', revision: 1, labelRequest: labelRequest('U-1') })
    .catch((e: ApplicationFailure) => e);
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect(err).toMatchObject({ type: 'RateLimited', nonRetryable: false, nextRetryDelay: 7_000, category: 'BENIGN' });
  expect(detailsOf(err)).toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 7, idempotencyKey: 'acme:U-1:r1' });
});

it('retries a malformed answer to an idempotent call a bounded number of times, then it stands', async () => {
  fake.setFaults({ malformedRate: 1, endpoints: ['POST /labels'] });
  try {
    const input = { shop: 'acme', orderId: 'U-9', revision: 1, labelRequest: labelRequest('U-9') };
    // Each attempt reads the failures in a row from the last one's heartbeat, as the server hands them over.
    const failures: ApplicationFailure[] = [];
    let details: unknown;
    for (let attempt = 1; attempt <= 4; attempt++) {
      const env = activityEnv({ attempt, heartbeatDetails: details });
      env.on('heartbeat', (d: unknown) => (details = d));
      failures.push((await env.run(activities.createLabel, input).catch((e: unknown) => e)) as ApplicationFailure);
    }
    expect(failures[0]).toMatchObject({ type: 'ContractViolation', nonRetryable: false });
    expect(detailsOf(failures[0])).toMatchObject({ kind: 'contract_violation', retryable: true });
    expect(failures[2]).toMatchObject({ type: 'ContractViolation', nonRetryable: false });
    expect(failures[3]).toMatchObject({ type: 'ContractViolation', nonRetryable: true });
    expect(detailsOf(failures[3])).toMatchObject({ kind: 'contract_violation', retryable: false });
  } finally {
    fake.setFaults({ malformedRate: 0, endpoints: null });
  }
});

it('backs off by the API failures in a row, not by attempts lost with a killed worker', async () => {
  const input = { shop: 'acme', orderId: 'U-5XX', revision: 1, labelRequest: labelRequest('U-5XX') };
  const attemptFailing = async (attempt: number, heartbeatDetails: unknown) => {
    fake.setFaults({ failNext: [{ endpoint: 'POST /labels', status: 503 }] });
    const env = activityEnv({ attempt, heartbeatDetails });
    let recorded: unknown;
    env.on('heartbeat', (d: unknown) => (recorded = d));
    const failure = await env.run(activities.createLabel, input).catch((e: ApplicationFailure) => e);
    return { failure, recorded: recorded as { failuresInARow?: number } };
  };
  const first = await attemptFailing(1, undefined);
  expect(first.failure).toMatchObject({ type: 'ServerError', nonRetryable: false, nextRetryDelay: 1_000 });
  expect(first.recorded).toMatchObject({ failuresInARow: 1 });
  // Attempts 2..8 were lost with their workers (no answer, nothing recorded): attempt 9 is the
  // second API failure, so 2 s, where the attempt number alone would have meant minutes.
  const ninth = await attemptFailing(9, first.recorded);
  expect(ninth.failure).toMatchObject({ nextRetryDelay: 2_000 });
  expect(ninth.recorded).toMatchObject({ failuresInARow: 2 });
  // The 10th failure in a row reaches the 5-minute cap and is the last one recorded: past it a
  // long outage's attempts send no heartbeat (a billed action each) and stay at the cap.
  const tenth = await attemptFailing(20, { failuresInARow: 9 });
  expect(tenth.failure).toMatchObject({ nextRetryDelay: 300_000 });
  expect(tenth.recorded).toMatchObject({ failuresInARow: 10 });
  const late = await attemptFailing(30, tenth.recorded);
  expect(late.failure).toMatchObject({ nextRetryDelay: 300_000 });
  expect(late.recorded).toBeUndefined();
  // A 429 in the streak waits its Retry-After and keeps the count.
  fake.setFaults({ failNext: [{ endpoint: 'POST /labels', status: 429, retryAfter: '3' }] });
  const env = activityEnv({ attempt: 10, heartbeatDetails: ninth.recorded });
  let recorded: unknown;
  env.on('heartbeat', (d: unknown) => (recorded = d));
  expect(await env.run(activities.createLabel, input).catch((e) => e)).toMatchObject({ type: 'RateLimited', nextRetryDelay: 3_000 });
  expect(recorded).toMatchObject({ failuresInARow: 2 });
});

it('a failing tracking poll backs off up to its poll interval and records its failures only until it gets there', async () => {
  const created = (await activityEnv().run(activities.createLabel, {
    shop: 'acme',
    orderId: 'U-POLL',
    revision: 1,
    labelRequest: labelRequest('U-POLL'),
  })) as CreatedLabel;
  const known = { tag: null, subtag: null, trackingNumber: null, checkpoints: 0, lastCheckpointTime: null };
  const poll = async (heartbeatDetails: unknown) => {
    fake.setFaults({ failNext: [{ endpoint: 'GET /tracking', status: 500 }] });
    const env = activityEnv({ attempt: 9, heartbeatDetails, heartbeatTimeoutMs: 10_000 });
    let recorded: unknown;
    env.on('heartbeat', (d: unknown) => (recorded = d));
    const failure = await env
      .run(activities.awaitTrackingChange, { labelId: created.labelId, known, pollIntervalMs: 4_000 })
      .catch((e) => e);
    return { failure, recorded: recorded as { failuresInARow?: number; lastResult?: string } | undefined };
  };
  // 1 s, 2 s, 4 s: the third failure reaches the 4 s poll interval; the fourth is still recorded
  // (a broken answer is asked again 3 times, and that count must go on), the fifth is not.
  const third = await poll({ failuresInARow: 2 });
  expect(third.failure).toMatchObject({ type: 'ServerError', nextRetryDelay: 4_000 });
  expect(third.recorded).toMatchObject({ failuresInARow: 3, lastResult: expect.stringContaining('server_error') });
  const fourth = await poll(third.recorded);
  expect(fourth.recorded).toMatchObject({ failuresInARow: 4 });
  const fifth = await poll(fourth.recorded);
  expect(fifth.failure).toMatchObject({ type: 'ServerError', nextRetryDelay: 4_000, message: expect.stringContaining('poll #9') });
  expect(fifth.recorded).toBeUndefined();
});

it('numbers a poll over the whole shipment, as the details panel and status count polls', async () => {
  const created = (await activityEnv().run(activities.createLabel, {
    shop: 'acme',
    orderId: 'U-NUMBER',
    revision: 1,
    labelRequest: labelRequest('U-NUMBER'),
  })) as CreatedLabel;
  const known = { tag: null, subtag: null, trackingNumber: null, checkpoints: 0, lastCheckpointTime: null };
  // The fifth poll of this wait, after 32 polls before it: the Web UI's last failure says #37.
  const unchanged = await activityEnv({ attempt: 5 })
    .run(activities.awaitTrackingChange, { labelId: created.labelId, known, pollIntervalMs: 4_000, pollsBefore: 32 })
    .catch((e) => e);
  expect(unchanged).toMatchObject({ type: 'TrackingUnchanged', message: expect.stringMatching(/^poll #37 at /) });
});

it('turns a courier rejection into a non-retryable failure carrying the carrier wording, logged at info (the shipment says what comes next)', async () => {
  const entries: Array<{ level: string; message: string }> = [];
  const err = await new MockActivityEnvironment(
    {},
    { logger: new DefaultLogger('INFO', ({ level, message }) => void entries.push({ level, message })) },
  )
    .run(activities.createLabel, { shop: 'acme', orderId: 'U-2', revision: 1, labelRequest: labelRequest('U-2', { postalCode: '00000' }) })
    .catch((e: ApplicationFailure) => e);
  expect(err).toMatchObject({ type: 'CourierError', nonRetryable: true });
  expect(detailsOf(err)).toMatchObject({ kind: 'courier_error', courierCode: 'COURIER_ERROR' });
  expect(detailsOf(err).courierMessage).toContain('00000');
  // An expected outcome: the workflow's one WARN line ("label rejected: waiting for corrected label data") is the one to act on.
  expect(entries.filter((e) => e.message === 'shipping API call failed').map((e) => e.level)).toEqual(['INFO']);
});

it('reads a tracking 404 as "not registered yet", not as an error', async () => {
  const label: CreatedLabel = await activityEnv().run(activities.createLabel, {
    shop: 'acme',
    orderId: 'U-3',
    revision: 1,
    labelRequest: labelRequest('U-3'),
  });
  // The fake answers 404 during the first tracking step (60 s here).
  expect(await activityEnv().run(activities.getTracking, label.labelId)).toBeNull();
});

it('keeps idempotency keys within 100 characters and distinct per order and revision', () => {
  expect(labelIdempotencyKey({ shop: 'acme', orderId: 'A/1', revision: 2 })).toBe('acme:A%2F1:r2');
  const long = labelIdempotencyKey({ shop: 's'.repeat(150), orderId: 'o', revision: 1 });
  expect(long).toMatch(/^sha256-[0-9a-f]{64}:r1$/);
  expect(labelIdempotencyKey({ shop: 's'.repeat(150), orderId: 'p', revision: 1 })).not.toBe(long);
  // Separators cannot make two orders collide.
  expect(labelIdempotencyKey({ shop: 'a:b', orderId: 'c', revision: 1 })).not.toBe(
    labelIdempotencyKey({ shop: 'a', orderId: 'b:c', revision: 1 }),
  );
});

function detailsOf(err: unknown): FailureDetails {
  return (err as ApplicationFailure).details?.[0] as FailureDetails;
}

/** The SDK's activity context, with activity logs below WARN kept out of the test output. */
it("records a 429's Retry-After in the attempt's heartbeat, and the next attempt waits for it even when dispatched early", async () => {
  fake.setFaults({ failNext: [{ endpoint: 'POST /labels', status: 429, retryAfter: '2' }] });
  const first = activityEnv();
  const heartbeats: unknown[] = [];
  first.on('heartbeat', (d: unknown) => heartbeats.push(d));
  const input = { shop: 'acme', orderId: 'U-RA', revision: 1, labelRequest: labelRequest('U-RA') };
  const limitedAt = Date.now();
  await expect(first.run(activities.createLabel, input)).rejects.toMatchObject({ type: 'RateLimited' });
  const notBefore = (heartbeats.at(-1) as { notBefore?: number } | undefined)?.notBefore;
  expect(notBefore).toBeGreaterThanOrEqual(limitedAt + 2000);
  expect(notBefore).toBeLessThanOrEqual(Date.now() + 2000);

  // The server hands the retry out at once (as it can right after a restart): the attempt waits.
  const second = activityEnv({ attempt: 2, heartbeatDetails: { notBefore }, heartbeatTimeoutMs: 10_000 });
  const label = (await second.run(activities.createLabel, input)) as CreatedLabel;
  const sent = fake
    .requestLog()
    .filter((r) => r.endpoint === 'POST /labels' && r.status !== 429)
    .at(-1)!;
  expect(sent.at).toBeGreaterThanOrEqual(notBefore! - 5);
  expect(label.idempotencyKey).toBe('acme:U-RA:r1');
}, 15_000);

it('a first attempt (local activity) that gets no turn under the pace within 2 s gives up unsent; a regular attempt waits', async () => {
  const pacer = new AccountPacer({ initialRate: 100 });
  const paced = createActivities(api, DEFAULT_TRACKING_POLICY, {
    pacing: pacedCalls(pacer, { rateLimitOf: () => null, answered: () => true }),
  });
  const input = { shop: 'acme', orderId: 'U-PACE', revision: 1, labelRequest: labelRequest('U-PACE') };
  const sentFor = () => fake.requestLog().filter((r) => r.endpoint === 'POST /labels' && r.customerOrderNumber === 'U-PACE').length;
  pacer.holdUntil(Date.now() + 60_000);
  const first = await activityEnv({ isLocal: true })
    .run(paced.createLabel, input)
    .catch((e: unknown) => e);
  // Held for far longer than its 2 s: it gives up at once, not after holding the workflow task 2 s.
  expect(first).toMatchObject({ type: PACED_BY_ACCOUNT, category: 'BENIGN', message: expect.stringMatching(/held by a Retry-After/) });
  expect(sentFor()).toBe(0);
  const regular = new AccountPacer({ initialRate: 100 });
  regular.holdUntil(Date.now() + 2_500);
  const waiting = createActivities(api, DEFAULT_TRACKING_POLICY, {
    pacing: pacedCalls(regular, { rateLimitOf: () => null, answered: () => true }),
  });
  const label = (await activityEnv({ heartbeatTimeoutMs: 10_000 }).run(waiting.createLabel, input)) as CreatedLabel;
  expect(label.idempotencyKey).toBe('acme:U-PACE:r1');
  expect(sentFor()).toBe(1);
}, 15_000);

it('a regular attempt under a hold longer than 10 s gives its worker slot back unsent, retried by the server when the hold ends', async () => {
  const pacer = new AccountPacer({ initialRate: 100 });
  const paced = createActivities(api, DEFAULT_TRACKING_POLICY, {
    pacing: pacedCalls(pacer, { rateLimitOf: () => null, answered: () => true }),
  });
  const input = { shop: 'acme', orderId: 'U-HELD', revision: 1, labelRequest: labelRequest('U-HELD') };
  const sentFor = () => fake.requestLog().filter((r) => r.endpoint === 'POST /labels' && r.customerOrderNumber === 'U-HELD').length;
  const until = Date.now() + 60_000;
  pacer.holdUntil(until);
  const env = activityEnv({ heartbeatTimeoutMs: 10_000 });
  const heartbeats: unknown[] = [];
  env.on('heartbeat', (d: unknown) => heartbeats.push(d));
  const failure = (await env.run(paced.createLabel, input).catch((e: unknown) => e)) as ApplicationFailure;
  expect(failure).toMatchObject({ type: ACCOUNT_HELD, category: 'BENIGN', nonRetryable: false });
  expect(Number(failure.nextRetryDelay)).toBeGreaterThan(55_000);
  expect(Number(failure.nextRetryDelay)).toBeLessThanOrEqual(60_000);
  // The next attempt, should the server hand it out early, still waits for the hold's end.
  expect(heartbeats.at(-1)).toMatchObject({ notBefore: until });
  expect(sentFor()).toBe(0);
}, 15_000);

function activityEnv(info: ConstructorParameters<typeof MockActivityEnvironment>[0] = {}): MockActivityEnvironment {
  return new MockActivityEnvironment(info, { logger: new DefaultLogger('WARN') });
}
