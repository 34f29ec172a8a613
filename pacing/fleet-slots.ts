/**
 * This worker's slots of the fleet's grid (fleet-pace.ts, PaceGrant): the fleet's calls go out
 * one a slot of a grid of `grid.rate` a second from `grid.origin`, slot k to the worker whose span
 * [phase, phase + share ÷ grid rate) holds the fractional part of k times the golden ratio. Spans
 * granted together do not overlap, so the fleet's calls come one a slot, evenly spaced, whatever the
 * shares; but each worker's span is placed at its own report, after the others' shares as they are
 * then, so a share that changed since overlaps the next worker's span until that one reports (the
 * accounts bench's "calls at once": 1-5 % of the calls of four workers, nearly all in a slot two
 * granted spans held). (On a grid of its own interval from 1970 at its phase, each worker's calls
 * met the others' anywhere once shares differed by a tenth of a percent: four workers sharing an
 * account of 2 a second sent three calls at once, over the limit's burst of two, and the cuts
 * left the fleet at 0.75 of the limit.)
 */

import type { PaceGrant } from '../workflow-definitions/account';

/** Slot k is the worker's whose span holds the fractional part of k times this: spread evenly for any span. */
const GOLDEN = (Math.sqrt(5) - 1) / 2;
/** The most slots a call's next one is looked for in: a span of 0.001 (a share of 1/1000 of the grid's) is found within it. */
const MAX_LOOK = 10_000;

/** The fleet's grid: `rate` slots a second from `origin` (epoch ms). */
export type Grid = NonNullable<PaceGrant['grid']>;

export class FleetSlots {
  private phase = 0;
  private grid: Grid | null = null;

  /** A grant's phase and grid (none, or not numbers: an account workflow of an older build; the worker spaces its calls at its share). */
  set(phase: number, grid?: Grid): void {
    this.phase = Number.isFinite(phase) ? phase : 0;
    this.grid = grid && grid.rate > 0 && Number.isFinite(grid.rate) && Number.isFinite(grid.origin) ? grid : null;
  }

  /** Whether the fleet handed out a grid. */
  get known(): boolean {
    return this.grid !== null;
  }

  /** The interval of the grid's slots at a share of `rate`, or of the worker's calls without a grid (ms). */
  interval(rate: number): number {
    return 1000 / Math.max(rate, this.grid?.rate ?? 0);
  }

  /** The first of this worker's slots from `t` on, at a share of `rate` (> 0); `t` without a grid. */
  next(t: number, rate: number): number {
    if (!this.grid) return t;
    const slot = this.interval(rate);
    const span = Math.min(1, rate / Math.max(rate, this.grid.rate));
    const { origin } = this.grid;
    const first = Math.ceil((t - origin) / slot - 1e-9);
    // A span's slots come within a few times 1 ÷ span of each other (the three-gap theorem). Not
    // further than MAX_LOOK: a share of a float's remainder (1e-10 a second) looked through 10^11
    // slots, the worker's event loop stopped meanwhile; it gets its mean interval instead.
    for (let k = first; k < first + Math.min(MAX_LOOK, 10 / span + 10); k++) {
      if ((((k * GOLDEN) % 1) - this.phase + 1) % 1 < span) return origin + k * slot;
    }
    return t + 1000 / rate;
  }
}
