/** What a chaos run is given (the command line's flags), and its defaults. */
export interface ChaosOptions {
  orders: number;
  seed: number;
  /** How long the faults and kills last. */
  durationMs: number;
  /** Hard limit of the whole run, start-up and checks included. */
  deadlineMs: number;
  /** Kill a worker (and, separately, the plain script) every minKillMs..maxKillMs. */
  minKillMs: number;
  maxKillMs: number;
  /** Length of one tracking stage of the fakes: a label is delivered after 4 of them. */
  trackingStepMs: number;
  /** The random 429s go on after the fault phase (429s no pace causes), while the shipments settle. */
  keep429s?: boolean;
  /** Progress lines (stderr in the CLI). */
  log: (line: string) => void;
  /** Aborts the run early (signals): it still checks what it has and stops everything. */
  signal?: AbortSignal;
}

export const DEFAULT_OPTIONS: Omit<ChaosOptions, 'log'> = {
  orders: 300,
  seed: 1,
  durationMs: 240_000,
  deadlineMs: 570_000,
  minKillMs: 5_000,
  maxKillMs: 10_000,
  trackingStepMs: 2_000,
};
