/** The faults of a chaos run: on for its chaos phase, off for the settling. */
import type { Faults } from '../fake-shipping-api/server';

/** The faults both fakes get for the chaos phase. */
export const CHAOS_FAULTS: Partial<Faults> = {
  rateLimitedRate: 0.1,
  rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 5 },
  serverErrorRate: 0.1,
  hangRate: 0.02,
  lostAnswerRate: 0.03,
  malformedRate: 0.02,
};

export const NO_FAULTS: Partial<Faults> = { rateLimitedRate: 0, serverErrorRate: 0, hangRate: 0, lostAnswerRate: 0, malformedRate: 0 };

/** After the fault phase with --keep-429s: only the random 429s go on. */
export const ONLY_429S: Partial<Faults> = { ...NO_FAULTS, rateLimitedRate: CHAOS_FAULTS.rateLimitedRate! };
