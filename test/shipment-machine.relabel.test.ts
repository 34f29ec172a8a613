/**
 * The machine's relabel meets tracking's own events: a shard lost (the rejoin), an operator's
 * cancel and the tracking deadline that come while the relabel has just started wait for it, and
 * are taken in the tracking loop's order once it ends (domain/shipment-machine/relabel.ts).
 */
import { describe, expect, it } from 'vitest';
import { decide, initialMachineState, type MachineState, type ShipmentCommand, type ShipmentEvent } from '../domain/shipment-machine';

type R = string;
type S = MachineState<R>;

function tracked(): S {
  let s = initialMachineState<R>({
    labelRequest: 'request',
    config: { terminalTags: ['Delivered'], connector: 'shopify' },
    shopOrder: { facts: { status: 'open', address: 'a', lines: 'l' }, modifiedAt: '2026-01-01T00:00:00Z' },
  });
  for (const e of [
    { type: 'started' },
    { type: 'labelCreated', revision: 1, labelId: 'label-1' },
    { type: 'orderRead', labelId: 'label-1', ok: true },
    { type: 'shopChanged', facts: { status: 'open', address: 'b', lines: 'l' }, modifiedAt: '2026-01-01T00:00:01Z', labelRequest: 'to b' },
  ] as Array<ShipmentEvent<R>>)
    s = decide(s, e).state;
  expect(s.phase).toBe('tracking');
  return s;
}

/** Plays the events; returns the state and each event's commands, as `type` (or `type:detail`). */
function play(s: S, events: Array<ShipmentEvent<R> | ((s: S) => ShipmentEvent<R>)>): { s: S; said: string[][] } {
  const said: string[][] = [];
  for (const e of events) {
    const d = decide(s, typeof e === 'function' ? e(s) : e);
    s = d.state;
    said.push(d.commands.map(word));
  }
  return { s, said };
}

const word = (c: ShipmentCommand<R>): string =>
  c.type === 'finish' ? `finish:${c.outcome}` : c.type === 'relabelEnded' ? `relabelEnded:${c.made}` : c.type;

const relabel = (s: S): ShipmentEvent<R> => ({ type: 'relabelRequested', modifiedAt: s.shop!.modifiedAt });
const deadline = (s: S): ShipmentEvent<R> => ({ type: 'deadlinePassed', deadline: 'tracking', wait: s.wait });

describe('a relabel that has just started, right after a rejoin', () => {
  it("holds an operator's cancel until the relabel's label is tracked, then stops tracking it", () => {
    const { s, said } = play(tracked(), [
      { type: 'trackingLost' },
      relabel,
      { type: 'operatorCancelled' },
      { type: 'labelCreated', revision: 2, labelId: 'label-2' },
      { type: 'orderRead', labelId: 'label-2', ok: true },
    ]);
    expect(said).toEqual([
      ['watchTracking'],
      ['createLabel'],
      [],
      ['readOrder'],
      [
        'unwatchTracking',
        'tellShop',
        'watchTracking',
        'startDeadline',
        'relabelEnded:true',
        'unwatchTracking',
        'tellShop',
        'finish:cancelled_by_operator',
      ],
    ]);
    expect(s).toMatchObject({ phase: 'completed', outcome: 'cancelled_by_operator', labelId: 'label-2', relabel: null });
  });

  it('holds the tracking deadline until the relabel ends: a refused relabel then times out, a made one starts its own clock', () => {
    const refused = play(tracked(), [
      { type: 'trackingLost' },
      relabel,
      deadline,
      { type: 'labelRejected', revision: 2, correctable: true, kind: 'courier_error' },
    ]);
    expect(refused.said.slice(1)).toEqual([
      ['createLabel'],
      [],
      ['relabelEnded:false', 'unwatchTracking', 'tellShop', 'finish:tracking_timed_out'],
    ]);
    expect(refused.s).toMatchObject({ phase: 'completed', outcome: 'tracking_timed_out', labelId: 'label-1' });

    const made = play(tracked(), [
      { type: 'trackingLost' },
      relabel,
      deadline,
      { type: 'labelCreated', revision: 2, labelId: 'label-2' },
      { type: 'orderRead', labelId: 'label-2', ok: true },
    ]);
    expect(made.said.at(-1)).toEqual(['unwatchTracking', 'tellShop', 'watchTracking', 'startDeadline', 'relabelEnded:true']);
    expect(made.s).toMatchObject({ phase: 'tracking', labelId: 'label-2', watching: 'label-2' });
  });

  it('a shard lost while the relabel runs is joined again once it ends (the old label, when none was made)', () => {
    const { s, said } = play(tracked(), [relabel, { type: 'trackingLost' }, { type: 'labelCallStopped', revision: 2 }]);
    expect(said).toEqual([['createLabel'], [], ['relabelEnded:false', 'watchTracking']]);
    expect(s).toMatchObject({ phase: 'tracking', watching: 'label-1', relabel: null });
  });
});
