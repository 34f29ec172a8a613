/**
 * The shipping API's answers of the last minutes, counted in quarter seconds: how many, and how
 * many were 429s, over any recent window (the account pacer's shares of 429s).
 */
import type { Answers } from './noise-floor';

const SLOT_MS = 250;

export class AnswerTally {
  private readonly slots: Array<{ slot: number; answers: number; limited: number }> = [];

  constructor(private readonly keptMs: number) {}

  add(t: number, limited: boolean): void {
    const slot = Math.floor(t / SLOT_MS);
    let last = this.slots.at(-1);
    if (!last || last.slot !== slot) {
      last = { slot, answers: 0, limited: 0 };
      this.slots.push(last);
    }
    last.answers++;
    if (limited) last.limited++;
    while (this.slots[0]!.slot < slot - this.keptMs / SLOT_MS) this.slots.shift();
  }

  /** The answers from `from` on (to the quarter second). */
  since(from: number): Answers {
    const first = Math.floor(from / SLOT_MS);
    const total = { answers: 0, limited: 0 };
    for (let i = this.slots.length - 1; i >= 0 && this.slots[i]!.slot >= first; i--) {
      total.answers += this.slots[i]!.answers;
      total.limited += this.slots[i]!.limited;
    }
    return total;
  }

  /**
   * The answers of the last `ms` before `t`, or further back (doubling, up to `maxMs`) until
   * at least `answers` came, but never from before `notBefore`.
   */
  lately(t: number, { ms, answers, maxMs, notBefore }: { ms: number; answers: number; maxMs: number; notBefore: number }): Answers {
    let from = Math.max(notBefore, t - ms);
    let window = this.since(from);
    for (let back = ms * 2; window.answers < answers && back <= maxMs && from > notBefore; back *= 2) {
      from = Math.max(notBefore, t - back);
      window = this.since(from);
    }
    return window;
  }
}
