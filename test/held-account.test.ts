/**
 * A shipment whose first attempt meets a 429 (its account held), through a real worker on the
 * dev server and the fake over HTTP: it goes on at once as the regular activity, which waits the
 * Retry-After (in its slot when short; a long one on the server, its slot given back), so it
 * costs no timer and no workflow task more than a shipment the API answered at once. The label
 * is made exactly once, and nothing is sent inside the Retry-After.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { labelIdempotencyKey } from '../activities/shipping-api';
import { startShipment } from '../order-import/start-shipment';
import type { ShipmentOutcome } from '../workflow-definitions/shipment';
import { saveFixture } from './helpers/fixtures';
import { startHarness, type Harness } from './helpers/harness';
import { order } from './helpers/orders';

const EventType = temporal.api.enums.v1.EventType;
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

/** The workflow tasks and timers of the history before the call's regular activity was scheduled. */
async function beforeRegularAttempt(handle: WorkflowHandle, activity: string) {
  const events = (await handle.fetchHistory()).events ?? [];
  const at = events.findIndex((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity);
  expect(at).toBeGreaterThan(0);
  const before = events.slice(0, at);
  const started = events.slice(at).find((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED);
  return {
    workflowTasks: before.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED).length,
    timers: before.filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED).length,
    attempt: started?.activityTaskStartedEventAttributes?.attempt,
  };
}

const CASES: Array<{ endpoint: 'POST /labels' | 'GET /orders'; activity: string; retryAfter: number; attempt: number; fixture?: string }> =
  [
    { endpoint: 'POST /labels', activity: 'createLabel', retryAfter: 3, attempt: 1 },
    // Longer than an attempt waits in its slot: the first regular attempt gives it back unsent.
    { endpoint: 'POST /labels', activity: 'createLabel', retryAfter: 12, attempt: 2, fixture: 'held-account-first-attempt-429' },
    { endpoint: 'GET /orders', activity: 'readOrder', retryAfter: 3, attempt: 1 },
  ];

it.each(CASES)(
  'a first attempt answered 429 ($endpoint, Retry-After $retryAfter s) goes straight to the regular activity, which waits it: no timer, no extra workflow task',
  async ({ endpoint, activity, retryAfter, attempt, fixture }) => {
    const orderId = `HELD-${activity}-${retryAfter}`;
    h.fake.setFaults({ failNext: [{ endpoint, status: 429, retryAfter: String(retryAfter) }] });
    const started = await startShipment(h.env.client, h.taskQueue, order('acme', orderId));
    const handle = h.env.client.workflow.getHandle(started.workflowId);
    const outcome: ShipmentOutcome = await handle.result();
    expect(outcome).toMatchObject({ orderId, outcome: 'delivered' });

    const key = labelIdempotencyKey({ shop: 'acme', orderId, revision: 1 });
    const label = h.fake.labels().filter((l) => l.idempotencyKey === key);
    expect(label).toHaveLength(1);
    const calls = h.fake
      .requestLog()
      .filter((r) => r.endpoint === endpoint && (r.idempotencyKey === key || r.id === label[0]!.id))
      .map((r) => ({ at: r.at, status: r.status }));
    // The 429, then the next call of the same request only once its Retry-After has passed.
    expect(calls.map((c) => c.status)).toEqual([429, endpoint === 'POST /labels' ? 201 : 200]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(retryAfter * 1000 - 250);

    // One workflow task (the first, whose first attempt met the 429) and no timer before the
    // regular activity: the Retry-After is the activity's to wait.
    expect(await beforeRegularAttempt(handle, activity)).toEqual({ workflowTasks: 1, timers: 0, attempt });
    if (fixture) await saveFixture(handle, fixture);
  },
  60_000,
);
