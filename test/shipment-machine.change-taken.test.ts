/**
 * How the machine took a change before the label (`shop.taken`): the workflow words the change's
 * record from it (workflows/shipment/shop-changes.ts), so the machine is the one source of it. It
 * is forgotten once the label is made: a machine carried across continue-as-new (in tracking)
 * holds none.
 */
import { describe, expect, it } from 'vitest';
import { decide, initialMachineState, type MachineState, type ShipmentEvent } from '../domain/shipment-machine';

type R = string;
const facts = { status: 'open' as const, address: 'a', lines: 'l' };

function rejected(connector: string): MachineState<R> {
  const s = initialMachineState<R>({
    labelRequest: 'request',
    config: { terminalTags: ['Delivered'], connector },
    shopOrder: { facts, modifiedAt: '2026-01-01T00:00:00Z' },
  });
  const started = decide(s, { type: 'started' }).state;
  return decide(started, { type: 'labelRejected', revision: 1, correctable: true, kind: 'courier_error' }).state;
}

const reading = (at: number, change: Partial<Extract<ShipmentEvent<R>, { type: 'shopChanged' }>>): ShipmentEvent<R> => ({
  type: 'shopChanged',
  facts,
  modifiedAt: `2026-01-01T00:00:0${at}Z`,
  ...change,
});

describe('a change before the label, as the machine took it', () => {
  it("holds WooCommerce's on-hold during a correction to be the connector's own: nothing is held", () => {
    const s = decide(rejected('woocommerce'), reading(1, { facts: { ...facts, status: 'on_hold' } })).state;
    expect(s.shop!.taken).toEqual({ holdMayBeOurs: true, ignored: true, request: null });
    expect(s.phase).toBe('awaiting_correction');
    // Shopify's on-hold is the merchant's: the label waits for the release.
    const held = decide(rejected('shopify'), reading(1, { facts: { ...facts, status: 'on_hold' } })).state;
    expect(held.shop!.taken).toEqual({ holdMayBeOurs: false, ignored: false, request: null });
    expect(held.phase).toBe('held_in_shop');
  });

  it('takes a changed order that maps into the request, and waits for an operator on one that does not', () => {
    const taken = decide(rejected('shopify'), reading(1, { facts: { ...facts, address: 'b' }, labelRequest: 'to b' }));
    expect(taken.state.shop!.taken).toEqual({ holdMayBeOurs: false, ignored: false, request: 'take' });
    expect(taken.commands).toContainEqual({ type: 'createLabel', revision: 2, labelRequest: 'to b', fromOffer: false });
    const unmapped = decide(rejected('shopify'), reading(1, { facts: { ...facts, address: 'b' }, problems: true })).state;
    expect(unmapped.shop!.taken).toEqual({ holdMayBeOurs: false, ignored: false, request: 'does_not_map' });
  });

  it('forgets it once the label is made', () => {
    const asked = decide(rejected('shopify'), reading(1, { facts: { ...facts, address: 'b' }, labelRequest: 'to b' })).state;
    expect(asked.shop!.taken).toBeDefined();
    const made = decide(asked, { type: 'labelCreated', revision: 2, labelId: 'L2' }).state;
    expect(made.shop).not.toHaveProperty('taken');
  });
});
