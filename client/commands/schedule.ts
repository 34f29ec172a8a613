/** `npm run cli -- schedule <action> [shop]`: the shops' pull schedules (shop-import/schedule.ts). */
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { ConfigError } from '../../config/settings';
import { loadShopConnectors } from '../../platforms/connectors';
import { applySchedule, cursorOf, importShops, triggerPull } from '../../shop-import/schedule';
import { shopPullScheduleId, shopPullTaskQueue, type ShopPullResult } from '../../workflow-definitions/shop-pull';
import { CliError, connectTemporal, EXIT, parseCommandArgs, println, usageError, type ExitCode, type Io } from '../cli-support';

export const SCHEDULE_HELP = `Usage: npm run cli -- schedule apply [shop]
       npm run cli -- schedule describe <shop> [--json]
       npm run cli -- schedule pause <shop> [--note <text>]
       npm run cli -- schedule resume <shop>
       npm run cli -- schedule trigger <shop>
       npm run cli -- schedule delete <shop>

Each Shopify or WooCommerce shop with "import" settings in SHOP_CONNECTORS has a Temporal
Schedule (id shop-pull-<shop>) that pulls its orders needing a label every import.every.
The worker applies them at start; these commands do it by hand and steer them.

  apply      Create the schedules (all shops, or one), or bring them to the settings;
             the cursor and a pause are kept
  describe   Interval, paused or not, the cursor (newest change read, orders to retry),
             the next runs and the last pulls with their counts
  pause      Stop pulling (the cursor stays); --note says why, shown by describe
  resume     Pull again
  trigger    Pull now (while a pull runs, one more follows it)
  delete     Remove the schedule and its cursor (the next apply starts at import.firstPull)

Options:
  --json         describe: one JSON document on stdout
  --note <text>  pause: the reason
  -h, --help     Show this help

Exit codes: 0 done; 2 usage or configuration error; 4 no schedule for that shop; 5 Temporal unreachable.
`;

const ACTIONS = ['apply', 'describe', 'pause', 'resume', 'trigger', 'delete'] as const;

export async function scheduleCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    json: { type: 'boolean', default: false },
    note: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(SCHEDULE_HELP);
    return EXIT.ok;
  }
  const [action, shop, ...extra] = positionals;
  if (!ACTIONS.includes(action as (typeof ACTIONS)[number]))
    throw usageError(`schedule needs an action: ${ACTIONS.join(', ')}. See: npm run cli -- schedule --help`);
  if (extra.length > 0 || (action !== 'apply' && shop === undefined)) throw usageError(`schedule ${action} takes one shop`);
  const session = await connectTemporal(io.env);
  try {
    if (action === 'apply') return await apply(session.client, session.settings.taskQueue, shop, io);
    const handle = session.client.schedule.getHandle(shopPullScheduleId(shop!));
    try {
      if (action === 'describe') return await describe(session.client, shop!, values.json, io);
      if (action === 'pause') await handle.pause(values.note ?? 'paused with npm run cli -- schedule pause');
      else if (action === 'resume') await handle.unpause('resumed with npm run cli -- schedule resume');
      else if (action === 'trigger') await triggerPull(session.client, shop!);
      else await handle.delete();
    } catch (err) {
      if (err instanceof ScheduleNotFoundError)
        throw new CliError(
          `no pull schedule for shop ${shop} (${shopPullScheduleId(shop!)}); create it with: npm run cli -- schedule apply ${shop}`,
          EXIT.notFound,
        );
      throw err;
    }
    const done = { pause: 'paused', resume: 'resumed', trigger: 'triggered: a pull starts now', delete: 'deleted' }[action as 'pause'];
    println(io.stdout, `Schedule ${shopPullScheduleId(shop!)} ${done}.`);
    return EXIT.ok;
  } finally {
    await session.close();
  }
}

async function apply(client: Client, taskQueue: string, only: string | undefined, io: Io): Promise<ExitCode> {
  let connectors;
  try {
    connectors = loadShopConnectors(io.env, { readSecretFiles: false });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
  const shops = importShops(connectors).filter((c) => only === undefined || c.shop === only);
  if (shops.length === 0)
    throw usageError(
      only === undefined ? 'no shop in SHOP_CONNECTORS has "import" settings' : `shop ${only} has no "import" settings in SHOP_CONNECTORS`,
    );
  for (const connector of shops) {
    const outcome = await applySchedule(client, connector, taskQueue);
    println(
      io.stdout,
      `${shopPullScheduleId(connector.shop)}: ${outcome} (every ${connector.import.every / 1000} s, task queue ${shopPullTaskQueue(taskQueue)})`,
    );
  }
  return EXIT.ok;
}

async function describe(client: Client, shop: string, json: boolean, io: Io): Promise<ExitCode> {
  const description = await client.schedule.getHandle(shopPullScheduleId(shop)).describe();
  const cursor = cursorOf(description);
  const recent = await Promise.all(
    description.info.recentActions.slice(-5).map(async (a) => {
      const { workflowId, firstExecutionRunId } = a.action.workflow;
      const wf = await client.workflow
        .getHandle(workflowId, firstExecutionRunId)
        .describe()
        .catch(() => undefined);
      const result =
        wf?.status.name === 'COMPLETED'
          ? ((await client.workflow
              .getHandle(workflowId)
              .result()
              .catch(() => undefined)) as ShopPullResult | undefined)
          : undefined;
      return {
        workflowId,
        takenAt: a.takenAt.toISOString(),
        status: wf?.status.name ?? 'UNKNOWN',
        counts: result?.counts,
        rejections: result?.rejections.length,
        rejected: result?.rejections ?? [],
      };
    }),
  );
  const view = {
    scheduleId: description.scheduleId,
    everySeconds: everyMs(description) / 1000 || null,
    paused: description.state.paused,
    note: description.state.note ?? null,
    cursor,
    nextRuns: description.info.nextActionTimes.slice(0, 3).map((d) => d.toISOString()),
    recentPulls: recent,
  };
  if (json) {
    println(io.stdout, JSON.stringify(view, null, 2));
    return EXIT.ok;
  }
  const lines = [
    `Schedule ${view.scheduleId}: ${view.paused ? `PAUSED${view.note ? ` (${view.note})` : ''}` : 'active'}, every ${view.everySeconds ?? '?'} s`,
    `  cursor       ${cursor.since ?? '(none yet: the first pull reads import.firstPull back)'}`,
    `  to retry     ${cursor.retry.length === 0 ? 'none' : cursor.retry.join(', ')}`,
    `  next runs    ${view.nextRuns.join(', ') || '-'}`,
    '  last pulls',
    ...recent.map(
      (r) =>
        `    ${r.takenAt}  ${r.status.padEnd(10)} ${r.counts ? `read ${r.counts.read}, started ${r.counts.started}, already known ${r.counts.alreadyKnown}, skipped ${r.counts.skipped}, rejected ${r.counts.rejected}` : ''}  ${r.workflowId}`,
    ),
    ...rejectedLines([...recent].reverse().find((r) => r.counts !== undefined)?.rejected ?? []),
  ];
  println(io.stdout, lines.join('\n'));
  return EXIT.ok;
}

/** The last finished pull's rejections, one line each: the platform order, the shipment's order id, the first reason. */
function rejectedLines(rejections: ShopPullResult['rejections']): string[] {
  if (rejections.length === 0) return [];
  return [
    '  rejected in the last pull (kept in the retry list when the id can be read again)',
    ...rejections.map((r) => {
      const [first] = r.reasons;
      return `    platform order ${r.platformOrderId}${r.orderId ? ` (${r.orderId})` : ''}: ${first ? `${first.field}: ${first.message}` : '-'}`;
    }),
  ];
}

/** The schedule's interval in ms (0 when it has none: a schedule changed by hand). */
function everyMs(description: { spec: { intervals?: Array<{ every: unknown }> } }): number {
  return Number(description.spec.intervals?.[0]?.every ?? 0);
}
