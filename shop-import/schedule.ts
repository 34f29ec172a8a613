/**
 * One Temporal Schedule per shop with `import` settings, running the shop's pull every
 * `import.every`. The schedule also holds the pull's cursor: it is the pull workflow's input,
 * and each pull writes its newest cursor back, so the next run (scheduled, triggered by a webhook
 * or by hand) starts there. Overlapping runs are skipped, never stacked; a trigger while a pull
 * runs buffers one run (the webhook's order may be behind the running pull's pages).
 */
import { createHash } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
} from '@temporalio/client';
import type { ShopConnectors } from '../platforms/connectors';
import {
  NAMED_ORDERS_PER_PULL,
  namedOrdersPullId,
  SHOP_PULL_WORKFLOW_TYPE,
  shopPullScheduleId,
  shopPullTaskQueue,
  webhookPullId,
  type ShopPullInput,
} from '../workflow-definitions/shop-pull';
import { EMPTY_CURSOR, PullCursor, soundCursor } from '../workflow-definitions/shop-pull-cursor';
import type { ImportConnector } from '../platforms/order-source';
import type { ShopImportSettings } from '../config/shop-import';
import type { TriggerShop } from '../shop-trigger';

/** Shops with import settings, as the worker and the CLI see them. */
export function importShops(connectors: ShopConnectors): ImportConnector[] {
  return connectors.shops
    .map((shop) => connectors.connectorFor(shop))
    .filter((c): c is ImportConnector => c !== null && c.type !== 'webhook' && c.import !== null);
}

/** A shop whose platform webhooks may start its pull: an import shop, with the keys its webhooks are signed with. */
export function triggerShop(connectors: ShopConnectors, shop: string): TriggerShop | null {
  const connector = importShops(connectors).find((c) => c.shop === shop);
  return connector ? { shop, platform: connector.type, secrets: connector.webhookSecrets } : null;
}

/** The cursor a schedule holds, or the empty one (a schedule made by hand, or a first run). */
export function cursorOf(description: ScheduleDescription): PullCursor {
  const input = description.action.args?.[0] as Partial<ShopPullInput> | undefined;
  const parsed = PullCursor.safeParse(input?.cursor);
  return parsed.success ? parsed.data : EMPTY_CURSOR;
}

/** `taskQueue` is the shipments' queue: the pull itself runs on the pulls' queue beside it. */
function action(shop: string, taskQueue: string, cursor: PullCursor) {
  return {
    type: 'startWorkflow' as const,
    workflowType: SHOP_PULL_WORKFLOW_TYPE,
    workflowId: shopPullScheduleId(shop),
    taskQueue: shopPullTaskQueue(taskQueue),
    args: [{ shop, cursor } satisfies ShopPullInput],
    staticSummary: `Pull of shop ${shop}'s orders that need a label`,
  };
}

/**
 * Each shop's pulls keep their own second within the interval. Temporal counts intervals from the
 * epoch, so without an offset every shop with `every: 5m` pulls at the same instant, and their new
 * orders reach the labels (and the shipping API's limit) together. Derived from the shop's name:
 * the same on every worker and every restart, so applying the schedule again changes nothing.
 */
export function pullPhaseMs(shop: string, everyMs: number): number {
  const seconds = Math.floor(everyMs / 1000);
  if (seconds <= 1) return 0;
  return (createHash('sha256').update(shop, 'utf8').digest().readUInt32BE(0) % seconds) * 1000;
}

function spec(shop: string, settings: ShopImportSettings) {
  return { intervals: [{ every: settings.every, offset: pullPhaseMs(shop, settings.every) }] };
}

const POLICIES = {
  overlap: ScheduleOverlapPolicy.SKIP,
  // After Temporal itself was down, one pull catches up: it starts from the cursor whatever the gap.
  catchupWindow: '1 minute',
  pauseOnFailure: false,
} as const;

export type ApplyOutcome = 'created' | 'updated' | 'unchanged';

/**
 * Creates the shop's schedule, or brings an existing one to the settings (interval, task queue)
 * keeping its cursor and whether an operator paused it. Safe to run from every worker at once.
 * `taskQueue` is the shipments' queue; a schedule made before pulls had a queue of their own
 * moves to it here.
 */
export async function applySchedule(client: Client, connector: ImportConnector, taskQueue: string): Promise<ApplyOutcome> {
  const scheduleId = shopPullScheduleId(connector.shop);
  try {
    await client.schedule.create({
      scheduleId,
      spec: spec(connector.shop, connector.import),
      action: action(connector.shop, taskQueue, EMPTY_CURSOR),
      policies: POLICIES,
      state: { paused: connector.import.paused, note: connector.import.paused ? 'created paused by the import settings' : undefined },
    });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(scheduleId);
  const current = await handle.describe();
  const [interval] = current.spec.intervals ?? [];
  const sameSpec =
    current.spec.intervals?.length === 1 &&
    interval?.every === connector.import.every &&
    (interval.offset ?? 0) === pullPhaseMs(connector.shop, connector.import.every);
  const sameQueue = current.action.taskQueue === shopPullTaskQueue(taskQueue);
  if (sameSpec && sameQueue) return 'unchanged';
  await handle.update((previous) => ({
    ...previous,
    spec: spec(connector.shop, connector.import),
    action: action(connector.shop, taskQueue, cursorOf(previous)),
  }));
  return 'updated';
}

/**
 * Writes a pull's cursor into the schedule; a cursor older than the one there is not written
 * (a slow pull must not move the next one back). False when the shop has no schedule.
 */
export async function saveCursor(client: Client, shop: string, cursor: PullCursor): Promise<boolean> {
  try {
    await client.schedule.getHandle(shopPullScheduleId(shop)).update((previous) => {
      // A held cursor poisoned by an older version (a time in the future) must not keep a sound one out.
      const held = soundCursor((previous.action.args?.[0] as Partial<ShopPullInput> | undefined)?.cursor, Date.now()).cursor;
      const newer = held.since === null || (cursor.since !== null && cursor.since >= held.since);
      const next = newer ? cursor : { since: held.since, retry: cursor.retry };
      return { ...previous, action: { ...previous.action, args: [{ shop, cursor: next } satisfies ShopPullInput] } };
    });
    return true;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return false;
    throw err;
  }
}

/** Starts the shop's pull now; while one runs, one more is buffered (a burst of webhooks makes one). */
export async function triggerPull(client: Client, shop: string): Promise<void> {
  await client.schedule.getHandle(shopPullScheduleId(shop)).trigger(ScheduleOverlapPolicy.BUFFER_ONE);
}

/** A shop's webhook pulls of named orders that may run at once; beyond them the orders go to a pull from the cursor. */
export const NAMED_ORDER_PULLS_PER_SHOP = 3;
/**
 * A shop's webhook pulls from the cursor that may run at once; beyond it the schedule's next run
 * is buffered. One: each re-reads every change since the cursor, and on Shopify two of them
 * share one cost bucket, so a second only slows the first (bench shop-changes with 3: the shop
 * with webhooks read 1,139 orders in 837 s, its twin on the schedule alone 598 in 193 s). A pull that runs
 * reads the orders changed while it runs too (they move to its last pages); the buffered run
 * after it is the trailing read for a change its pages passed.
 */
export const CURSOR_PULLS_PER_SHOP = 1;

/** What a webhook pull needs of the shop's schedule: its cursor (null: never pulled) and the pulls' task queue. */
interface PullStart {
  cursor: PullCursor | null;
  taskQueue: string;
}

/**
 * The schedules as this process last described them, for webhook pulls: a describe takes seconds
 * on a loaded server, and a burst of webhooks would queue behind it. Each shop's is described again
 * after `maxAgeMs`; a cursor that old only makes a webhook pull read a little more (the cursor only
 * moves past orders already read, so an older one misses none).
 */
export class RecentSchedules {
  private readonly described = new Map<string, { at: number; start: PullStart }>();

  constructor(
    private readonly maxAgeMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Null: the schedule starts no workflow. A shop never pulled (no cursor yet) is described again
   * when `needCursor`: its first pull is on its way, and the next webhook should see its cursor.
   */
  async of(client: Client, shop: string, needCursor = true): Promise<PullStart | null> {
    const known = this.described.get(shop);
    if (known && this.now() - known.at < this.maxAgeMs && (known.start.cursor !== null || !needCursor)) return known.start;
    const schedule = await client.schedule.getHandle(shopPullScheduleId(shop)).describe();
    if (schedule.action.type !== 'startWorkflow') return null;
    const cursor = cursorOf(schedule);
    const start = { cursor: cursor.since === null ? null : cursor, taskQueue: schedule.action.taskQueue };
    this.described.set(shop, { at: this.now(), start });
    return start;
  }
}

/** What a webhook asks of `pullNow`: the orders it named, and whether a pull from the cursor is due too. */
export interface PullWanted {
  orderIds: readonly string[];
  fromCursor: boolean;
}

/** What `pullNow` did: the named orders' pull started (or not), and how the cursor's pull was asked for. */
export interface PullNowOutcome {
  namedOrders: boolean;
  cursor: 'webhook pull' | 'buffered' | null;
}

/**
 * A webhook's pull, not behind the shop's running pull: the schedule's run waits for the running
 * one to close (its cursor write takes seconds under load) and for the scheduler (about 1.6 s), and
 * a pull from the cursor re-reads every order changed since then (minutes of pages under Shopify's
 * cost bucket while a shop's backlog is imported).
 *
 * - The orders the webhooks named: a pull of those ids (`orderIds`), which reads each order from the
 *   platform (the webhook only named it) and handles it as a pulled page does. Needs no cursor,
 *   so it also runs while a shop's first pull is under way.
 * - A webhook that named none (or `fromCursor`): a pull started at once on the pulls' queue from
 *   the cursor the schedule holds (before the webhook's order, as every run's is).
 *
 * Neither writes the cursor: the schedule's runs, one at a time, stay its only writers, and find
 * the orders these started "already known". Falls back to `triggerPull` when the shop was never
 * pulled (a pull from nothing reads `import.firstPull` back: the schedule's job) or its webhook
 * pulls of the kind all run; named orders beyond NAMED_ORDERS_PER_PULL, or with their pulls all
 * running, go to the pull from the cursor. As the trigger did, it pulls a paused schedule's shop too.
 */
export async function pullNow(
  client: Client,
  shop: string,
  schedules = new RecentSchedules(0),
  wanted: PullWanted = { orderIds: [], fromCursor: true },
): Promise<PullNowOutcome> {
  const orderIds = [...new Set(wanted.orderIds)];
  let fromCursor = wanted.fromCursor || orderIds.length > NAMED_ORDERS_PER_PULL;
  let namedOrders = false;
  if (orderIds.length > 0) {
    const start = await schedules.of(client, shop, false);
    const ids = orderIds.slice(0, NAMED_ORDERS_PER_PULL);
    namedOrders =
      start !== null &&
      (await startWebhookPull(client, start.taskQueue, NAMED_ORDER_PULLS_PER_SHOP, (slot) => namedOrdersPullId(shop, slot), {
        input: { shop, cursor: start.cursor ?? EMPTY_CURSOR, webhook: true, orderIds: ids },
        summary: `Webhook pull of the ${ids.length} orders shop ${shop}'s webhooks named (by id; no cursor)`,
      }));
    fromCursor ||= !namedOrders;
  }
  return { namedOrders, cursor: fromCursor ? await pullFromCursor(client, shop, schedules) : null };
}

async function pullFromCursor(client: Client, shop: string, schedules: RecentSchedules): Promise<'webhook pull' | 'buffered'> {
  const start = await schedules.of(client, shop);
  const started =
    start?.cursor != null &&
    (await startWebhookPull(client, start.taskQueue, CURSOR_PULLS_PER_SHOP, (slot) => webhookPullId(shop, slot), {
      input: { shop, cursor: start.cursor, webhook: true },
      summary: `Webhook pull of shop ${shop}'s new orders (the cursor stays the schedule's)`,
    }));
  if (started) return 'webhook pull';
  await triggerPull(client, shop);
  return 'buffered';
}

/** Starts the pull in the first free one of the shop's slots of its kind; false when all run. */
async function startWebhookPull(
  client: Client,
  taskQueue: string,
  slots: number,
  idOf: (slot: number) => string,
  pull: { input: ShopPullInput; summary: string },
): Promise<boolean> {
  for (let slot = 0; slot < slots; slot++) {
    try {
      await client.workflow.start(SHOP_PULL_WORKFLOW_TYPE, {
        workflowId: idOf(slot),
        taskQueue,
        args: [pull.input],
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        staticSummary: pull.summary,
      });
      return true;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  return false;
}
