/**
 * History cost per shipment: events and workflow tasks for a delivery whose tracking stays
 * unchanged for N polls, new tracking against the timer loop, in the same run on one server.
 * The fake advances tracking every `polls per stage` polls of a label, so both paths see the
 * same five tracking answers (404, Pending, InfoReceived, InTransit, Delivered) whatever the time.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { getWorkflowBundle, installQuietRuntime } from '../test/helpers/temporal-env';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi } from '../fake-shipping-api/server';
import { createShipmentWorker } from '../worker/create-worker';
import type { ShipmentOutcome } from '../workflows/definitions';
import type { ShipmentInput } from '../domain/shipment';
import { baselineWorkflowBundle } from './baseline';
import { benchOrder } from './orders';
import { BENCH_ACCOUNTS, BENCH_CREDENTIALS, median, type DevServer } from './stack';

const EVENT_WORKFLOW_TASK_COMPLETED = temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED;

export interface HistoryRow {
  path: 'change-driven' | 'timer loop';
  polls: number;
  shipments: number;
  eventsPerShipment: number;
  workflowTasksPerShipment: number;
  runsPerShipment: number;
  /**
   * Temporal Cloud actions as its own estimate counts them from history: starts, timers,
   * search-attribute upserts (not TemporalChangeVersion), one per workflow task with markers,
   * one per activity attempt. Heartbeats are not in history: not counted.
   */
  actionsPerShipment: number;
  wallSeconds: number;
}

export async function historyScenario(
  server: DevServer,
  pollCounts: number[],
  shipments: number,
  log: (m: string) => void,
): Promise<HistoryRow[]> {
  const rows: HistoryRow[] = [];
  installQuietRuntime();
  const connection = await NativeConnection.connect({ address: server.address });
  const bundles = { 'change-driven': await getWorkflowBundle(), 'timer loop': await baselineWorkflowBundle() } as const;
  try {
    for (const polls of pollCounts) {
      // 4 stages before the terminal answer: (polls - 1) / 4 polls each.
      const perStage = Math.max(1, Math.round((polls - 1) / 4));
      const fake = await startFakeShippingApi({ port: 0, trackingStepPolls: perStage, accounts: BENCH_ACCOUNTS });
      try {
        // Both paths at once: the same load on the server for each.
        const results = await Promise.all(
          (Object.keys(bundles) as Array<keyof typeof bundles>).map(async (path) => {
            const taskQueue = `bench-history-${path.replace(' ', '-')}-${polls}-${Date.now()}`;
            const worker = await createShipmentWorker({
              connection,
              namespace: 'default',
              taskQueue,
              shippingApi: { baseUrl: fake.baseUrl, ...BENCH_CREDENTIALS },
              tracking: { pollIntervalMs: 10, pollIntervalsMs: {} },
              workflowBundle: bundles[path],
            });
            const started = Date.now();
            return worker.runUntil(async () => {
              const measured = await Promise.all(
                Array.from({ length: shipments }, (_, i) =>
                  oneShipment(server, taskQueue, benchOrder(`H-${path[0]}-${polls}-${i}-${started}`)),
                ),
              );
              const row: HistoryRow = {
                path,
                polls: 4 * perStage + 1,
                shipments,
                eventsPerShipment: median(measured.map((m) => m.events)),
                workflowTasksPerShipment: median(measured.map((m) => m.workflowTasks)),
                runsPerShipment: median(measured.map((m) => m.runs)),
                actionsPerShipment: median(measured.map((m) => m.actions)),
                wallSeconds: (Date.now() - started) / 1000,
              };
              log(`history: ${path}, ${row.polls} polls: ${row.eventsPerShipment} events, ${row.workflowTasksPerShipment} workflow tasks`);
              return row;
            });
          }),
        );
        rows.push(...results);
      } finally {
        await fake.close();
      }
    }
  } finally {
    await connection.close();
  }
  return rows;
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
  return { workflowId: started.workflowId, events, workflowTasks, runs, actions };
}

type HistoryEvents = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>;

function estimateActions(list: HistoryEvents): number {
  let actions = 0;
  let markersInTask = false;
  for (const e of list) {
    if (e.workflowExecutionStartedEventAttributes || e.timerStartedEventAttributes) actions++;
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
