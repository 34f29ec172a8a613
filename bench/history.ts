/**
 * History cost per shipment: events and workflow tasks for a delivery whose tracking stays
 * unchanged for N polls, tracking polled per fleet against today's per-shipment tracking activity
 * (the code at PER_SHIPMENT_TRACKING_COMMIT), in the same run on one server. The fake advances
 * tracking every `polls per stage` polls of a label, so both paths see the same five tracking
 * answers (404, Pending, InfoReceived, InTransit, Delivered) whatever the time. The fleet's row
 * adds each shipment's share of its poller shards: their runs' actions and their spans' heartbeats.
 * The shop rows run the fleet's shipments with a shop to tell (a webhook connector to the
 * reference receiver), now and at TOLD_AFTER_ITS_TASK_COMMIT: a shipment's history then grows with
 * the changes the shop hears of, not with polls.
 */
import { inProcessWorker } from './in-process-worker';
import { randomBytes } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { getWorkflowBundle, installQuietRuntime } from '../test/helpers/temporal-env';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi } from '../fake-shipping-api/server';
import type { ShipmentOutcome } from '../workflow-definitions/shipment';
import type { ShipmentInput } from '../domain/shipment';
import { defaultPayloadConverter } from '@temporalio/common';
import { baselineWorkflowBundle, PER_SHIPMENT_TRACKING_COMMIT, TOLD_AFTER_ITS_TASK_COMMIT } from './baseline';
import { startShopReceiver } from '../shop-receiver/server';
import { loadShopConnectors } from '../platforms/connectors';
import { TRACKING_POLLER_WORKFLOW_TYPE, type SpanResult } from '../workflow-definitions/tracking-poller';
import { benchOrder } from './orders';
import { actionsBetween, BENCH_ACCOUNTS, median, serverActions, type DevServer } from './stack';

const EVENT_WORKFLOW_TASK_COMPLETED = temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED;

export type HistoryPath = 'fleet pollers' | 'per-shipment activity' | 'fleet, shop told' | 'fleet, shop told (before)';

/** The paths that tell a shop: their shipments' shop has a webhook connector. */
const TELLS_SHOP: ReadonlySet<HistoryPath> = new Set(['fleet, shop told', 'fleet, shop told (before)']);
/** The paths measured side by side: the fleet beside the per-shipment activity, then the shop rows now beside before. */
const PAIRS: HistoryPath[][] = [
  ['fleet pollers', 'per-shipment activity'],
  ['fleet, shop told', 'fleet, shop told (before)'],
];
/** Each path's orders get their own prefix: workflow ids must not meet. */
const ORDER_PREFIX: Record<HistoryPath, string> = {
  'fleet pollers': 'F',
  'per-shipment activity': 'P',
  'fleet, shop told': 'S',
  'fleet, shop told (before)': 'B',
};

export interface HistoryRow {
  path: HistoryPath;
  polls: number;
  shipments: number;
  eventsPerShipment: number;
  workflowTasksPerShipment: number;
  runsPerShipment: number;
  /**
   * Temporal Cloud actions as its own estimate counts them from history: starts (continue-as-new
   * included), signals, timers, search-attribute upserts (not TemporalChangeVersion), one per
   * workflow task with markers, one per activity attempt; plus the heartbeats the pollers' spans
   * sent (not in history). For the fleet, the shipment's own and its share of the shards'.
   */
  actionsPerShipment: number;
  /** Of which the poller shards' share (fleet only). */
  pollerActionsPerShipment: number;
  /**
   * Fleet rows: the server's own `action` counter over a run of the fleet's shipments alone
   * (shards and heartbeats included), divided by its shipments; beside it, that run's estimate.
   */
  serverActionsPerShipment?: number;
  estimatedActionsAlone?: number;
  /** GET /tracking calls per poll the fake counted (1: polling itself costs no extra call). */
  callsPerPoll: number;
  wallSeconds: number;
}

export async function historyScenario(
  server: DevServer,
  pollCounts: number[],
  shipments: number,
  /** The per-shipment path runs only up to this many polls (its polls are server-side retries: about one a second on the dev server). */
  baselineMaxPolls: number,
  log: (m: string) => void,
): Promise<HistoryRow[]> {
  const rows: HistoryRow[] = [];
  installQuietRuntime();
  const connection = await NativeConnection.connect({ address: server.address });
  const bundles: Record<HistoryPath, Awaited<ReturnType<typeof getWorkflowBundle>>> = {
    'fleet pollers': await getWorkflowBundle(),
    'per-shipment activity': await baselineWorkflowBundle(PER_SHIPMENT_TRACKING_COMMIT),
    'fleet, shop told': await getWorkflowBundle(),
    'fleet, shop told (before)': await baselineWorkflowBundle(TOLD_AFTER_ITS_TASK_COMMIT),
  };
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const receiver = await startShopReceiver({ secrets: [secret] });
  const shopConnectors = loadShopConnectors({
    SHOP_CONNECTORS: JSON.stringify({ bench: { type: 'webhook', url: receiver.webhookUrl('bench'), secrets: [secret] } }),
  });
  try {
    for (const polls of pollCounts) {
      // 4 stages before the terminal answer: (polls - 1) / 4 polls each.
      const perStage = Math.max(1, Math.round((polls - 1) / 4));
      const fake = await startFakeShippingApi({
        port: 0,
        trackingStepPolls: perStage,
        accounts: BENCH_ACCOUNTS,
        requestLogSize: 4 * shipments * (polls + 10) + 10_000,
      });
      try {
        const run = (path: HistoryPath) =>
          runPath({ server, connection, fake, bundle: bundles[path], shopConnectors, path, perStage, shipments, log });
        // Each pair at once (the same load on the server for both of it), one pair after the other.
        for (const pair of PAIRS) {
          rows.push(...(await Promise.all(pair.filter((path) => path !== 'per-shipment activity' || polls <= baselineMaxPolls).map(run))));
        }
        // The server's own count, of the fleet's shipments alone (the pairs share one server, whose counter cannot tell them apart).
        const before = await serverActions(server);
        const alone = await run('fleet pollers');
        await new Promise((r) => setTimeout(r, 2000)); // the last calls' counts reach the endpoint
        const fleet = rows.find((r) => r.path === 'fleet pollers' && r.polls === alone.polls)!;
        const counted = actionsBetween(before, await serverActions(server));
        fleet.serverActionsPerShipment = round(counted.reduce((sum, [, n]) => sum + n, 0) / shipments);
        fleet.estimatedActionsAlone = alone.actionsPerShipment;
        log(`history: the server's actions per shipment by type: ${counted.map(([t, n]) => `${t} ${round(n / shipments)}`).join(', ')}`);
      } finally {
        await fake.close();
      }
    }
  } finally {
    await receiver.close();
    await connection.close();
  }
  return rows;
}

interface PathRun {
  server: DevServer;
  connection: NativeConnection;
  fake: Awaited<ReturnType<typeof startFakeShippingApi>>;
  bundle: Awaited<ReturnType<typeof getWorkflowBundle>>;
  shopConnectors: ReturnType<typeof loadShopConnectors>;
  path: HistoryPath;
  perStage: number;
  shipments: number;
  log: (m: string) => void;
}

/** One path's shipments on a task queue (and poller shards) of their own, to delivery: its row. */
async function runPath({ server, connection, fake, bundle, shopConnectors, path, perStage, shipments, log }: PathRun): Promise<HistoryRow> {
  const polls = 4 * perStage + 1;
  const taskQueue = `bench-history-${path.replaceAll(' ', '-')}-${polls}-${Date.now()}`;
  const worker = await inProcessWorker({
    connection,
    taskQueue,
    apiBaseUrl: fake.baseUrl,
    pollIntervalMs: 10,
    workflowBundle: bundle,
    // The per-shipment code schedules its next wait at once: it must not be handed over.
    handOverToPollers: path !== 'per-shipment activity',
    ...(TELLS_SHOP.has(path) ? { shopConnectors } : {}),
  });
  const started = Date.now();
  return worker.runUntil(async () => {
    const measured = await Promise.all(
      Array.from({ length: shipments }, (_, i) =>
        oneShipment(server, taskQueue, benchOrder(`H-${ORDER_PREFIX[path]}-${polls}-${i}-${started}`)),
      ),
    );
    const pollers = await pollerActions(server.client, taskQueue);
    const trackingCalls = fake.requestLog().filter((r) => r.endpoint === 'GET /tracking' && measured.some((m) => m.labelId === r.id));
    const row: HistoryRow = {
      path,
      polls,
      shipments,
      eventsPerShipment: median(measured.map((m) => m.events)),
      workflowTasksPerShipment: median(measured.map((m) => m.workflowTasks)),
      runsPerShipment: median(measured.map((m) => m.runs)),
      actionsPerShipment: round(median(measured.map((m) => m.actions)) + pollers / shipments),
      pollerActionsPerShipment: round(pollers / shipments),
      callsPerPoll: round(trackingCalls.length / (shipments * polls)),
      wallSeconds: (Date.now() - started) / 1000,
    };
    log(`history: ${path}, ${row.polls} polls: ${row.eventsPerShipment} events, ${row.workflowTasksPerShipment} workflow tasks`);
    return row;
  });
}

/** Runs one shipment to its end; counts events and workflow tasks over every run of the chain. */
export async function oneShipment(server: DevServer, taskQueue: string, input: ShipmentInput) {
  const started = await startShipment(server.client, taskQueue, input);
  if (started.status !== 'started') throw new Error(`bench order ${input.orderId} was already known`);
  const outcome = (await server.client.workflow.getHandle(started.workflowId).result()) as ShipmentOutcome;
  if (outcome.outcome !== 'delivered') throw new Error(`bench order ${input.orderId} ended ${outcome.outcome}`);
  let runId: string | undefined = started.runId;
  let events = 0;
  let workflowTasks = 0;
  let runs = 0;
  let actions = 0;
  while (runId) {
    const handle: WorkflowHandle = server.client.workflow.getHandle(started.workflowId, runId);
    const list = (await handle.fetchHistory()).events ?? [];
    runs++;
    events += list.length;
    workflowTasks += list.filter((e) => e.eventType === EVENT_WORKFLOW_TASK_COMPLETED).length;
    actions += estimateActions(list);
    runId = list.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return { workflowId: started.workflowId, labelId: outcome.labelId, events, workflowTasks, runs, actions };
}

/**
 * The actions of every run of the task queue's poller shards (history), plus the heartbeats
 * their spans sent (each span reports them in its result). By the time the row's shipments are
 * delivered every span has returned: a shard's span ends with its last label.
 */
export async function pollerActions(client: Client, taskQueue: string): Promise<number> {
  let actions = 0;
  const query = `WorkflowType = '${TRACKING_POLLER_WORKFLOW_TYPE}' AND TaskQueue = '${taskQueue}'`;
  for await (const run of client.workflow.list({ query })) {
    const list = (await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events ?? [];
    actions += estimateActions(list);
    for (const e of list) {
      const payload = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
      if (payload) actions += defaultPayloadConverter.fromPayload<SpanResult>(payload).stats.heartbeats;
    }
  }
  return actions;
}

const round = (n: number) => Math.round(n * 100) / 100;

type HistoryEvents = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>;

export function estimateActions(list: HistoryEvents): number {
  let actions = 0;
  let markersInTask = false;
  for (const e of list) {
    if (e.workflowExecutionStartedEventAttributes || e.timerStartedEventAttributes || e.workflowExecutionSignaledEventAttributes) actions++;
    const upserted = Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {});
    if (upserted.some((name) => name !== 'TemporalChangeVersion')) actions++;
    // A task's markers follow its WorkflowTaskCompleted: one action for all of them.
    if (e.markerRecordedEventAttributes) markersInTask = true;
    if (e.workflowTaskScheduledEventAttributes && markersInTask) {
      actions++;
      markersInTask = false;
    }
    actions += e.activityTaskStartedEventAttributes?.attempt ?? 0;
  }
  return actions + (markersInTask ? 1 : 0);
}

export interface LatencyRow {
  path: HistoryPath;
  shipments: number;
  cadenceSeconds: number;
  changes: number;
  p50Seconds: number;
  p95Seconds: number;
  maxSeconds: number;
  /** The target: at most 1 (a change is known within one cadence interval). */
  p95PerCadence: number;
}

/** Each stage lasts this long at the fake; polls every CADENCE_MS. */
const STAGE_MS = 4_000;
const CADENCE_MS = 2_000;

/**
 * Tracking latency: from a change at the API (the fake moves a label to its next stage every
 * STAGE_MS from its creation) to the shipment knowing it (the history event that brought it: the
 * pollers' news signal, or the per-shipment activity's completion), for both paths at once.
 */
export async function latencyScenario(server: DevServer, shipments: number, log: (m: string) => void): Promise<LatencyRow[]> {
  installQuietRuntime();
  const connection = await NativeConnection.connect({ address: server.address });
  const fake = await startFakeShippingApi({ port: 0, trackingStepMs: STAGE_MS, accounts: BENCH_ACCOUNTS });
  const bundles: Partial<Record<HistoryPath, Awaited<ReturnType<typeof getWorkflowBundle>>>> = {
    'fleet pollers': await getWorkflowBundle(),
    'per-shipment activity': await baselineWorkflowBundle(PER_SHIPMENT_TRACKING_COMMIT),
  };
  try {
    return await Promise.all(
      (Object.keys(bundles) as HistoryPath[]).map(async (path) => {
        const taskQueue = `bench-latency-${path.replaceAll(' ', '-')}-${Date.now()}`;
        const worker = await inProcessWorker({
          connection,
          taskQueue,
          apiBaseUrl: fake.baseUrl,
          pollIntervalMs: CADENCE_MS,
          workflowBundle: bundles[path]!,
          handOverToPollers: path === 'fleet pollers',
        });
        const stamp = Date.now();
        const latencies = await worker.runUntil(async () =>
          (
            await Promise.all(
              Array.from({ length: shipments }, async (_, i) => {
                const measured = await oneShipment(server, taskQueue, benchOrder(`L-${path[0]}-${i}-${stamp}`));
                return knownAfter(server, fake.labels(), measured);
              }),
            )
          ).flat(),
        );
        const sorted = [...latencies].sort((a, b) => a - b);
        const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
        const row: LatencyRow = {
          path,
          shipments,
          cadenceSeconds: CADENCE_MS / 1000,
          changes: sorted.length,
          p50Seconds: round(at(0.5) / 1000),
          p95Seconds: round(at(0.95) / 1000),
          maxSeconds: round((sorted.at(-1) ?? NaN) / 1000),
          p95PerCadence: round(at(0.95) / CADENCE_MS),
        };
        log(`latency: ${path}: p95 ${row.p95Seconds} s (${row.p95PerCadence} of the cadence)`);
        return row;
      }),
    );
  } finally {
    await fake.close();
    await connection.close();
  }
}

/** For each of the four stage changes of one delivered shipment: ms from the change at the API to the event that told the shipment. */
async function knownAfter(
  server: DevServer,
  labels: Array<{ id: string; createdAt: string }>,
  measured: { workflowId: string; labelId: string | null },
): Promise<number[]> {
  const createdAt = Date.parse(labels.find((l) => l.id === measured.labelId)?.createdAt ?? '');
  const events = (await server.client.workflow.getHandle(measured.workflowId).fetchHistory()).events ?? [];
  const scheduled = new Map<string, string>();
  for (const e of events) {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name) scheduled.set(String(e.eventId), name);
  }
  const told = events.filter(
    (e) =>
      e.workflowExecutionSignaledEventAttributes?.signalName === 'trackingNews' ||
      scheduled.get(String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '')) === 'awaitTrackingChange',
  );
  // Stage k (1: Pending … 4: Delivered) begins k × STAGE_MS after the label: one change each.
  return told.slice(0, 4).map((e, k) => msOf(e.eventTime) - (createdAt + (k + 1) * STAGE_MS));
}

function msOf(time: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
}
