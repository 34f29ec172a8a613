/**
 * The accounts bench's count of calls at once (bench/accounts.ts): a call that reached the API
 * within a tenth of the limit's interval after the one before, whichever order the log holds them in.
 */
import { describe, expect, it } from 'vitest';
import { callsAtOnce } from '../bench/accounts';

describe('calls at once', () => {
  it('counts a call within a tenth of the interval after the one before, in arrival order', () => {
    // An account of 2 a second: 500 ms apart on the grid, 50 ms is a tenth of it.
    expect(callsAtOnce([0, 500, 1000, 1500], 2)).toBe(0);
    expect(callsAtOnce([1000, 0, 1005, 500], 2)).toBe(1);
    expect(callsAtOnce([0, 49, 98, 600], 2)).toBe(2);
    expect(callsAtOnce([0, 50], 2)).toBe(0);
  });

  it('scales with the limit: 10 ms apart is at once at 5 a second, not at 20, where 4 ms is', () => {
    expect(callsAtOnce([0, 10], 5)).toBe(1);
    expect(callsAtOnce([0, 10], 20)).toBe(0);
    expect(callsAtOnce([0, 4], 20)).toBe(1);
    expect(callsAtOnce([], 20)).toBe(0);
  });
});
