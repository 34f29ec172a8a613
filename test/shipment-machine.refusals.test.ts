/**
 * The update validators ask the machine (`refusal`, workflows/shipment/run.ts): what they refused
 * from the workflow's own state the machine refuses from its own, in the same words. Two facts the
 * machine learnt for it: the platform order the shipment is, and a run that ended without its
 * word (a Temporal cancellation request).
 */
import { describe, expect, it } from 'vitest';
import { decide, initialMachineState, refusal, type MachineState, type ShipmentEvent } from '../domain/shipment-machine';

type R = string;

function started(platformOrderId?: string): MachineState<R> {
  const s = initialMachineState<R>({
    labelRequest: 'request',
    config: { terminalTags: ['Delivered'], connector: 'shopify' },
    shopOrder: { facts: { status: 'open', address: 'a', lines: 'l' }, modifiedAt: '2026-01-01T00:00:00Z' },
    ...(platformOrderId !== undefined ? { platformOrderId } : {}),
  });
  return decide(s, { type: 'started' }).state;
}

const moved = (platformOrderId?: string): ShipmentEvent<R> => ({
  type: 'shopChanged',
  facts: { status: 'open', address: 'b', lines: 'l' },
  modifiedAt: '2026-01-01T00:00:01Z',
  labelRequest: 'to b',
  ...(platformOrderId !== undefined ? { platformOrderId } : {}),
});

describe("the machine's refusal of a reading of the order", () => {
  it("refuses another platform order's reading, and takes its own in either form", () => {
    const s = started('1001');
    expect(refusal(s, moved('1002'))).toBe("another order: read from platform order 1002, this shipment is platform order 1001's");
    expect(decide(s, moved('1002'))).toEqual({ state: s, commands: [] });
    expect(refusal(s, moved('gid://shopify/Order/1001'))).toBeNull();
    expect(refusal(s, moved())).toBeNull();
    // A shipment started without one compares nothing.
    expect(refusal(started(), moved('1002'))).toBeNull();
  });
});

describe('a run that ended without the machine (a Temporal cancellation request)', () => {
  it('ends the machine with no command, so every validator refuses as for an ended shipment', () => {
    const ended = decide(started(), { type: 'runEnded', outcome: 'cancelled_by_operator' });
    expect(ended.commands).toEqual([]);
    expect(ended.state).toMatchObject({ phase: 'completed', outcome: 'cancelled_by_operator', labelCall: null });
    expect(refusal(ended.state, moved())).toBe('the shipment has ended');
    expect(refusal(ended.state, { type: 'attentionResolved' })).toBe('nothing to resolve: the shipment has ended');
    expect(refusal(ended.state, { type: 'resubmitted', labelRequest: 'corrected' })).toMatch(/the shipment is completed, not awaiting/);
    expect(refusal(ended.state, { type: 'relabelRequested', modifiedAt: '2026-01-01T00:00:00Z' })).toBe(
      'the shipment has ended (cancelled_by_operator)',
    );
  });

  it("ends an operator's relabel in flight without taking the shipment back: its late answer asks for nothing", () => {
    // Found by the model test: the relabel's answer after the run's end went on as if the run were alive.
    const steps: Array<ShipmentEvent<R> | ((s: MachineState<R>) => ShipmentEvent<R>)> = [
      { type: 'labelCreated', revision: 1, labelId: 'L1' },
      { type: 'orderRead', labelId: 'L1', ok: true },
      (s) => ({ ...moved(), modifiedAt: '2026-01-01T00:00:02Z', facts: { ...s.shop!.facts, address: 'c' } }),
      (s) => ({ type: 'relabelRequested', modifiedAt: s.shop!.modifiedAt }),
    ];
    const relabelling = steps.reduce((s, e) => decide(s, typeof e === 'function' ? e(s) : e).state, started());
    expect(relabelling).toMatchObject({ phase: 'creating_label', relabel: { revision: 2, stage: 'labelling' } });
    const ended = decide(relabelling, { type: 'runEnded', outcome: 'cancelled_by_operator' });
    expect(ended.commands).toEqual([]);
    // The call the cancellation cancelled answers stopped: the relabel ends (its update's answer), nothing else.
    const stopped = decide(ended.state, { type: 'labelCallStopped', revision: 2 });
    expect(stopped.commands).toEqual([{ type: 'relabelEnded', made: false }]);
    expect(stopped.state).toMatchObject({ phase: 'completed', outcome: 'cancelled_by_operator', relabel: null, told: ended.state.told });
    // A label it bought all the same is left to void, never followed nor told.
    const bought = decide(ended.state, { type: 'labelCreated', revision: 2, labelId: 'L2' });
    expect(bought.commands).toEqual([{ type: 'relabelEnded', made: false }]);
    expect(bought.state).toMatchObject({ phase: 'completed', labelId: 'L1', labelsToVoid: ['L2'], told: ended.state.told });
  });

  it('changes nothing once the machine ended the shipment itself', () => {
    const cancelled = decide(decide(started(), { type: 'labelRejected', revision: 1, correctable: true, kind: 'courier_error' }).state, {
      type: 'operatorCancelled',
    }).state;
    expect(cancelled.outcome).toBe('cancelled_by_operator');
    expect(decide(cancelled, { type: 'runEnded', outcome: 'tracking_timed_out' })).toEqual({ state: cancelled, commands: [] });
  });
});
