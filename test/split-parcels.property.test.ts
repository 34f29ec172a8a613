/**
 * followLines (domain/split-parcels.ts), the split order's parcels after the merchant moved lines:
 * over random parcels known and random readings (lines by location, some to ship, some fulfilled),
 * every known parcel either stays or has its lines left, never both; a location gets a new parcel
 * only when it has lines to ship and no parcel yet; and the reading taken twice (a re-read, a
 * replay) adds nothing the second time, so no location ever has two parcels.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { followLines, PARCELS_AT_MOST, type LinesByLocation } from '../domain/split-parcels';
import { MAX_PARCELS } from '../domain/schemas';

const location = fc.constantFrom<string>('1', '2', '3', '4', '5', '6');

/** A reading: the locations holding lines, of which some have lines to ship (their request names the location). */
const reading = fc
  .tuple(fc.uniqueArray(location, { maxLength: 6 }), fc.nat(), fc.boolean())
  .map(([holding, pick, named]): LinesByLocation<string> => {
    const toShip = holding.filter((_, i) => (pick >> i) % 2 === 0);
    if (toShip.length === 1) return { locations: holding, parcels: [{ location: toShip[0]! }], labelRequest: `request@${toShip[0]}` };
    return {
      locations: holding,
      parcels: toShip.map((l) => ({ location: l, ...(named ? { name: `Warehouse ${l}` } : {}), labelRequest: `request@${l}` })),
    };
  });

describe('a split order following the lines the merchant moves', () => {
  test.prop([fc.uniqueArray(location, { minLength: 2, maxLength: 6 }), reading], { numRuns: 1000, seed: 1 })(
    'each known parcel stays or has its lines left; new parcels only where lines are to ship; the same reading again adds none',
    (known, read) => {
      const plan = followLines(known, read);
      // Each known parcel exactly once: stays where its location holds lines, left where it holds none.
      expect([...plan.stay, ...plan.left].sort()).toEqual([...known].sort());
      for (const l of plan.stay) expect(read.locations).toContain(l);
      for (const l of plan.left) expect(read.locations).not.toContain(l);
      // A new parcel: a location to ship from, not known, once, with that location's own request.
      const toShip = (read.parcels ?? []).map((p) => p.location);
      expect(plan.added.map((a) => a.location).sort()).toEqual(toShip.filter((l) => !known.includes(l)).sort());
      for (const a of plan.added) expect(a.labelRequest).toBe(`request@${a.location}`);
      // Every location with lines to ship ends with exactly one parcel.
      const after = [...known, ...plan.added.map((a) => a.location)];
      for (const l of toShip) expect(after.filter((x) => x === l)).toHaveLength(1);
      // Read again with the parcels it made: nothing more (a re-read or a replay never makes a second parcel).
      expect(followLines(after, read).added).toEqual([]);
    },
  );

  it('a reading that says nothing of locations (older, WooCommerce, held or cancelled) leaves the parcels as they are', () => {
    expect(followLines(['1', '2'], { labelRequest: 'r' })).toEqual({ stay: ['1', '2'], left: [], added: [] });
  });

  it('the limit is the schemas’ one', () => {
    expect(PARCELS_AT_MOST).toBe(MAX_PARCELS);
  });
});
