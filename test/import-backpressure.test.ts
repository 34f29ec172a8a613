/**
 * The import's backpressure: starts wait while the workflow-task backlog is high, never for
 * good, and the backlog is read from a real dev server.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BacklogGate, workflowBacklogReader, type BacklogReading } from '../order-import/backlog-gate';
import { startShipment } from '../order-import/start-shipment';
import { order } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';

/** A gate on a fake clock: sleeping advances time, the backlog follows a script. */
function scripted(
  backlogs: Array<number | BacklogReading | undefined | Error>,
  opts: { maxBacklog?: number; stalledAfterMs?: number } = {},
) {
  let clock = 0;
  let reads = 0;
  const notices: string[] = [];
  const gate = new BacklogGate({
    maxBacklog: opts.maxBacklog ?? 100,
    checkEveryMs: 500,
    stalledAfterMs: opts.stalledAfterMs ?? 5_000,
    readBacklog: async () => {
      const value = backlogs[Math.min(reads++, backlogs.length - 1)];
      if (value instanceof Error) throw value;
      return value;
    },
    onNotice: (m) => notices.push(m),
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
  });
  return { gate, notices, reads: () => reads, clock: () => clock };
}

describe('backlog gate', () => {
  it('lets a start through at once while the backlog is below the bound', async () => {
    const g = scripted([10]);
    await g.gate.admit();
    expect(g.clock()).toBe(0);
    expect(g.gate.waits).toBe(0);
  });

  it('holds a start while the backlog drains, then lets it through', async () => {
    const g = scripted([400, 300, 200, 120, 90]);
    await g.gate.admit();
    expect(g.reads()).toBe(5);
    expect(g.clock()).toBe(2_000);
    expect(g.gate.waits).toBe(1);
    expect(g.notices).toEqual([]);
  });

  it('opens for good, saying why, when the backlog stops shrinking (no worker)', async () => {
    const g = scripted([500]);
    await g.gate.admit();
    expect(g.clock()).toBe(5_000);
    expect(g.notices).toHaveLength(1);
    expect(g.notices[0]).toContain('is a worker running?');
    const reads = g.reads();
    await g.gate.admit();
    expect(g.reads()).toBe(reads); // not read again
  });

  it('a reading stuck while workers take tasks is stale: starts go at the rate workers take tasks, not all at once', async () => {
    const g = scripted([{ backlog: 287, dispatchPerSecond: 20 }]);
    for (let i = 0; i < 50; i++) await g.gate.admit();
    // 5 s to call the reading stuck, then one start per 50 ms: 49 gaps after the first.
    expect(g.clock()).toBeGreaterThanOrEqual(5_000 + 49 * 50);
    expect(g.notices).toHaveLength(1);
    expect(g.notices[0]).toContain('while workers took 20.0 tasks/s');
    expect(g.notices[0]).not.toContain('is a worker running?');
  });

  it('a stuck reading with no task taken means no worker: it opens as before', async () => {
    const g = scripted([{ backlog: 287, dispatchPerSecond: 0 }]);
    await g.gate.admit();
    expect(g.notices[0]).toContain('is a worker running?');
  });

  it('imports without backpressure when the server cannot tell the backlog', async () => {
    const failing = scripted([new Error('UNIMPLEMENTED')]);
    await failing.gate.admit();
    expect(failing.notices[0]).toContain('UNIMPLEMENTED');
    const silent = scripted([undefined]);
    await silent.gate.admit();
    expect(silent.notices[0]).toContain('does not report');
  });

  it('reads the backlog once per interval however many starts wait', async () => {
    const g = scripted([10]);
    await Promise.all(Array.from({ length: 20 }, () => g.gate.admit()));
    expect(g.reads()).toBe(1);
  });

  it('never holds with a bound of 0', async () => {
    const g = scripted([1_000_000], { maxBacklog: 0 });
    await g.gate.admit();
    expect(g.reads()).toBe(0);
  });
});

describe('backlog of a real task queue', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await createTestEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it('counts workflow tasks no worker has taken', async () => {
    const taskQueue = `no-worker-${Date.now()}`;
    const read = workflowBacklogReader(env.client, 'default', taskQueue);
    for (let i = 0; i < 5; i++) await startShipment(env.client, taskQueue, order('backlog', `B-${i}`));
    // The count is approximate and refreshed by the server every few seconds.
    const backlog = await waitFor(async () => (((await read())?.backlog ?? 0) >= 5 ? (await read())?.backlog : undefined), {
      what: 'a backlog of 5',
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    expect(backlog).toBe(5);
    // The rate the gate falls back on when a reading is stale (no worker here: none taken).
    expect((await read())?.dispatchPerSecond).toBe(0);
  });
});
