/**
 * The fleet's grid of slots (pacing/fleet-slots.ts): workers whose spans the fleet lays end to end
 * (fleet-pace.ts) never take the same slot, and each takes its share of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FleetSlots } from '../pacing/fleet-slots';

describe('FleetSlots', () => {
  it("workers with spans laid end to end never take the same slot, and each takes about its share's", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0.05, max: 5, noNaN: true }), { minLength: 1, maxLength: 4 }), (shares) => {
        const rate = shares.reduce((n, s) => n + s, 0);
        const grid = { rate: rate * 1.02, origin: 1_000_000 };
        let before = 0;
        const taken = new Map<number, number>();
        const counts = shares.map(() => 0);
        const until = grid.origin + 200_000;
        shares.forEach((share, worker) => {
          const slots = new FleetSlots();
          slots.set(before / grid.rate, grid);
          before += share;
          for (let t = grid.origin; t < until;) {
            const at = slots.next(t, share);
            if (at >= until) break;
            expect(taken.get(at), `slot at ${at} taken twice`).toBeUndefined();
            taken.set(at, worker);
            counts[worker]!++;
            t = at + 1;
          }
        });
        shares.forEach((share, worker) => expect(Math.abs(counts[worker]! / 200 - share)).toBeLessThan(0.02 + 0.01 * share));
      }),
      { numRuns: 50 },
    );
  });

  it("a share of a float's remainder waits its mean interval, not a look through billions of slots", () => {
    const slots = new FleetSlots();
    slots.set(0.3, { rate: 4, origin: 0 });
    // Before the bound, 1e-6 a second looked through 4 x 10^7 slots for a slot 16 days on, and
    // 1e-12 a second through 4 x 10^13: the worker's event loop stopped for hours.
    expect(slots.next(1_000_000, 1e-6)).toBe(1_000_000 + 1e9);
    expect(slots.next(1_000_000, 1e-12)).toBe(1_000_000 + 1e15);
    // A share of a thousandth of the grid's is still found on it.
    const at = slots.next(1_000_000, 0.004);
    expect(at % 250).toBe(0);
    expect(at).not.toBe(1_000_000 + 1000 / 0.004);
  });

  it('without a grid (an account workflow of an older build) a call goes when asked', () => {
    const slots = new FleetSlots();
    slots.set(Number.NaN, undefined);
    expect(slots.known).toBe(false);
    expect(slots.next(1234, 2)).toBe(1234);
    expect(slots.interval(4)).toBe(250);
  });
});
