/**
 * The account's one rate (pacing/fleet-pace.ts) under any reports the workers may send: counts
 * that are negative, not numbers, absurdly large or missing (JSON carries NaN as null), holds in
 * the past or far ahead, and continue-as-new at any point (the state through JSON, as the
 * workflow carries it). Whatever comes, each grant is a share the worker can pace by, the
 * state the next run starts from is numbers, the probe's speed stays in its bounds, and a limit
 * or floor once found stays found.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { FleetPace, LEASE_MS, MIN_RATE } from '../pacing/fleet-pace';
import type { PaceReport } from '../workflow-definitions/account';

const count = fc.oneof(
  fc.constantFrom(0, -5, 1e-12, 1e300, Number.NaN, Number.POSITIVE_INFINITY, null, undefined),
  fc.double({ min: 0, max: 200, noNaN: true }),
);
/** A ceiling is a setting of at least MIN_RATE when it is one (a positive one below is honoured as given); the rest are ignored. */
const ceiling = fc.oneof(
  fc.constantFrom(undefined, 0, -1, Number.NaN, null, 0.3, 4, 1e300),
  fc.double({ min: MIN_RATE, max: 100, noNaN: true }),
);
const step = fc.oneof(
  fc.record({
    kind: fc.constant('report' as const),
    worker: fc.constantFrom('a', 'b', 'c', 'd'),
    want: count,
    // Absent from a report of an older build.
    need: fc.option(count, { nil: undefined }),
    accepted: count,
    limited: count,
    maxRate: ceiling,
    fresh: fc.option(fc.record({ answers: count, limited: count }), { nil: undefined }),
    ms: fc.integer({ min: 0, max: 5000 }),
  }),
  fc.record({
    kind: fc.constant('overshoot' as const),
    holdMs: fc.integer({ min: -2000, max: 20_000 }),
    ms: fc.integer({ min: 0, max: 3000 }),
  }),
  fc.record({ kind: fc.constant('continueAsNew' as const), ms: fc.constant(0) }),
);

it('every grant is a pace a worker can keep, and the carried state is numbers, whatever the reports say', () => {
  fc.assert(
    fc.property(fc.array(step, { minLength: 1, maxLength: 200 }), (steps) => {
      let pace = new FleetPace();
      let now = Date.parse('2026-12-04T10:00:00Z');
      /** Each worker's last share and until when it paces by it, as the workers see them, across runs. */
      const live = new Map<string, { rate: number; until: number }>();
      /** The account workflow's hold (its notBefore), which it hands each run's pace. */
      let held = 0;
      /** A floor was learned or a limit shown (FleetNoiseState.found). */
      let found = false;
      for (const s of steps) {
        now += s.ms;
        if (s.kind === 'continueAsNew') pace = new FleetPace(JSON.parse(JSON.stringify(pace.state())), held);
        else if (s.kind === 'overshoot') {
          held = Math.max(held, now + s.holdMs);
          pace.overshoot(now + s.holdMs, now);
          // A cut shrinks every share in the workflow's books at once; the workers slow by the hold.
          live.clear();
        } else {
          const { kind: _kind, ms: _ms, ...report } = s;
          const before = pace.state().rate;
          const grant = pace.report(report as unknown as PaceReport, now);
          const seen = JSON.stringify(grant);
          // A held account's rate does not grow, a continue-as-new in between or not (a run that
          // forgot the hold grew a small account a tenth a second from a 30 s Retry-After's end).
          if (now < held) expect(grant.accountRate, `grew while held: ${seen}`).toBeLessThanOrEqual(before * (1 + 1e-9));
          expect(Number.isFinite(grant.rate) && grant.rate >= 0, `share: ${seen}`).toBe(true);
          expect(grant.rate, `share over the account's rate: ${seen}`).toBeLessThanOrEqual(grant.accountRate * (1 + 1e-9));
          expect(Number.isFinite(grant.phase) && grant.phase >= 0 && grant.phase < 1, `phase: ${seen}`).toBe(true);
          expect(Number.isFinite(grant.grid!.rate) && grant.grid!.rate >= grant.accountRate, `grid: ${seen}`).toBe(true);
          expect(Number.isFinite(grant.accountRate) && grant.accountRate > 0, `rate: ${seen}`).toBe(true);
          expect(grant.noise === undefined || (grant.noise.share >= 0 && grant.noise.share < 1), `noise floor: ${seen}`).toBe(true);
          expect(grant.freshShare === undefined || (grant.freshShare >= 0 && grant.freshShare <= 1), `fresh share: ${seen}`).toBe(true);
          // No share on top of the others' still paced by, a continue-as-new in between or not (a
          // run that forgot them gave its first reporter the whole rate beside them).
          const others = [...live].filter(([w, l]) => w !== report.worker && l.until > now).reduce((n, [, l]) => n + l.rate, 0);
          expect(grant.rate, `share beside others' ${others}: ${seen}`).toBeLessThanOrEqual(
            Math.max(0, grant.accountRate - others) * (1 + 1e-9) + 1e-9,
          );
          live.set(report.worker, { rate: grant.rate, until: now + LEASE_MS });
        }
        const carried = JSON.stringify(pace.state());
        expect(carried, 'a carried state with null in it (NaN or Infinity through JSON)').not.toContain('null');
        // A floor learned or a limit shown stays found, a continue-as-new in between or not: from
        // then on only answers under half the known-good pace are trusted as no limit's.
        if (found) expect(pace.state().found, 'found, then forgotten').toBe(true);
        found = pace.state().found === true;
        // The probe's speed stays between an eighth and full, however costly or noisy its cycles.
        const { probeScale } = pace.state();
        expect(probeScale! >= 1 / 8 && probeScale! <= 1, `probe speed ${probeScale}`).toBe(true);
      }
    }),
    { numRuns: 500 },
  );
});

it("a probing cycle's 429s set the next probe's speed between an eighth and full: over the budget it slows, within it never", () => {
  const cycle = fc.record({
    reports: fc.integer({ min: 1, max: 40 }),
    share429: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 0.3, noNaN: true })),
  });
  fc.assert(
    fc.property(fc.array(cycle, { minLength: 1, maxLength: 12 }), (cycles) => {
      const pace = new FleetPace({ rate: 40, slowStart: false, lastCutAt: 1_000_000 });
      let now = 1_000_000;
      for (const c of cycles) {
        const before = pace.state().probeScale!;
        const rate = pace.state().rate;
        for (let i = 0; i < c.reports; i++, now += 1000)
          pace.report({ worker: 'a', want: 2 * rate, accepted: rate * (1 - c.share429), limited: rate * c.share429 }, now);
        pace.overshoot(now + 1000, now);
        // Past the hold and SAME_OVERSHOOT_MS: the next overshoot is one of its own, and cuts.
        now += 3000;
        const after = pace.state().probeScale!;
        expect(after >= 1 / 8 && after <= 1, `probe speed ${after}`).toBe(true);
        // A cycle of fewer than 50 answers tells too little; one within half a percent never slows
        // it; one over it slows it straight to the budget (by half at most, four workers with a
        // charging limiter met 10-12 a second three times in 75 s).
        // 429s at a rate far under what the API accepted before are learned as noise: the search
        // for the limit starts again, at full speed, and its first overshoot may refute the floor
        // (a limit that fell: FleetNoiseFloor.refuted), ending it there (settling).
        if (pace.noiseFloor().share > 0 || pace.state().settling) expect(after).toBe(1);
        else if (c.share429 <= 0.005 || c.reports * rate < 50) expect(after).toBeGreaterThanOrEqual(before * (1 - 1e-9));
        else expect(after).toBeLessThanOrEqual(Math.max(1 / 8, (before * 0.005) / c.share429) * (1 + 1e-9));
      }
    }),
    { numRuns: 300 },
  );
});
