/**
 * The request ids of a tracking span's news (tracking-poller/span.ts, NewsIds), with a span
 * killed between telling and heartbeating: the retried attempt resumes from the last heartbeat,
 * finds the tracking past what it last knew, and must tell it under the id the killed attempt
 * used, so the server drops the second signal. The count-based id of before did not
 * (fleet-tracking.crash.test.ts saw a change signalled twice in 3 of 8 runs).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NewsIds } from '../tracking-poller/span';

const member = { workflowId: 'shipment-fleet-K-1', labelId: 'L1', membership: 'run-1/act-7', told: 2 };
const state = (tag: string, checkpoints: number) => [tag, null, 'T1', checkpoints, `c${checkpoints}`];
const [K1, K2, K3] = [state('InfoReceived', 1), state('InTransit', 2), state('InTransit', 3)];

/** The id before the fix: the count of news told so far in the membership. */
function idBefore(m: typeof member, what: unknown[]): string {
  const named = [m.labelId, m.membership, m.told, ...what];
  return createHash('sha256').update(m.workflowId).update('\u0000').update(JSON.stringify(named)).digest('hex').slice(0, 32);
}

/**
 * Attempt 1 tells K1 and heartbeats, then tells K2 and K3 and is killed before its next
 * heartbeat; attempt 2 resumes from that heartbeat (told 3, known K1) and finds the tracking at
 * K3. The ids each attempt signals with.
 */
function killedBetweenTellAndHeartbeat(scheme: 'now' | 'before'): { killed: string[]; retried: string[] } {
  const first = new NewsIds();
  const live = { ...member };
  first.begin(live);
  const tell = (ids: NewsIds, m: typeof member, what: unknown[]) => {
    const id = scheme === 'now' ? ids.id(m, what) : idBefore(m, what);
    ids.tellOf(m, what);
    m.told++;
    return id;
  };
  const killed = [tell(first, live, K1)];
  const heartbeat = { ids: first.snapshot(), told: live.told };
  killed.push(tell(first, live, K2), tell(first, live, K3));
  // SIGKILL. The retry reads the shard's run again (the member as it joined), then the heartbeat.
  const second = new NewsIds();
  const resumed = { ...member };
  second.begin(resumed);
  second.resume(heartbeat.ids);
  resumed.told = heartbeat.told;
  return { killed, retried: [tell(second, resumed, K3)] };
}

describe('tracking news request ids', () => {
  it('a span killed between telling and heartbeating: its retry tells the change it finds under the id the killed attempt used', () => {
    const { killed, retried } = killedBetweenTellAndHeartbeat('now');
    expect(killed).toContain(retried[0]);
  });

  it('the count-based id of before told that change under a second id (the defect)', () => {
    const { killed, retried } = killedBetweenTellAndHeartbeat('before');
    expect(killed).not.toContain(retried[0]);
  });

  it('a state the tracking returns to is told again under a new id, within a span and in the next one', () => {
    const span = new NewsIds();
    const m = { ...member };
    span.begin(m);
    const ids: string[] = [];
    for (const what of [K1, K2, K1]) {
      ids.push(span.id(m, what));
      span.tellOf(m, what);
      m.told++;
    }
    // The shard continues as new with told 5; the next span tells K2 again.
    const next = new NewsIds();
    next.begin(m);
    ids.push(next.id(m, K2));
    expect(new Set(ids).size).toBe(4);
  });

  it('another membership (a shipment joined again) or another label names other news', () => {
    const ids = new NewsIds();
    const a = ids.id(member, K1);
    expect(ids.id({ ...member, membership: 'run-1/act-9' }, K1)).not.toBe(a);
    expect(ids.id({ ...member, labelId: 'L2' }, K1)).not.toBe(a);
    expect(ids.id(member, K1)).toBe(a);
  });
});
