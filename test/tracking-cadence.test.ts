/** Poll intervals per tracking stage: how they are configured, and which one a shipment gets. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadWorkerSettings, WORKER_DEFAULTS } from '../config/settings';
import { DEFAULT_TRACKING_POLICY, NOT_REGISTERED_STAGE, type TrackingPolicy } from '../domain/shipment';
import { pollIntervalOf } from '../workflows/shipment';
import { nextPollDue } from '../domain/tracking';

const REQUIRED = {
  SHIPPING_API_BASE_URL: 'http://127.0.0.1:4010',
  SHIPPING_API_KEY: 'k',
  SHIPPING_API_TOKEN: 't',
  PAYLOAD_ENCRYPTION: 'off',
};
const H = 3_600_000;

function configError(env: Record<string, string>): ConfigError {
  try {
    loadWorkerSettings({ ...REQUIRED, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('tracking cadence configuration', () => {
  it('defaults to the stage table and the worker sizing for a 2 GB worker', () => {
    const settings = loadWorkerSettings(REQUIRED);
    expect(settings.tracking.pollIntervalMs).toBe(3 * H);
    expect(settings.tracking.pollIntervalsMs).toEqual(DEFAULT_TRACKING_POLICY.pollIntervalsMs);
    expect(settings.tracking.pollIntervalsMs?.[NOT_REGISTERED_STAGE]).toBe(2 * H);
    expect(settings.maxCachedWorkflows).toBe(WORKER_DEFAULTS.maxCachedWorkflows);
    expect(settings.maxConcurrentWorkflowTaskExecutions).toBe(WORKER_DEFAULTS.maxConcurrentWorkflowTaskExecutions);
  });

  it('reads Stage=duration pairs', () => {
    const settings = loadWorkerSettings({ ...REQUIRED, TRACKING_POLL_INTERVALS: 'Pending=6h, OutForDelivery=30m,InTransit_007=1h' });
    expect(settings.tracking.pollIntervalsMs).toEqual({ Pending: 6 * H, OutForDelivery: 30 * 60_000, InTransit_007: H });
  });

  it('one interval given alone, or "none", means every stage', () => {
    expect(loadWorkerSettings({ ...REQUIRED, TRACKING_POLL_INTERVAL: '20s' }).tracking.pollIntervalsMs).toEqual({});
    expect(loadWorkerSettings({ ...REQUIRED, TRACKING_POLL_INTERVALS: 'none' }).tracking.pollIntervalsMs).toEqual({});
    const both = loadWorkerSettings({ ...REQUIRED, TRACKING_POLL_INTERVAL: '20s', TRACKING_POLL_INTERVALS: 'Pending=1h' });
    expect(both.tracking).toMatchObject({ pollIntervalMs: 20_000, pollIntervalsMs: { Pending: H } });
  });

  it('names the variable and the bad pair', () => {
    const err = configError({ TRACKING_POLL_INTERVALS: 'Pending=6h,InTransit=soon' });
    expect(err.problems).toEqual([{ variable: 'TRACKING_POLL_INTERVALS', message: expect.stringContaining('"InTransit=soon"') }]);
    expect(configError({ WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '1' }).problems[0]?.variable).toBe('WORKER_MAX_CONCURRENT_WORKFLOW_TASKS');
    expect(configError({ WORKER_MAX_CACHED_WORKFLOWS: 'many' }).problems[0]?.variable).toBe('WORKER_MAX_CACHED_WORKFLOWS');
  });

  it('says a number setting that was given is not a number, rather than that it is missing', () => {
    expect(configError({ HISTORY_EVENT_LIMIT: 'lots', WORKER_MAX_ACTIVITIES_PER_SECOND: 'fast' }).problems).toEqual([
      { variable: 'HISTORY_EVENT_LIMIT', message: 'must be a number' },
      { variable: 'WORKER_MAX_ACTIVITIES_PER_SECOND', message: 'must be a number' },
    ]);
    const { SHIPPING_API_TOKEN: _unset, ...withoutToken } = REQUIRED;
    expect(() => loadWorkerSettings(withoutToken)).toThrow('SHIPPING_API_TOKEN: is required');
  });
});

describe('the interval a shipment polls at', () => {
  const policy: TrackingPolicy = {
    ...DEFAULT_TRACKING_POLICY,
    pollIntervalMs: 3 * H,
    pollIntervalsMs: { [NOT_REGISTERED_STAGE]: 2 * H, InTransit: 4 * H, InTransit_007: H },
  };

  it('takes the subtag, then the tag, then the default', () => {
    expect(pollIntervalOf(policy, { tag: 'InTransit', subtag: 'InTransit_007' })).toBe(H);
    expect(pollIntervalOf(policy, { tag: 'InTransit', subtag: 'InTransit_003' })).toBe(4 * H);
    expect(pollIntervalOf(policy, { tag: 'Pending', subtag: null })).toBe(3 * H);
  });

  it('uses the NotRegistered interval before the courier knows the parcel', () => {
    expect(pollIntervalOf(policy, { tag: null, subtag: null })).toBe(2 * H);
  });

  it('works with a policy recorded before stage intervals existed', () => {
    const { pollIntervalsMs: _none, ...old } = policy;
    expect(pollIntervalOf(old, { tag: 'InTransit', subtag: 'InTransit_007' })).toBe(3 * H);
    expect(pollIntervalOf(old, { tag: null, subtag: null })).toBe(3 * H);
  });
});

describe("a label's next poll", () => {
  it('is due an interval after the last was due, not after a late answer', () => {
    expect(nextPollDue(10 * H, 10 * H + 5_000, 3 * H)).toBe(13 * H);
    expect(nextPollDue(0, 450, 1_000)).toBe(1_000);
  });

  it('is never sooner than half an interval after the answer: a label that fell behind is not polled twice at once', () => {
    expect(nextPollDue(0, 800, 1_000)).toBe(1_300);
    // A worker down for a day: the next poll half an interval after the one that caught up, not at once.
    expect(nextPollDue(0, 24 * H, 4 * H)).toBe(26 * H);
  });

  it('counts from the answer when the last due time is no time, so the label is still polled', () => {
    expect(nextPollDue(Number.NaN, 10 * H, 2 * H)).toBe(11 * H);
    expect(nextPollDue(undefined as unknown as number, 10 * H, 2 * H)).toBe(11 * H);
  });
});
