/** A shard's bound (PollerShard.fits): labels, and the bytes of its next continue-as-new input. */
import { expect, it } from 'vitest';
import type { WatchRequest } from '../../workflow-definitions/tracking-poller';
import { PollerShard } from '../../workflow-definitions/tracking-poller-shard';

const known = { tag: 'InTransit', subtag: null, trackingNumber: 'T1', checkpoints: 2, lastCheckpointTime: '2026-11-27T10:00:00Z' };
const cadence = { pollIntervalMs: 1000, pollIntervalsMs: {}, terminalTags: ['Delivered'] };
const request = (n: number, labelId = `label-${n}`): WatchRequest => ({
  workflowId: `shipment-${n}`,
  labelId,
  known,
  cadence,
  deadline: 0,
});

it('takes labels up to its count bound, and always one it watches already (a retried join, a relabel)', () => {
  const shard = new PollerShard(undefined);
  const bound = { maxLabels: 2, maxBytes: 1_000_000 };
  for (const n of [1, 2]) {
    expect(shard.fits(request(n), bound)).toBe(true);
    shard.watch(request(n));
  }
  expect(shard.fits(request(3), bound)).toBe(false);
  expect(shard.fits(request(2, 'label-2b'), bound)).toBe(true);
});

it('refuses a label that would take its next input past the bytes bound, whatever the count', () => {
  const shard = new PollerShard(undefined);
  shard.watch(request(1));
  const bytes = shard.bytes();
  expect(bytes).toBe(JSON.stringify(shard.carried()).length);
  // Room for about one more label of the same size, not two.
  const bound = { maxLabels: 1000, maxBytes: 2 * bytes };
  expect(shard.fits(request(2), bound)).toBe(true);
  shard.watch(request(2));
  expect(shard.fits(request(3), bound)).toBe(false);
});
