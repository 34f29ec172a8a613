/**
 * The noise floor on its own (pacing/noise-floor.ts): when the 429s of fresh calls (sent
 * right after a hold of the fleet) are taken for noise and when never, how later 429s are judged
 * against it, how it follows noise that stops; and the tally of answers its windows are counted
 * from (pacing/answer-tally.ts).
 */
import { describe, expect, it } from 'vitest';
import { AnswerTally } from '../pacing/answer-tally';
import { NoiseFloor } from '../pacing/noise-floor';

/** `answers` fresh answers, every `every`-th of them a 429. */
function fresh(floor: NoiseFloor, answers: number, every: number): void {
  for (let i = 1; i <= answers; i++) floor.noteFresh(every > 0 && i % every === 0);
}

describe('NoiseFloor', () => {
  it('without noise, any 429 says "too fast"', () => {
    const floor = new NoiseFloor();
    expect(floor.share).toBe(0);
    expect(floor.exceeded({ answers: 500, limited: 1 })).toBe(true);
    expect(floor.exceeded({ answers: 500, limited: 0 })).toBe(false);
    // Fresh calls without 429s, as under a limit alone, teach no floor.
    fresh(floor, 200, 0);
    expect(floor.share).toBe(0);
  });

  it('takes the share of 429s among fresh calls for noise, and judges later 429s against it', () => {
    const floor = new NoiseFloor();
    fresh(floor, 40, 10);
    expect(floor.share).toBeCloseTo(0.1, 5);
    // The same share in the last seconds is the noise's: no hold, no cut.
    expect(floor.exceeded({ answers: 50, limited: 5 })).toBe(false);
    expect(floor.exceeded({ answers: 50, limited: 8 })).toBe(false);
    // Clearly more is a limit's as well.
    expect(floor.exceeded({ answers: 50, limited: 20 })).toBe(true);
    // Too few answers to tell a share from the floor: not judged "too fast" yet.
    expect(floor.exceeded({ answers: 10, limited: 3 })).toBe(false);
  });

  it('needs enough fresh answers and more than one 429 among them', () => {
    const one = new NoiseFloor();
    fresh(one, 14, 7); // 2 of 14: too few answers
    expect(one.share).toBe(0);
    one.noteFresh(false);
    expect(one.share).toBeCloseTo(2 / 15, 5);
    const stray = new NoiseFloor();
    fresh(stray, 100, 100); // a single 429 in 100: a limit's stray, not noise
    expect(stray.share).toBe(0);
  });

  it('never takes a share as high as a limit far below the pace for noise', () => {
    const floor = new NoiseFloor();
    fresh(floor, 60, 2);
    expect(floor.share).toBe(0);
    expect(floor.exceeded({ answers: 50, limited: 1 })).toBe(true);
  });

  it('is bounded by the last minute, and forgotten when that minute has no more than strays', () => {
    const floor = new NoiseFloor();
    fresh(floor, 100, 10);
    floor.check({ answers: 600, limited: 18 }); // 3 % lately: the noise dropped
    expect(floor.share).toBeGreaterThan(0.03);
    expect(floor.share).toBeLessThan(0.05);
    floor.check({ answers: 600, limited: 0 }); // the noise stopped
    expect(floor.share).toBe(0);
    expect(floor.exceeded({ answers: 50, limited: 1 })).toBe(true);
    // Too few answers lately say nothing.
    fresh(floor, 100, 10);
    floor.check({ answers: 100, limited: 0 });
    expect(floor.share).toBeCloseTo(0.1, 5);
  });

  it("does not take the fleet's pool of fresh answers back while the last minute holds only a limit's strays", () => {
    // The pool keeps its last 300 answers, and beside a limit few holds bring new ones: a worker
    // that read it every 10 s after a limit's 429 took the noise that had stopped minutes before
    // back each time, and check() forgot it again (floors of 0.005-0.008 flickering to the end).
    const floor = new NoiseFloor();
    fresh(floor, 100, 10);
    floor.check({ answers: 2400, limited: 1 });
    expect(floor.share).toBe(0);
    floor.replaceFresh({ answers: 300, limited: 30 });
    expect(floor.share).toBe(0);
    expect(floor.freshCount).toBe(0);
    // While the last minute holds more 429s than strays, the pool is taken as before.
    floor.check({ answers: 2400, limited: 60 });
    floor.replaceFresh({ answers: 300, limited: 30 });
    expect(floor.share).toBeGreaterThan(0.02);
  });

  it("the fleet's floor is bounded by the last minute, and not used once this worker's fresh answers clearly show less", () => {
    // A worker whose own fresh answers came clean took the fleet's old floor again, and hid the
    // limit's 429s in its margin (noise that stopped beside a limit: 3-7 % 429s).
    const floor = new NoiseFloor();
    floor.setFleetFloor({ share: 0.1, answers: 300 });
    expect(floor.share).toBeCloseTo(0.1, 5);
    floor.check({ answers: 600, limited: 12 }); // 2 % lately, at every pace
    expect(floor.share).toBeGreaterThan(0.02);
    expect(floor.share).toBeLessThan(0.04);
    const clean = new NoiseFloor();
    clean.setFleetFloor({ share: 0.1, answers: 300 });
    fresh(clean, 100, 0);
    expect(clean.share).toBe(0);
  });

  it("led by the fleet's pace, a worker uses the fleet's floor, not its own fresh answers' above it; paced alone, its own", () => {
    // After noise stopped, a worker's own floor of 0.1-0.2 (fresh answers no later hold renewed)
    // hid a limit's 429s of 8-31 % for minutes though the fleet had forgotten its floor.
    const led = new NoiseFloor();
    fresh(led, 40, 10);
    led.setFleetFloor({ share: 0, answers: 0 });
    expect(led.share).toBe(0);
    led.setFleetFloor({ share: 0.05, answers: 300 });
    expect(led.share).toBeCloseTo(0.05, 5);
    // The fleet's pace stopped answering: this worker's own floor again.
    led.setFleetFloor(null, false);
    expect(led.share).toBeCloseTo(0.1, 5);
  });

  it('drops older fresh answers when the newest hold clearly fewer 429s: noise that stopped ends the floor in 150 answers, not 300', () => {
    const floor = new NoiseFloor();
    fresh(floor, 150, 10);
    fresh(floor, 150, 0);
    expect(floor.share).toBe(0);
    // Noise that goes on, unevenly spread, is kept.
    const lasting = new NoiseFloor();
    fresh(lasting, 150, 10);
    fresh(lasting, 150, 12);
    expect(lasting.share).toBeGreaterThan(0.08);
  });

  it('follows the last 300 fresh answers: noise that stops among them ends the floor', () => {
    const floor = new NoiseFloor();
    fresh(floor, 100, 10);
    fresh(floor, 300, 0);
    expect(floor.share).toBe(0);
  });
});

describe('AnswerTally', () => {
  it('counts answers and 429s over windows, further back until it has enough, never before a given time', () => {
    const tally = new AnswerTally(60_000);
    for (let t = 0; t < 20_000; t += 100) tally.add(t, t % 1000 === 0); // 10 a second, 1 a second a 429
    expect(tally.since(10_000)).toEqual({ answers: 100, limited: 10 });
    const t = 20_000;
    expect(tally.lately(t, { ms: 5_000, answers: 10, maxMs: 30_000, notBefore: 0 })).toEqual({ answers: 50, limited: 5 });
    // 5 s have 50 answers; 120 take going back to 20 s (the window doubles: 10 s, then 20 s).
    expect(tally.lately(t, { ms: 5_000, answers: 120, maxMs: 30_000, notBefore: 0 })).toMatchObject({ answers: 200, limited: 20 });
    expect(tally.lately(t, { ms: 5_000, answers: 120, maxMs: 30_000, notBefore: 17_000 })).toMatchObject({ answers: 30, limited: 3 });
  });

  it('keeps only the last minutes', () => {
    const tally = new AnswerTally(10_000);
    tally.add(0, true);
    tally.add(30_000, false);
    expect(tally.since(0)).toEqual({ answers: 1, limited: 0 });
  });
});
