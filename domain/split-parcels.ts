/**
 * An order that ships from several locations follows the merchant's lines: a reading of the
 * order (Shopify's fulfillment orders grouped by their assigned location) against the parcels
 * its workflow started. Pure: the order's workflow (workflows/shipment/split-order.ts) and the
 * property test (test/split-parcels.property.test.ts) use it alike.
 *
 * - A parcel stays while its location still has lines of the order, fulfilled or not (our own
 *   fulfillment closes a location's fulfillment orders; that is no move).
 * - A parcel whose location has no line left (the merchant moved them: fulfillmentOrderMove)
 *   has its lines left: before its label it stops without one, after it is marked for a person.
 * - A location with lines to ship and no parcel yet (lines moved to it, or added there) is a new
 *   parcel, identified by its location: the same location never makes a second parcel.
 */
/** At most this many parcels an order ships as (schemas.MAX_PARCELS; not imported: the workflow bundle holds no zod). */
export const PARCELS_AT_MOST = 20;

/** One location of a reading: its id, its name, and its label request when it has lines to ship. */
export interface ReadParcel<R> {
  location: string;
  name?: string;
  labelRequest?: R;
}

/** What the pull read: the locations the order has lines at, and the locations with lines to ship. */
export interface LinesByLocation<R> {
  /** Every location holding a line of the order (fulfilled or not); absent: the reading says nothing of locations. */
  locations?: string[];
  /** The locations with lines to ship; of one location only, its request is `labelRequest`. */
  parcels?: ReadParcel<R>[];
  labelRequest?: R;
}

export interface ParcelPlan<R> {
  /** Known parcels whose location still holds lines of the order. */
  stay: string[];
  /** Known parcels whose location holds none any more: the merchant moved their lines. */
  left: string[];
  /** Locations to ship from that have no parcel yet, in the reading's order: one new parcel each. */
  added: Array<{ location: string; name: string; labelRequest: R }>;
}

/** Where the parcels go after a reading; `known` are the locations of the parcels started so far. */
export function followLines<R>(known: readonly string[], reading: LinesByLocation<R>): ParcelPlan<R> {
  if (reading.locations === undefined) return { stay: [...known], left: [], added: [] };
  const holding = new Set(reading.locations);
  const stay = known.filter((l) => holding.has(l));
  const left = known.filter((l) => !holding.has(l));
  const parcels = reading.parcels ?? [];
  const requestOf = (p: ReadParcel<R>) => (parcels.length > 1 ? p.labelRequest : reading.labelRequest);
  const added: ParcelPlan<R>['added'] = [];
  const seen = new Set(known);
  for (const p of parcels) {
    const labelRequest = requestOf(p);
    if (seen.has(p.location) || labelRequest === undefined || !holding.has(p.location)) continue;
    if (seen.size >= PARCELS_AT_MOST) break;
    seen.add(p.location);
    added.push({ location: p.location, name: p.name ?? `location ${p.location}`, labelRequest });
  }
  return { stay, left, added };
}
