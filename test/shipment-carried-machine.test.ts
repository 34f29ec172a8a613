/**
 * A run continued from a 1.0 build carries no machine state: it is rebuilt from the workflow's
 * state (workflows/shipment/carried.ts), and tracking goes on deciding from it.
 */
import { describe, expect, it } from 'vitest';
import { decide, initialMachineState, type MachineState } from '../domain/shipment-machine';
import { DEFAULT_TRACKING_POLICY } from '../domain/shipment';
import { initialState } from '../workflows/shipment/state';
import { startOfCarried } from '../workflows/shipment/carried';
import { labelRequest } from './helpers/orders';
import type { CarriedState } from '../workflows/shipment/shell';

function carriedFrom10(): CarriedState {
  const request = labelRequest('C-1');
  const state = initialState({ shop: 'shop', orderId: 'C-1', labelRequest: request });
  Object.assign(state, {
    phase: 'tracking',
    labelId: 'L1',
    trackingNumber: 'TN-1',
    tag: 'InTransit',
    checkpoints: 2,
    trackingPoller: 'poller-1',
    trackingStartedAt: '2026-12-01T00:00:00.000Z',
  });
  return { state, policy: { ...DEFAULT_TRACKING_POLICY, terminalTags: ['Delivered'] }, labelRequest: request };
}

import type { LabelRequestWithoutKey } from '../shipping-api/contract';

/** As run.ts builds it: the carried machine, or the one rebuilt from the workflow's state. */
const machineOfCarried = (carried: CarriedState): MachineState<LabelRequestWithoutKey> =>
  carried.machine ?? initialMachineState(startOfCarried(carried)!);

describe('the machine of a run continued as new', () => {
  it('is the carried one when the run carried it', () => {
    const carried = carriedFrom10();
    const machine = machineOfCarried(carried);
    expect(machineOfCarried({ ...carried, machine: { ...machine, told: 7 } }).told).toBe(7);
  });

  it('from a 1.0 run, is rebuilt from the workflow state: tracking its label, from what it knew', () => {
    const machine = machineOfCarried(carriedFrom10());
    expect(machine).toMatchObject({ phase: 'tracking', labelId: 'L1', watching: 'L1', relabel: null });
    expect(machine.tracking).toMatchObject({ tag: 'InTransit', trackingNumber: 'TN-1', checkpoints: 2 });
    // What it knew is no news; a terminal tag ends it, and its deadline (wait of the rebuilt state) is not stale.
    const same = { tag: 'InTransit', subtag: null, trackingNumber: 'TN-1', checkpoints: 2, lastCheckpointTime: null };
    expect(decide(machine, { type: 'trackingNews', labelId: 'L1', change: same, failed: false }).commands).toEqual([]);
    const delivered = { ...same, tag: 'Delivered', checkpoints: 3 };
    const ended = decide(machine, { type: 'trackingNews', labelId: 'L1', change: delivered, failed: false });
    expect(ended.commands.map((c) => c.type)).toEqual(['tellShop', 'tellShop', 'finish']);
    const timedOut = decide(machine, { type: 'deadlinePassed', deadline: 'tracking', wait: machine.wait });
    expect(timedOut.commands.map((c) => c.type)).toEqual(['unwatchTracking', 'tellShop', 'finish']);
  });
});
