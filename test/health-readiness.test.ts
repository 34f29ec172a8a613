/**
 * /readyz's view of a worker process that runs several workers (shipments, live shipments, shop
 * pulls): ready only while every one of them runs, and the answer names the one that does not.
 * The real worker's states and Temporal's answer are in health-metrics.test.ts; here the workers'
 * states are set by hand, since one of a process's workers alone cannot be made to stop there.
 */
import { expect, it } from 'vitest';
import type { NativeConnection, State } from '@temporalio/worker';
import { WorkerReadiness } from '../metrics/health-server';

const reachable = {
  withDeadline: <T>(_deadline: number, call: () => Promise<T>) => call(),
  workflowService: { getSystemInfo: async () => ({}) },
} as unknown as NativeConnection;

const workerIn = (state: State) => ({ getState: () => state });

it('is ready only while every worker of the process runs, naming the one that does not', async () => {
  const shipments = workerIn('RUNNING');
  const pulls = { state: 'RUNNING' as State, getState: () => pulls.state };
  const readiness = new WorkerReadiness();
  readiness.watch({ shipments, live: undefined, pulls }, reachable);
  expect(await readiness.check()).toEqual({ ready: true, state: 'RUNNING', temporal: 'reachable' });

  pulls.state = 'FAILED';
  expect(await readiness.check()).toEqual({ ready: false, state: 'FAILED', temporal: 'unknown', reason: 'pulls worker failed' });
});

it('one worker alone is named as before', async () => {
  const readiness = new WorkerReadiness();
  readiness.watch(workerIn('DRAINING'), reachable);
  expect(await readiness.check()).toEqual({ ready: false, state: 'DRAINING', temporal: 'unknown', reason: 'worker draining' });
});
