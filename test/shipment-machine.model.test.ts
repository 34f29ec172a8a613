/**
 * The shipment's machine (domain/shipment-machine/) played over random interleavings: labels
 * answered late, stopped or rejected, tracking news repeated and out of order, shards lost, the
 * merchant cancelling, holding and changing the order while operators resubmit, relabel, cancel
 * and resolve, deadlines passing, workers lost mid-task (the same events replayed), and a
 * Temporal cancellation ending the run at any step (`runEnded`: the run still takes messages
 * while it hands the shop its last events, its calls and timers cancelled). Every
 * invariant is checked after every step (test/helpers/shipment-world.ts). The same test finds
 * each of the defects of issue 45 on the rules as they were before their fixes
 * (test/helpers/shipment-rules-before-fixes.ts).
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { shipmentMachine, type MachineState, type ShipmentEvent, type ShipmentMachine } from '../domain/shipment-machine';
import type { ShopOrderChange } from '../domain/shop-order';
import { validateRelabel } from '../workflows/shipment/relabel';
import { validateResubmit } from '../workflows/shipment/run';
import { validateChange, validateResolve } from '../workflows/shipment/shop-changes';
import { machineBefore, type Defect } from './helpers/shipment-rules-before-fixes';
import { ACTIONS, InvariantBroken, startOf, World, type ActionKind, type Choice, type Req } from './helpers/shipment-world';

const WEIGHTS: Record<ActionKind, number> = {
  labelAnswer: 6,
  orderAnswer: 4,
  news: 6,
  shardLost: 1,
  merchant: 6,
  resubmit: 2,
  relabel: 6,
  cancel: 1,
  resolve: 1,
  redeliver: 1,
  deadline: 1,
  repeat: 2,
  lostWorker: 1,
  runEnded: 1,
};

/**
 * Swarm testing: each run draws the kinds of event it plays (a run without tracking news, one
 * without the merchant, ...), so rarer meetings, such as a relabel that meets a cancel, come
 * about within a few hundred runs instead of tens of thousands.
 */
const sequences = fc
  .tuple(fc.constantFrom('shopify', 'woocommerce', null), fc.subarray([...ACTIONS], { minLength: 6 }))
  .chain(([connector, kinds]) =>
    fc.tuple(
      fc.constant(connector),
      fc.array(
        fc.record({
          kind: fc.oneof(...kinds.map((kind) => ({ arbitrary: fc.constant(kind), weight: WEIGHTS[kind] }))),
          a: fc.nat(1000),
          b: fc.nat(1000),
        }),
        { minLength: 1, maxLength: 50 },
      ),
    ),
  );

/** Plays one sequence; throws the first invariant it breaks. */
function play(machine: ShipmentMachine<Req>, connector: string | null, choices: Choice[]): void {
  const world = new World(machine, startOf(connector));
  for (const c of choices) world.play(c);
  world.replay();
  world.runOutTheClock();
}

const property = (machine: ShipmentMachine<Req>) =>
  fc.property(sequences, ([connector, choices]) => {
    play(machine, connector, choices);
  });

/** The invariant each defect breaks first. */
const DEFECTS: Array<{ defect: Defect; seed: number; broken: RegExp }> = [
  { defect: 'relabel erases cancel', seed: 1, broken: /nothing written to a withdrawn order|never erases a merchant's later change/ },
  { defect: 'terminal answer ignored', seed: 1, broken: /tracking is never orphaned|a terminal tag ends tracking/ },
  { defect: 'shard loss ignored', seed: 1, broken: /tracking is never orphaned/ },
  { defect: 'rejection told to a cancelled order', seed: 2, broken: /nothing written to a withdrawn order/ },
  { defect: 'release erases a change mark', seed: 2, broken: /never erases a merchant's later change/ },
  { defect: 'same-second reading out of order', seed: 1, broken: /a reading read earlier is never taken after a later one/ },
];

/**
 * Runs per check, and fixed seeds so a failure is reproduced exactly. Over seeds 1 to 30, the
 * rules before each fix broke within 2,000 runs: the relabel in 26 of 30 seeds (median 899 runs),
 * the terminal answer and the lost shard in all 30 (medians 63 and 16); the two defects the model
 * found in today's code, the told rejection in 28 (median 631) and the erased mark in 13 of 30
 * (median 966); the same-second reading taken out of order (without the read order, `readAt`) in
 * all 30 (median 197 runs). At the seeds above: 1,293, 102, 18, 1,024, 603 and 797 runs. Since
 * `runEnded` became an action (it ends a sequence's shipment early): before it, 27, 30, 30, 27, 18
 * and 30 seeds (medians 616, 53, 15, 955, 792, 251), and 642, 43, 30, 72, 119 and 607 runs at the seeds.
 */
const RUNS = 2_000;
const SEED = 1;

/**
 * What the workflow's validator of an update answers for `e` on a shipment whose machine is in
 * `s` (null: taken; undefined: `e` is no update). Its run as in the usual case: no resubmit on its
 * way to the label step, a relabel's handler running while the machine relabels.
 */
function validatorAnswer(s: MachineState<Req>, e: ShipmentEvent<Req>): string | null | undefined {
  const machine = shipmentMachine<Req>();
  const run = {
    refusal: (event: ShipmentEvent<Req>) => machine.refusal(s, event),
    relabelling: s.relabel !== null,
    correction: null,
    machine: s,
  } as unknown as Parameters<typeof validateResubmit>[0] & Parameters<typeof validateRelabel>[0];
  const answer = (validate: () => void): string | null => {
    try {
      validate();
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  };
  switch (e.type) {
    case 'shopChanged': {
      const change = {
        facts: e.facts,
        modifiedAt: e.modifiedAt,
        ...(e.readAt !== undefined ? { readAt: e.readAt } : {}),
        ...(e.labelRequest !== undefined ? { labelRequest: e.labelRequest } : {}),
        ...(e.problems === true ? { problems: [{ field: 'shipTo.address', message: 'required' }] } : {}),
        ...(e.linesLeft === true ? { linesLeft: true } : {}),
      } as unknown as ShopOrderChange;
      return answer(() => validateChange(run, change));
    }
    case 'resubmitted':
      return answer(() => validateResubmit(run, { labelRequest: e.labelRequest as never, acceptMismatch: true }));
    case 'relabelRequested':
      return answer(() => validateRelabel(run, { modifiedAt: e.modifiedAt }));
    case 'attentionResolved':
      return answer(() => validateResolve(run, { by: 'anna', note: 'checked' }));
    default:
      return undefined;
  }
}

describe('the shipment machine over random interleavings', () => {
  test.prop([sequences], { numRuns: RUNS, seed: SEED })(
    `keeps every invariant over ${RUNS} random event sequences`,
    ([connector, choices]) => {
      play(shipmentMachine<Req>(), connector, choices);
    },
  );

  it("the workflow's update validators take and refuse what the machine does, in its words", () => {
    const machine = shipmentMachine<Req>();
    const met = new Set<string>();
    const agree = fc.property(sequences, ([connector, choices]) => {
      const world = new World(machine, startOf(connector));
      world.offered = (s, e) => {
        const validator = validatorAnswer(s, e);
        if (validator === undefined) return;
        const why = machine.refusal(s, e);
        met.add(`${e.type} ${why === null ? 'taken' : 'refused'}`);
        if (world.endedByRun) met.add(`${e.type} ${why === null ? 'taken' : 'refused'} after runEnded`);
        if (why === null) expect(validator, `${e.type} in ${s.phase}`).toBeNull();
        else expect(validator, `${e.type} in ${s.phase}`).toContain(why);
      };
      for (const c of choices) world.play(c);
    });
    fc.assert(agree, { numRuns: RUNS / 2, seed: SEED });
    // Each update was both taken and refused over the runs, and refused (never taken) after a Temporal cancellation ended the run.
    expect([...met].sort()).toEqual(
      ['attentionResolved', 'relabelRequested', 'resubmitted', 'shopChanged'].flatMap((t) => [
        `${t} refused`,
        `${t} refused after runEnded`,
        `${t} taken`,
      ]),
    );
  });

  it.each(DEFECTS)(`finds "$defect" on the rules before its fix, within the test's ${RUNS} runs`, ({ defect, seed, broken }) => {
    const result = fc.check(property(machineBefore<Req>([defect])), { numRuns: RUNS, seed });
    expect(result.failed).toBe(true);
    console.info(`${defect}: broken after ${result.numRuns} runs (seed ${seed}): ${(result.errorInstance as Error).message}`);
    const error = result.errorInstance;
    expect(error).toBeInstanceOf(InvariantBroken);
    expect((error as InvariantBroken).message).toMatch(broken);
    // The shrunk counterexample passes on today's machine.
    const [connector, choices] = result.counterexample![0];
    expect(() => play(shipmentMachine<Req>(), connector, choices)).not.toThrow();
  });
});
