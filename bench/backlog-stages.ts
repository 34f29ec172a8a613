/**
 * Where a live order's placed → label time goes, stage by stage (bench backlog-latency): read
 * after the run from what the stack already records, no timing code on the production path:
 *
 * - the worker's debug log: the trigger's "webhook accepted" and "calling trigger" (per shop: the
 *   first at or after the order was placed), the SDK's "Activity started" of the shipment's label
 *   activity and the pacer's "paced call sent" (activities/shipping-api.ts), by workflow id;
 * - histories: the pull run that started the shipment (its start, its read activity's start) and
 *   the shipment's own start and first workflow task;
 * - the fake API: the label's creation time.
 */
import { readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { shipmentWorkflowId } from '../domain/shipment';
import { SHOP_PULL_WORKFLOW_TYPE, shopPullScheduleId } from '../workflow-definitions/shop-pull';
import { percentile } from './stack';

export const STAGES = [
  'placed',
  'webhook received',
  'trigger called',
  'pull started',
  'pull read began',
  'shipment started',
  'first workflow task',
  'label activity started',
  'pacer turn (label call sent)',
  'label created',
] as const;
export type Stage = (typeof STAGES)[number];

export interface StageRow {
  stage: Stage;
  /** Orders that showed both this stage and the one before. */
  orders: number;
  /** Seconds from the stage before. */
  p50: number;
  p95: number;
  /** Seconds from placed. */
  p50FromPlaced: number;
  p95FromPlaced: number;
}

export interface StageBreakdown {
  rows: StageRow[];
  /** Live labels whose call went out on the shipment's first (local) attempt, of those labelled. */
  labelsOnFirstAttempt: number;
  labelled: number;
}

interface Order {
  shop: string;
  orderId: string;
  at: number;
}

interface LogLine {
  time: number;
  msg: string;
  shop?: string;
  workflowId?: string;
  activityType?: string;
  isLocal?: boolean;
  cls?: string;
}

const EventType = temporal.api.enums.v1.EventType;

export async function stageBreakdown(
  client: Client,
  logFile: string,
  placed: Order[],
  labelled: Map<Order, number>,
  shops: string[],
): Promise<StageBreakdown> {
  const lines = readLog(logFile);
  const pulls = await pullRuns(client, shops);
  const times: Array<Partial<Record<Stage, number>>> = [];
  let onFirstAttempt = 0;
  for (const order of placed) {
    const t: Partial<Record<Stage, number>> = { placed: order.at };
    t['webhook received'] = firstAfter(lines, order.at, (l) => l.msg === 'shop trigger: webhook accepted' && l.shop === order.shop);
    if (t['webhook received'] !== undefined)
      t['trigger called'] = firstAfter(
        lines,
        t['webhook received'],
        (l) => l.msg === 'shop trigger: calling trigger' && l.shop === order.shop,
      );
    const workflowId = shipmentWorkflowId(order);
    const shipment = await shipmentStart(client, workflowId);
    if (shipment) {
      t['shipment started'] = shipment.started;
      t['first workflow task'] = shipment.firstTask;
      // The pull that started it: the shop's last run whose read began before the shipment did.
      const pull = pulls
        .filter((p) => p.shop === order.shop && p.readBegan !== undefined && p.readBegan <= shipment.started)
        .sort((a, b) => b.readBegan! - a.readBegan!)[0];
      t['pull started'] = pull?.started;
      t['pull read began'] = pull?.readBegan;
    }
    const mine = lines.filter((l) => l.workflowId === workflowId && l.activityType === 'createLabel');
    t['label activity started'] = mine.find((l) => l.msg === 'Activity started')?.time;
    const sent = mine.filter((l) => l.msg === 'paced call sent').at(-1);
    t['pacer turn (label call sent)'] = sent?.time;
    t['label created'] = labelled.get(order);
    if (labelled.has(order) && sent?.isLocal) onFirstAttempt++;
    times.push(t);
  }
  return { rows: rowsOf(times), labelsOnFirstAttempt: onFirstAttempt, labelled: labelled.size };
}

function rowsOf(times: Array<Partial<Record<Stage, number>>>): StageRow[] {
  return STAGES.slice(1).map((stage, i) => {
    const before = STAGES[i]!;
    const seen = times.filter((t) => t[stage] !== undefined && t[before] !== undefined);
    const sec = (xs: number[]) => xs.map((x) => x / 1000).sort((a, b) => a - b);
    const step = sec(seen.map((t) => t[stage]! - t[before]!));
    const total = sec(times.filter((t) => t[stage] !== undefined).map((t) => t[stage]! - t.placed!));
    const r = (x: number) => Math.round(x * 100) / 100;
    return {
      stage,
      orders: seen.length,
      p50: r(percentile(step, 0.5)),
      p95: r(percentile(step, 0.95)),
      p50FromPlaced: r(percentile(total, 0.5)),
      p95FromPlaced: r(percentile(total, 0.95)),
    };
  });
}

function readLog(file: string): LogLine[] {
  const out: LogLine[] = [];
  for (const text of readFileSync(file, 'utf8').split('\n')) {
    if (!text.startsWith('{')) continue;
    try {
      out.push(JSON.parse(text) as LogLine);
    } catch {
      // a line cut by the worker's stop
    }
  }
  return out.sort((a, b) => a.time - b.time);
}

function firstAfter(lines: LogLine[], at: number, match: (l: LogLine) => boolean): number | undefined {
  return lines.find((l) => l.time >= at && match(l))?.time;
}

interface PullRun {
  shop: string;
  started: number;
  readBegan?: number;
}

async function pullRuns(client: Client, shops: string[]): Promise<PullRun[]> {
  const runs: PullRun[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowType = '${SHOP_PULL_WORKFLOW_TYPE}'` })) {
    const shop = shops.find((s) => run.workflowId.startsWith(`${shopPullScheduleId(s)}-`));
    if (!shop) continue;
    const events = (await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events ?? [];
    const read = events.find((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED);
    runs.push({ shop, started: msOf(events[0]?.eventTime), readBegan: read ? msOf(read.eventTime) : undefined });
  }
  return runs;
}

async function shipmentStart(client: Client, workflowId: string): Promise<{ started: number; firstTask?: number } | undefined> {
  try {
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const task = events.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
    return { started: msOf(events[0]?.eventTime), firstTask: task ? msOf(task.eventTime) : undefined };
  } catch {
    return undefined; // never started
  }
}

function msOf(time: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
}
