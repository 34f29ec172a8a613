/** A chaos run's result: each path checked against what its fake saw (./checks.ts), and the run's events. */
import type { FakeAccount, FakeRequest, FakeShippingApi } from '../fake-shipping-api/server';
import {
  accountWideViolations,
  checkLabels,
  credentialLeaks,
  failuresOf,
  formatTable,
  logVolume,
  retryAfterViolations,
  type PathResult,
  type ShipmentCounts,
} from './checks';

export interface ChaosReport {
  ours: PathResult;
  plain: PathResult;
  /** What our path failed (empty = exit code 0). */
  failures: string[];
  table: string;
  events: {
    workerKills: number;
    scriptKills: number;
    scriptStarts: number;
    scriptFinished: boolean;
    serverRestarts: number;
    serverDownMs: number | null;
    /** When the restart began (ISO). */
    serverRestartAt: string | null;
    importRuns: Array<{ exitCode: number | null; counts: unknown }>;
    settledAfterFaultsMs: number | null;
    /** The random 429s went on while settling (--keep-429s). */
    keep429s: boolean;
  };
  stats: { ours: ReturnType<FakeShippingApi['stats']>; plain: ReturnType<FakeShippingApi['stats']> };
  /** The fakes' request logs, for the test to check the checks against. */
  logs: { ours: FakeRequest[]; plain: FakeRequest[] };
  elapsedMs: number;
  /**
   * Our path's shipments finished over the seconds from the start of the run to the last one
   * finished: with the same seed, a run with --keep-429s beside one without shows what the
   * noise costs. Null when none finished.
   */
  throughput: { finished: number; seconds: number; perMinute: number } | null;
  workDir: string;
}

/** The events of a run before anything happened. */
export function noEvents(): ChaosReport['events'] {
  return {
    workerKills: 0,
    scriptKills: 0,
    scriptStarts: 0,
    scriptFinished: false,
    serverRestarts: 0,
    serverDownMs: null,
    serverRestartAt: null,
    importRuns: [],
    settledAfterFaultsMs: null,
    keep429s: false,
  };
}

export interface PathEvidence {
  fake: FakeShippingApi;
  account: FakeAccount;
  shipments: ShipmentCounts | null;
  /** What its processes printed (and, ours, the SQLite file), for the credential check. */
  outputs: Array<{ name: string; text: string }>;
}

export function chaosReport(r: {
  orderNumbers: string[];
  ours: PathEvidence;
  plain: PathEvidence;
  events: ChaosReport['events'];
  started: number;
  workDir: string;
}): ChaosReport {
  const check = (name: string, e: PathEvidence, logs: PathResult['logs'] = null): PathResult => {
    const requests = e.fake.requestLog();
    return {
      path: name,
      labels: checkLabels(r.orderNumbers, e.fake.labels(), requests, e.account.name),
      retryAfter: retryAfterViolations(requests),
      accountWide: accountWideViolations(requests),
      shipments: e.shipments,
      leaks: credentialLeaks(e.outputs, [e.account.apiKey, e.account.apiToken]),
      logs,
    };
  };
  const workerLogs = logVolume(r.ours.outputs.filter((o) => o.name.startsWith('worker-')).map((o) => o.text));
  const ours = check('ours (import + 2 workers, Temporal)', r.ours, workerLogs);
  const plain = check('plain script (SDK-style)', r.plain);
  return {
    ours,
    plain,
    failures: failuresOf(ours),
    table: formatTable([ours, plain]),
    events: r.events,
    stats: { ours: r.ours.fake.stats(), plain: r.plain.fake.stats() },
    logs: { ours: r.ours.fake.requestLog(), plain: r.plain.fake.requestLog() },
    elapsedMs: Date.now() - r.started,
    throughput: throughputOf(r.ours.shipments, r.started),
    workDir: r.workDir,
  };
}

/** Shipments finished a minute, from the start of the run to the last one finished. */
function throughputOf(shipments: ShipmentCounts | null, started: number): ChaosReport['throughput'] {
  if (!shipments || shipments.finished === 0 || shipments.lastFinishedAt === null) return null;
  const seconds = Math.max(1, (shipments.lastFinishedAt - started) / 1000);
  return {
    finished: shipments.finished,
    seconds: Math.round(seconds),
    perMinute: Math.round((shipments.finished / seconds) * 60 * 10) / 10,
  };
}
