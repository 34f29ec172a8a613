/**
 * The shipment workflow on a real Temporal dev server, talking real HTTP to the fake API.
 * `npm run fixtures:record` records the replay fixtures from these runs (and the other suites').
 */
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShipment } from '../order-import/start-shipment';
import { cancelShipmentSignal, resubmitLabelUpdate, SA, stateQuery, type ShipmentOutcome } from '../workflows/definitions';
import { shipmentWorkflowId, type ShipmentInput } from '../domain/shipment';
import { extraWorker, startHarness, TEST_CREDENTIALS, type Harness } from './helpers/harness';
import { labelRequest, order } from './helpers/orders';
import { saveFixture } from './helpers/fixtures';
import { waitFor } from './helpers/wait';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

async function start(input: ShipmentInput): Promise<WorkflowHandle> {
  const started = await startShipment(h.env.client, h.taskQueue, input);
  expect(started.status).toBe('started');
  return h.env.client.workflow.getHandle(started.workflowId);
}

/** History as recorded by the server; also saved as a replay fixture when recording (test/helpers/fixtures.ts). */
async function history(handle: WorkflowHandle, fixtureName: string): Promise<string> {
  await saveFixture(handle, fixtureName);
  return historyToJSON(await handle.fetchHistory());
}

function labelsOf(orderId: string) {
  return h.fake.labels().filter((l) => l.idempotencyKey.includes(`:${encodeURIComponent(orderId)}:`));
}

describe('shipment workflow', () => {
  it.each([
    ['delivered', undefined, 'Delivered'],
    ['exception', 'EXCEPTION', 'Exception'],
    ['cancelled', 'CANCEL', 'Cancelled'],
  ] as const)('follows tracking to the terminal tag: %s', async (outcome, marker, tag) => {
    const orderId = `T-${outcome}`;
    const handle = await start(order('acme', orderId, { marker }));
    const result: ShipmentOutcome = await handle.result();

    expect(result).toMatchObject({ shop: 'acme', orderId, outcome, tag });
    expect(result.labelId).toMatch(/^[0-9a-f-]{36}$/);
    // The fake assigns a tracking number only after the first stages: proves nulls were tolerated.
    expect(result.trackingNumber).toEqual(expect.any(String));
    expect(result.lastCheckpoint?.tag).toBe(tag);
    expect(labelsOf(orderId)).toHaveLength(1);

    const recorded = await history(handle, `terminal-${outcome}`);
    expect(recorded).not.toContain(TEST_CREDENTIALS.apiKey);
    expect(recorded).not.toContain(TEST_CREDENTIALS.apiToken);
  });

  it('derives the idempotencyKey from the order and shows state, search attributes and summary', async () => {
    const handle = await start(order('acme', 'Q-1'));
    await handle.result();
    const state = await handle.query(stateQuery);
    expect(state).toMatchObject({
      phase: 'completed',
      outcome: 'delivered',
      revision: 1,
      idempotencyKey: 'acme:Q-1:r1',
      courier: 'dhl-express',
      tag: 'Delivered',
    });
    expect(state.attempts.labelRequests).toBe(1);
    // Every poll the fake answered for this label is counted (how many depends on the machine's pace).
    const polls = h.fake.requestLog().filter((r) => r.endpoint === 'GET /tracking' && r.id === state.labelId).length;
    expect(polls).toBeGreaterThanOrEqual(1);
    expect(state.attempts.trackingPolls).toBe(polls);
    expect(h.fake.labels().find((l) => l.idempotencyKey === 'acme:Q-1:r1')?.id).toBe(state.labelId);

    const described = await handle.describe();
    const sa = described.typedSearchAttributes;
    expect(sa.get(SA.shop)).toBe('acme');
    expect(sa.get(SA.orderId)).toBe('Q-1');
    expect(sa.get(SA.courier)).toBe('dhl-express');
    expect(sa.get(SA.status)).toBe('delivered');
    expect(sa.get(SA.trackingTag)).toBe('Delivered');
    expect(sa.get(SA.trackingNumber)).toBe(state.trackingNumber);
    expect(await described.staticSummary()).toContain('Order Q-1 of acme');
    expect(await described.staticDetails()).toContain('| Courier | dhl-express |');

    // Visibility is eventually consistent: the list finds it by its attributes shortly after.
    const query = `ShipmentShop = "acme" AND ShipmentOrderId = "Q-1" AND ShipmentStatus = "delivered"`;
    const found = await waitFor(
      async () => {
        for await (const wf of h.env.client.workflow.list({ query })) return wf.workflowId;
        return undefined;
      },
      { what: 'visibility', timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(found).toBe(shipmentWorkflowId({ shop: 'acme', orderId: 'Q-1' }));
    await history(handle, 'delivered-with-queries');
  });

  it('waits exactly Retry-After after a 429 before the next attempt', async () => {
    h.fake.setFaults({ failNext: [{ endpoint: 'POST /labels', status: 429, retryAfter: '3' }] });
    const before = h.fake.stats().requests['POST /labels']?.['429'] ?? 0;
    const startedAt = Date.now();
    const handle = await start(order('acme', 'R-429'));
    await handle.result();
    const [label] = labelsOf('R-429');
    expect(h.fake.stats().requests['POST /labels']?.['429']).toBe(before + 1);
    // Backoff alone would have retried after 1 s; Retry-After said 3 s.
    expect(Date.parse(label!.createdAt) - startedAt).toBeGreaterThanOrEqual(3_000);
    expect(labelsOf('R-429')).toHaveLength(1);
    await history(handle, 'rate-limited');
  });

  it('survives a storm of 5xx on label creation and creates one label', async () => {
    h.fake.setFaults({
      failNext: [
        { endpoint: 'POST /labels', status: 500 },
        { endpoint: 'POST /labels', status: 503 },
        { endpoint: 'POST /labels', status: 502 },
      ],
    });
    const handle = await start(order('acme', 'S-5xx'));
    const result = await handle.result();
    expect(result.outcome).toBe('delivered');
    expect(labelsOf('S-5xx')).toHaveLength(1);
    expect(h.fake.stats().labelsCreated).toBeGreaterThan(0);
    // The local first attempt (500), then the activity: 503 waits 1 s, 502 waits 2 s. The 2 s
    // holds only if the failure count reached the next attempt through the server's heartbeat
    // details (the retry policy's own backoff is no longer what spaces API failures).
    const sent = h.fake.requestLog().filter((r) => r.endpoint === 'POST /labels' && r.idempotencyKey === 'acme:S-5xx:r1');
    expect(sent.map((r) => r.status)).toEqual([500, 503, 502, 201]);
    expect(sent[2]!.receivedAt - sent[1]!.at).toBeGreaterThanOrEqual(950);
    expect(sent[3]!.receivedAt - sent[2]!.at).toBeGreaterThanOrEqual(1_900);
    await history(handle, 'server-errors');
  });

  it('waits for corrected label data after a courier rejection, and creates the label under a new key', async () => {
    const handle = await start(order('acme', 'C-1', { postalCode: '00000' }));
    const waiting = await waitFor(
      async () => {
        const s = await handle.query(stateQuery);
        return s.phase === 'awaiting_correction' ? s : undefined;
      },
      { what: 'awaiting_correction', timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(waiting.lastError).toMatchObject({ kind: 'courier_error', courierCode: 'COURIER_ERROR' });
    expect(waiting.lastError?.courierMessage).toContain('00000');
    expect(waiting.idempotencyKey).toBe('acme:C-1:r1');
    expect((await handle.describe()).typedSearchAttributes.get(SA.status)).toBe('awaiting_correction');

    // Data that is not even an object is refused before anything is written to history.
    const refused = await handle.executeUpdate(resubmitLabelUpdate, { args: [{ labelRequest: 'nonsense' as never }] }).catch((e) => e);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String(refused.cause?.message)).toContain('labelRequest: must be an object');

    // Data that breaks the contract is caught field by field before it is sent (the CLI checks
    // it first too), and the shipment waits for corrected data again: nothing is lost.
    const bad = labelRequest('C-1') as Record<string, unknown>;
    delete (bad.service as Record<string, unknown>).productCode;
    const invalid = await handle.executeUpdate(resubmitLabelUpdate, { args: [{ labelRequest: bad as never }] });
    expect(invalid).toMatchObject({ revision: 2, labelCreated: false, error: { kind: 'validation' } });
    expect(invalid.error?.fields?.map((f) => f.field)).toContain('service.productCode');
    expect((await handle.query(stateQuery)).phase).toBe('awaiting_correction');

    const resubmitted = await handle.executeUpdate(resubmitLabelUpdate, {
      args: [{ labelRequest: labelRequest('C-1', { postalCode: '20095' }), reason: 'postal code fixed' }],
    });
    expect(resubmitted).toMatchObject({ revision: 3, labelCreated: true, idempotencyKey: 'acme:C-1:r3', error: null });

    const result = await handle.result();
    expect(result.outcome).toBe('delivered');
    expect(result.labelId).toBe(resubmitted.labelId);
    const labels = labelsOf('C-1');
    expect(labels.map((l) => [l.idempotencyKey, l.status])).toEqual([
      ['acme:C-1:r1', 'failed'],
      ['acme:C-1:r3', 'created'],
    ]);

    await history(handle, 'rejection-resubmit');
  });

  it('a resubmit racing an operator cancel gets its answer before the workflow completes', async () => {
    const handle = await start(order('acme', 'C-R', { postalCode: '00000' }));
    await waitFor(async () => ((await handle.query(stateQuery)).phase === 'awaiting_correction' ? true : undefined), {
      what: 'awaiting_correction',
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    // The corrected label takes a while to create: the cancel arrives while the update waits for it.
    h.fake.setFaults({ latencyMs: 1_500 });
    try {
      const update = handle.executeUpdate(resubmitLabelUpdate, { args: [{ labelRequest: labelRequest('C-R', { postalCode: '20095' }) }] });
      await new Promise((r) => setTimeout(r, 300));
      await handle.signal(cancelShipmentSignal, { reason: 'customer cancelled meanwhile' });
      const [answer, result] = await Promise.all([update, handle.result()]);
      expect(answer).toMatchObject({ revision: 2 });
      expect(result.outcome).toBe('cancelled_by_operator');
    } finally {
      h.fake.setFaults({ latencyMs: 0 });
    }
    // The update's completion is in the history, before the workflow's.
    const types = ((await handle.fetchHistory()).events ?? []).map((e) => e.eventType);
    const updateCompleted = types.lastIndexOf(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
    expect(updateCompleted).toBeGreaterThan(-1);
    expect(updateCompleted).toBeLessThan(types.indexOf(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED));
    await history(handle, 'resubmit-racing-cancel');
  });

  it('abandons a rejected label when no correction comes in time', async () => {
    const handle = await start(order('acme', 'C-2', { postalCode: '00000' }, { correctionTimeoutMs: 500 }));
    const result = await handle.result();
    expect(result).toMatchObject({ outcome: 'label_failed', labelId: null });
    expect(result.lastError?.courierCode).toBe('COURIER_ERROR');
    await history(handle, 'label-abandoned');
  });

  it('starting the same order twice makes one workflow and one label', async () => {
    const input = order('acme', 'D-1');
    const [first, second] = await Promise.all([
      startShipment(h.env.client, h.taskQueue, input),
      startShipment(h.env.client, h.taskQueue, input),
    ]);
    expect([first.status, second.status].sort()).toEqual(['already_known', 'started']);
    await h.env.client.workflow.getHandle(first.workflowId).result();
    // Finished workflows are not started again either (re-import).
    expect((await startShipment(h.env.client, h.taskQueue, input)).status).toBe('already_known');
    expect(labelsOf('D-1')).toHaveLength(1);
  });

  it('stops tracking on the operator cancel signal with its own outcome', async () => {
    const handle = await start(order('acme', 'X-1', { marker: 'STALL' }));
    await waitFor(async () => ((await handle.query(stateQuery)).phase === 'tracking' ? true : undefined), {
      what: 'tracking',
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    // Once the label exists, a resubmission is refused with the reason.
    const late = await handle.executeUpdate(resubmitLabelUpdate, { args: [{ labelRequest: labelRequest('X-1') }] }).catch((e) => e);
    expect(late).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String(late.cause?.message)).toContain('the shipment is tracking, not awaiting corrected label data');
    await handle.signal(cancelShipmentSignal, { reason: 'customer picked it up in store' });
    const result = await handle.result();
    expect(result).toMatchObject({ outcome: 'cancelled_by_operator', reason: 'customer picked it up in store' });
    expect(result.labelId).not.toBeNull();
    await history(handle, 'cancelled-by-operator');
  });

  it('treats a Temporal cancellation request (Web UI, temporal workflow cancel) as an operator stop', async () => {
    const handle = await start(order('acme', 'X-4', { marker: 'STALL' }));
    await waitFor(async () => ((await handle.query(stateQuery)).phase === 'tracking' ? true : undefined), {
      what: 'tracking',
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    await handle.cancel();
    const result = await handle.result();
    expect(result.outcome).toBe('cancelled_by_operator');
    const described = await handle.describe();
    expect(described.status.name).toBe('COMPLETED');
    expect(described.typedSearchAttributes.get(SA.status)).toBe('cancelled_by_operator');
    await history(handle, 'temporal-cancel-request');
  });

  it('ends with tracking_timed_out after the maximum tracking duration', async () => {
    const handle = await start(order('acme', 'X-2', { marker: 'STALL' }, { maxTrackingMs: 1_500 }));
    const result = await handle.result();
    expect(result.outcome).toBe('tracking_timed_out');
    expect(result.tag).toBe('InTransit');
  });

  it('continues as new before history grows large, carrying all state', async () => {
    const handle = await start(
      // Change-driven tracking writes a few events per change: a low bound makes the first change continue as new.
      order('acme', 'X-3', { marker: 'STALL' }, { pollIntervalMs: 50, historyEventLimit: 12, maxTrackingMs: 4_000 }),
    );
    const result = await handle.result();
    expect(result.outcome).toBe('tracking_timed_out');
    const state = await handle.query(stateQuery);
    expect(state.continuedAsNew).toBeGreaterThanOrEqual(1);
    expect(state.labelId).toBe(result.labelId);
    expect(state.idempotencyKey).toBe('acme:X-3:r1');
    expect(labelsOf('X-3')).toHaveLength(1);
    // The time limit counts from the first run's tracking start, not from each new run.
    expect(Date.parse(state.trackingStartedAt!)).toBeLessThan(Date.now() - 3_500);
    // The last run starts from the carried state: its history guards that state's format.
    await history(handle, 'continued-as-new');
  });

  it('fails at once with a typed error when the API refuses the credentials', async () => {
    const wrong = await extraWorker(h, { apiKey: 'not-a-key', apiToken: 'not-a-token' });
    try {
      const started = await startShipment(h.env.client, wrong.taskQueue, order('acme', 'A-401'));
      const err = await h.env.client.workflow
        .getHandle(started.workflowId)
        .result()
        .catch((e) => e);
      expect(err.cause?.type).toBe('ShipmentFailed');
      expect(err.cause?.message).toContain('HTTP 401');
      // The typed cause is in the chain (under an ActivityFailure when a regular activity made the call).
      const types: string[] = [];
      for (let c = err.cause; c; c = c.cause) types.push(c.type ?? c.name);
      expect(types).toContain('Unauthorized');
      // Not retried: exactly one request was refused.
      expect(labelsOf('A-401')).toHaveLength(0);
      await history(h.env.client.workflow.getHandle(started.workflowId), 'shipment-failed-unauthorized');
    } finally {
      await wrong.stop();
    }
  });
});
