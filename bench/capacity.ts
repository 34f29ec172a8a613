/**
 * The capacity model (docs/capacity.md) against a measured fleet on the production topology:
 * `npm run cluster` (PostgreSQL, the Temporal server on it, two worker processes, the fake API),
 * N shipments started at once and tracked to delivery. The model is given only what a user would
 * give it (shipments, how long a label is tracked, the poll cadence, the shards) and predicts each
 * total; the run measures the same totals from the histories, the fake's counters and /proc.
 */
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { startCluster } from '../cluster/process';
import { startShipment } from '../order-import/start-shipment';
import { TRACKING_POLLER_DEFAULTS } from '../config/settings';
import { WORKFLOW_TYPE, type ShipmentOutcome } from '../workflow-definitions/shipment';
import { TRACKING_POLLER_WORKFLOW_TYPE } from '../workflow-definitions/tracking-poller';
import { estimateActions, pollerActions } from './history';
import { benchOrder } from './orders';
import { BENCH_CREDENTIALS, cpuMs, median } from './stack';

const WORKFLOW_TASK_COMPLETED = temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED;

/** The unit costs docs/capacity.md states (its "Unit costs" table and "The model"). */
export const MODEL = {
  eventsPerShipment: 38,
  /** The shipment's own 12 (in its history) and its joining signal (in its shard's). */
  actionsPerShipment: 13,
  joiningSignalsPerShipment: 1,
  /** A span: its activity and continue-as-new, and a heartbeat every 30 s. */
  shardActionsPerSpan: 2,
  heartbeatEverySeconds: 30,
  spanSeconds: TRACKING_POLLER_DEFAULTS.spanMs / 1000,
  /** A label and an order read, then one call a poll. */
  apiCallsBeforePolls: 2,
  historyKbPerShipment: 33,
  /** Worker CPU: to bring a shipment to tracking, and a poll (the docs' 2 to 6 ms: the middle). */
  cpuMsPerShipment: 60,
  cpuMsPerPoll: 4,
} as const;

export interface CapacityOptions {
  shipments: number;
  /** The fake's time between tracking stages: a label is delivered 4 steps after it is made. */
  trackingStepMs: number;
  pollIntervalMs: number;
  log: (m: string) => void;
}

export interface CapacityRow {
  what: string;
  predicted: number;
  measured: number;
  /** measured ÷ predicted */
  ratio: number;
  /** within 25 % either way */
  met: boolean;
}

export interface CapacityResults {
  shipments: number;
  workers: number;
  shards: number;
  trackedSeconds: number;
  pollIntervalSeconds: number;
  wallSeconds: number;
  shipmentsPerSecond: number;
  rows: CapacityRow[];
}

/** What the model predicts for this fleet, from its inputs only. */
export function predict(o: {
  shipments: number;
  trackedSeconds: number;
  pollIntervalSeconds: number;
  shards: number;
  activeSeconds: number;
}) {
  const polls = o.trackedSeconds / o.pollIntervalSeconds + 1;
  const spans = Math.ceil(o.activeSeconds / MODEL.spanSeconds);
  const shardActions = o.shards * (spans * MODEL.shardActionsPerSpan + o.activeSeconds / MODEL.heartbeatEverySeconds);
  return {
    polls,
    events: o.shipments * MODEL.eventsPerShipment,
    actions: o.shipments * MODEL.actionsPerShipment + shardActions,
    apiCalls: o.shipments * (MODEL.apiCallsBeforePolls + polls),
    historyKb: o.shipments * MODEL.historyKbPerShipment,
    workerCpuSeconds: (o.shipments * (MODEL.cpuMsPerShipment + MODEL.cpuMsPerPoll * polls)) / 1000,
  };
}

export async function capacityScenario(o: CapacityOptions): Promise<CapacityResults> {
  o.log(`capacity: starting npm run cluster (PostgreSQL, Temporal, 2 workers)`);
  const cluster = await startCluster({
    workers: 2,
    trackingStepMs: o.trackingStepMs,
    env: {
      TRACKING_POLL_INTERVAL: `${o.pollIntervalMs}ms`,
      SHIPPING_API_KEY: BENCH_CREDENTIALS.apiKey,
      SHIPPING_API_TOKEN: BENCH_CREDENTIALS.apiToken,
    },
  });
  try {
    const status = await cluster.status();
    const workers = status.services.filter((s) => s.name.startsWith('worker-') && s.pid !== null).map((s) => s.pid!);
    const connection = await Connection.connect({ address: status.temporalAddress });
    const client = new Client({ connection, namespace: status.namespace });
    try {
      const cpuBefore = workers.map(cpuMs);
      const statsBefore = await apiCalls(status.shippingApi);
      const started = Date.now();
      o.log(`capacity: starting ${o.shipments} shipments`);
      const ids = await startAll(client, status.taskQueue, o.shipments, started);
      await waitForAll(client, ids, o.log);
      const wallSeconds = (Date.now() - started) / 1000;
      const cpuSeconds = workers.map((pid, i) => cpuMs(pid) - cpuBefore[i]!).reduce((a, b) => a + b, 0) / 1000;
      const callsAfter = await apiCalls(status.shippingApi);
      const calls = callsAfter.all - statsBefore.all;
      const trackingCalls = callsAfter.tracking - statsBefore.tracking;
      o.log(`capacity: reading ${ids.length} histories and the shards'`);
      const measured = await histories(client, ids);
      const shards = await shardCount(client, status.taskQueue);
      const shardActions = await pollerActions(client, status.taskQueue);
      const model = predict({
        shipments: o.shipments,
        trackedSeconds: (4 * o.trackingStepMs) / 1000,
        pollIntervalSeconds: o.pollIntervalMs / 1000,
        shards,
        // The shards have labels from the first label to the last delivery: the run, less its start.
        activeSeconds: wallSeconds,
      });
      const row = (what: string, predicted: number, value: number): CapacityRow => {
        const ratio = Math.round((value / predicted) * 1000) / 1000;
        return { what, predicted: round(predicted), measured: round(value), ratio, met: ratio >= 0.75 && ratio <= 1.25 };
      };
      return {
        shipments: o.shipments,
        workers: workers.length,
        shards,
        trackedSeconds: (4 * o.trackingStepMs) / 1000,
        pollIntervalSeconds: o.pollIntervalMs / 1000,
        wallSeconds: round(wallSeconds),
        shipmentsPerSecond: round(o.shipments / wallSeconds),
        rows: [
          row('history events (all shipments)', model.events, measured.events),
          row('Temporal actions: shipments + shards (est.)', model.actions, measured.actions + shardActions),
          row(
            '  of which the shards (joins, spans, heartbeats)',
            model.actions - o.shipments * (MODEL.actionsPerShipment - MODEL.joiningSignalsPerShipment),
            shardActions,
          ),
          row('shipping API calls', model.apiCalls, calls),
          row('  of which GET /tracking (polls)', o.shipments * model.polls, trackingCalls),
          row('history written, KB (as JSON)', model.historyKb, measured.bytes / 1024),
          row('worker CPU seconds (both workers)', model.workerCpuSeconds, cpuSeconds),
        ],
      };
    } finally {
      await connection.close();
    }
  } finally {
    await cluster.stop();
  }
}

/** Starts the fleet 20 at a time (an import's pace is not what is measured). */
async function startAll(client: Client, taskQueue: string, n: number, stamp: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 20) {
    const batch = Array.from({ length: Math.min(20, n - i) }, (_, k) => benchOrder(`C-${stamp}-${i + k}`));
    const results = await Promise.all(batch.map((input) => startShipment(client, taskQueue, input)));
    for (const r of results) {
      if (r.status !== 'started') throw new Error(`capacity: a bench order was not started (${r.status})`);
      ids.push(r.workflowId);
    }
  }
  return ids;
}

async function waitForAll(client: Client, ids: string[], log: (m: string) => void): Promise<void> {
  const deadline = Date.now() + 30 * 60_000;
  let lastLog = 0;
  for (;;) {
    const open = (await client.workflow.count(`WorkflowType = '${WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`)).count;
    if (open === 0) break;
    if (Date.now() > deadline) throw new Error(`capacity: ${open} of ${ids.length} shipments still open after 30 minutes`);
    if (Date.now() - lastLog > 15_000) {
      log(`capacity: ${open} of ${ids.length} shipments open`);
      lastLog = Date.now();
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
  // Every one delivered: anything else would measure a different path.
  for (const id of ids.slice(0, 50)) {
    const outcome = (await client.workflow.getHandle(id).result()) as ShipmentOutcome;
    if (outcome.outcome !== 'delivered') throw new Error(`capacity: ${id} ended ${outcome.outcome}`);
  }
}

/** Events, actions and JSON bytes over every run of each shipment. */
async function histories(client: Client, ids: string[]) {
  const totals = { events: 0, actions: 0, bytes: 0, workflowTasks: [] as number[] };
  for (let i = 0; i < ids.length; i += 20) {
    await Promise.all(
      ids.slice(i, i + 20).map(async (id) => {
        let runId: string | undefined;
        let tasks = 0;
        do {
          const history = await client.workflow.getHandle(id, runId).fetchHistory();
          const events = history.events ?? [];
          totals.events += events.length;
          totals.actions += estimateActions(events);
          totals.bytes += Buffer.byteLength(historyToJSON(history));
          tasks += events.filter((e) => e.eventType === WORKFLOW_TASK_COMPLETED).length;
          runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
        } while (runId);
        totals.workflowTasks.push(tasks);
      }),
    );
  }
  return { ...totals, medianWorkflowTasks: median(totals.workflowTasks) };
}

async function shardCount(client: Client, taskQueue: string): Promise<number> {
  const ids = new Set<string>();
  const query = `WorkflowType = '${TRACKING_POLLER_WORKFLOW_TYPE}' AND TaskQueue = '${taskQueue}'`;
  for await (const run of client.workflow.list({ query })) ids.add(run.workflowId);
  return ids.size;
}

/** Every request the fake answered, and its tracking reads (its admin calls are not counted). */
async function apiCalls(baseUrl: string): Promise<{ all: number; tracking: number }> {
  const res = await fetch(`${baseUrl}/__admin/stats`);
  const stats = (await res.json()) as { requests: Record<string, Record<string, number>> };
  const sum = (byStatus: Record<string, number> = {}) => Object.values(byStatus).reduce((a, b) => a + b, 0);
  return {
    all: Object.values(stats.requests).reduce((total, byStatus) => total + sum(byStatus), 0),
    tracking: sum(stats.requests['GET /tracking']),
  };
}

const round = (n: number) => Math.round(n * 100) / 100;
