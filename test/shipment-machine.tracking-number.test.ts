/**
 * The machine follows tracking from what the shipment knows when tracking begins: the tracking
 * number the label and its order brought. Without it, the machine took as news (and told the shop
 * of) a number the workflow already had, where the workflow's own check refused it.
 */
import { describe, expect, it } from 'vitest';
import { decide, initialMachineState, type MachineState, type ShipmentCommand, type ShipmentEvent } from '../domain/shipment-machine';

type Req = { courier: string };

function play(events: Array<ShipmentEvent<Req>>): { state: MachineState<Req>; last: Array<ShipmentCommand<Req>> } {
  let state = initialMachineState<Req>({ labelRequest: { courier: 'dhl' }, config: { terminalTags: ['Delivered'], connector: null } });
  let last: Array<ShipmentCommand<Req>> = [];
  for (const e of events) ({ state, commands: last } = decide(state, e));
  return { state, last };
}

const news = (trackingNumber: string | null) =>
  ({
    type: 'trackingNews',
    labelId: 'L1',
    failed: false,
    change: { tag: 'InTransit', subtag: null, trackingNumber, checkpoints: 1, lastCheckpointTime: 't1' },
  }) as const;

describe("the machine's tracking number", () => {
  it('starts from the one the label and its order brought: that number seen again is no news', () => {
    const { state, last } = play([
      { type: 'started' },
      { type: 'labelCreated', revision: 1, labelId: 'L1' },
      { type: 'orderRead', labelId: 'L1', ok: true, trackingNumber: 'TN-1' },
      news(null),
      news('TN-1'),
    ]);
    expect(state.tracking.trackingNumber).toBe('TN-1');
    expect(last).toEqual([]);
  });

  it('without one from the order, the first number the courier gives is told', () => {
    const { last } = play([
      { type: 'started' },
      { type: 'labelCreated', revision: 1, labelId: 'L1' },
      { type: 'orderRead', labelId: 'L1', ok: false },
      news(null),
      news('TN-1'),
    ]);
    expect(last.map((c) => c.type === 'tellShop' && c.event.type)).toEqual(['tracking.updated']);
  });
});
