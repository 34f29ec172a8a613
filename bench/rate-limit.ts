/**
 * Spending the account's rate limit: two worker processes against the local API limited to R
 * calls a second per account (429 with Retry-After), with today's settings side by side in the
 * same run: adaptive pacing (the default), no pacing and no cap, and no pacing with the task
 * queue capped below R.
 *
 * Per setting: `orders` new orders without any tracking wave, then a wave of `wave` shipments
 * polling every second, then `orders` more new orders while the wave runs. It measures accepted
 * calls per second over R while the wave saturates the account, the share of 429 answers, label
 * latency (workflow start to label created) without and with the wave, duplicate labels,
 * workflow tasks per shipment up to tracking, and calls made while a 429's Retry-After was running.
 */
import { randomUUID } from 'node:crypto';
import { startShipment } from '../order-import/start-shipment';
import { startFakeShippingApi, type FakeShippingApi, type Faults } from '../fake-shipping-api/server';
import type { FakeRequest } from '../fake-shipping-api/types';
import { shipmentWorkflowId, type ShipmentInput } from '../domain/shipment';
import { benchOrder } from './orders';
import { BENCH_ACCOUNTS, benchProcessEnv, ROOT, sleep, startWorkerProcess, type DevServer, type Proc } from './stack';

const HOUR_MS = 3_600_000;

export interface RateLimitSetting {
  /** Short key for --rate-settings. */
  key: 'adaptive' | 'off' | 'cap' | 'charged' | 'window' | 'noise' | 'worker' | 'worker-charged' | 'worker-noise';
  name: string;
  env: Record<string, string>;
  /** Faults of the fake beside the limit. */
  faults?: Partial<Faults>;
}

/** The settings compared; `keys` picks some (default all, in this order). */
export function rateLimitSettings(limit: number, keys?: readonly string[]): RateLimitSetting[] {
  const fleet: RateLimitSetting[] = [
    { key: 'adaptive', name: 'adaptive pacing (default)', env: {} },
    { key: 'off', name: 'no cap (pacing off)', env: { SHIPPING_API_PACING: 'off' } },
    {
      key: 'cap',
      name: `TASK_QUEUE_MAX_ACTIVITIES_PER_SECOND=${Math.floor(limit * 0.9)} (pacing off)`,
      env: { SHIPPING_API_PACING: 'off', TASK_QUEUE_MAX_ACTIVITIES_PER_SECOND: String(Math.floor(limit * 0.9)) },
    },
    // A limiter that counts refused calls too, so a 429 costs the account a token: the pace must not lean on it.
    {
      key: 'charged',
      name: 'adaptive pacing, a limiter that counts refused calls',
      env: {},
      faults: { rateLimit: { perSecond: limit, burst: limit, refusedTakesToken: true } },
    },
    // A limiter that counts a sliding window of a second, with no burst over the limit (the spec names a window).
    {
      key: 'window',
      name: 'adaptive pacing, a limiter that counts a sliding window',
      env: {},
      faults: { rateLimit: { perSecond: limit, kind: 'window' } },
    },
    // 429s the pace does not cause (a shared quota, a flaky proxy), on top of the limit: compare with `adaptive`.
    {
      key: 'noise',
      name: 'adaptive pacing, 10 % unrelated 429s',
      env: {},
      faults: { rateLimitedRate: 0.1, rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 5 } },
    },
  ];
  // Each worker finding its own pace (SHIPPING_API_PACE_SHARES=worker, the default before 1.1),
  // beside the fleet's one rate in the same run: the same three limiters.
  const perWorker = (['worker', 'worker-charged', 'worker-noise'] as const).map((key): RateLimitSetting => {
    const like = fleet.find((s) => s.key === (key === 'worker' ? 'adaptive' : key.slice('worker-'.length)))!;
    return {
      key,
      name: `${like.name.replace(' (default)', '')}, each worker its own pace`,
      env: { ...like.env, SHIPPING_API_PACE_SHARES: 'worker' },
      ...(like.faults ? { faults: like.faults } : {}),
    };
  });
  const all = [...fleet, ...perWorker];
  if (keys === undefined) return all;
  for (const key of keys)
    if (!all.some((s) => s.key === key)) throw new Error(`--rate-settings: unknown setting "${key}" (${all.map((s) => s.key).join(', ')})`);
  return all.filter((s) => keys.includes(s.key));
}

export interface RateLimitRow {
  setting: string;
  limit: number;
  orders: number;
  wave: number;
  /** Calls the API accepted per second during the wave, over the limit. */
  acceptedPerLimit: number;
  /** 429 answers over all answers, whole run. */
  share429: number;
  /** The limit's own 429s (the fake's token bucket, not its 429s no pace causes) over all answers, whole run. */
  limitShare429: number;
  calls: number;
  labelP50NoWaveSeconds: number;
  labelP95NoWaveSeconds: number;
  labelP50WaveSeconds: number;
  labelP95WaveSeconds: number;
  /** p95 with the wave over p95 without it. */
  waveP95Ratio: number;
  duplicateLabels: number;
  /** Workflow tasks of a shipment from start to tracking, median and max over the orders of the no-wave batch. */
  workflowTasksMedian: number;
  workflowTasksMax: number;
  /** Calls that reached the API while a Retry-After the limit had answered was still running (200 ms grace for calls already on the wire). */
  callsDuringRetryAfter: number;
  /** Calls inside the Retry-After of a 429 no limit sent only (a noise 429 holds only its own call). */
  callsDuringNoiseRetryAfter: number;
  seconds: number;
}

/** A call already on the wire when a 429 was answered may still arrive this long after it. */
export const ON_THE_WIRE_MS = 200;

/**
 * The calls that reached the API while a Retry-After it had answered was still running, each
 * with how long after that 429 it arrived: by arrival, not answer (a call sent before the 429
 * and answered after it broke no hold), from ON_THE_WIRE_MS after the 429. `noise`: the only
 * holds it fell in were of 429s no limit sent (the fake's random ones), which by design hold
 * only their own call once the fleet knows the noise.
 */
export function callsDuringRetryAfter(
  requests: ReadonlyArray<Pick<FakeRequest, 'at' | 'receivedAt' | 'status' | 'retryAfter' | 'endpoint'> & { fault?: FakeRequest['fault'] }>,
): Array<{ afterMs: number; limited: boolean; limitedAt: number; endpoint: string; noise: boolean }> {
  const holds = requests
    .filter((r) => r.status === 429)
    .map((r) => ({ at: r.at, to: r.at + Number(r.retryAfter ?? 1) * 1000, noise: r.fault === 'rate-limited' }));
  return requests.flatMap((r) => {
    const inside = holds.filter((h) => r.receivedAt > h.at + ON_THE_WIRE_MS && r.receivedAt < h.to);
    const hold = inside.find((h) => !h.noise) ?? inside[0];
    return hold
      ? [{ afterMs: r.receivedAt - hold.at, limited: r.status === 429, limitedAt: hold.at, endpoint: r.endpoint, noise: hold.noise }]
      : [];
  });
}

export async function rateLimitScenario(
  server: DevServer,
  opts: { limit: number; orders: number; wave: number; settings: RateLimitSetting[] },
  log: (m: string) => void,
): Promise<RateLimitRow[]> {
  const rows: RateLimitRow[] = [];
  for (const setting of opts.settings) {
    const fake = await startFakeShippingApi({
      port: 0,
      trackingStepMs: HOUR_MS, // tracking never moves: every poll of the wave is an unchanged poll
      faults: { rateLimit: { perSecond: opts.limit, burst: opts.limit }, ...setting.faults },
      accounts: BENCH_ACCOUNTS,
    });
    const taskQueue = `bench-rate-${randomUUID()}`;
    const env = { ...benchProcessEnv(server, taskQueue, fake.baseUrl), ...setting.env };
    const workers: Proc[] = [startWorkerProcess(ROOT, env), startWorkerProcess(ROOT, env)];
    try {
      await sleep(8000); // both workers bundled and polling
      const started = Date.now();
      log(`rate-limit, ${setting.name}: ${opts.orders} orders without a wave`);
      const noWave = await labelLatencies(server, fake, taskQueue, 'A', opts.orders, HOUR_MS);
      const tasks = await workflowTasksToTracking(server, noWave.orderIds);
      log(`rate-limit, ${setting.name}: a wave of ${opts.wave} shipments polling every second`);
      await labelLatencies(server, fake, taskQueue, 'W', opts.wave, 1000);
      await sleep(3000);
      const waveFrom = Date.now();
      log(`rate-limit, ${setting.name}: ${opts.orders} orders with the wave running`);
      const withWave = (await labelLatencies(server, fake, taskQueue, 'B', opts.orders, HOUR_MS)).seconds;
      const waveTo = Date.now();

      const requests = fake.requestLog();
      const inWave = requests.filter((r) => r.at >= waveFrom && r.at <= waveTo);
      const limited = requests.filter((r) => r.status === 429);
      const early = callsDuringRetryAfter(requests);
      // Where they fall tells a relay's lag (the first few hundred ms) from a worker that did not hold at all.
      // The 429's time, to find in the workers' logs whether and when each heard the hold.
      for (const at of new Set(early.filter((e) => !e.noise).map((e) => e.limitedAt))) {
        const list = early
          .filter((e) => e.limitedAt === at)
          .map((e) => `${e.afterMs} ${e.endpoint}${e.limited ? ' (429)' : ''}`)
          .join(', ');
        log(`rate-limit, ${setting.name}: calls during the Retry-After of the 429 at ${new Date(at).toISOString()}, ms after it: ${list}`);
      }
      const during = early.filter((e) => !e.noise).length;
      const perOrder = new Map<string, number>();
      for (const label of fake.labels()) perOrder.set(label.customerOrderNumber, (perOrder.get(label.customerOrderNumber) ?? 0) + 1);
      const row: RateLimitRow = {
        setting: setting.name,
        limit: opts.limit,
        orders: opts.orders,
        wave: opts.wave,
        acceptedPerLimit: round(inWave.filter((r) => r.status !== 429).length / ((waveTo - waveFrom) / 1000) / opts.limit),
        share429: round(limited.length / Math.max(1, requests.length)),
        limitShare429: round(limited.filter((r) => r.fault === 'rate-limit').length / Math.max(1, requests.length)),
        calls: requests.length,
        labelP50NoWaveSeconds: round(percentile(noWave.seconds, 0.5)),
        labelP95NoWaveSeconds: round(percentile(noWave.seconds, 0.95)),
        labelP50WaveSeconds: round(percentile(withWave, 0.5)),
        labelP95WaveSeconds: round(percentile(withWave, 0.95)),
        waveP95Ratio: round(percentile(withWave, 0.95) / Math.max(0.001, percentile(noWave.seconds, 0.95))),
        duplicateLabels: [...perOrder.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0),
        workflowTasksMedian: percentile(tasks, 0.5),
        workflowTasksMax: Math.max(...tasks),
        callsDuringRetryAfter: during,
        callsDuringNoiseRetryAfter: early.length - during,
        seconds: Math.round((Date.now() - started) / 1000),
      };
      log(`rate-limit, ${setting.name}: accepted ${row.acceptedPerLimit} of the limit, ${Math.round(row.share429 * 1000) / 10} % 429s`);
      rows.push(row);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await fake.close();
    }
  }
  return rows;
}

/** Starts `count` orders at once; resolves with each one's seconds from start to label. */
async function labelLatencies(
  server: DevServer,
  fake: FakeShippingApi,
  taskQueue: string,
  tag: string,
  count: number,
  pollIntervalMs: number,
): Promise<{ seconds: number[]; orderIds: string[] }> {
  const stamp = Date.now();
  const startedAt = new Map<string, number>();
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const input: ShipmentInput = { ...benchOrder(`${tag}-${i}-${stamp}`), tracking: { pollIntervalMs, pollIntervalsMs: {} } };
      startedAt.set(input.orderId, Date.now());
      await startShipment(server.client, taskQueue, input);
    }),
  );
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    const created = fake.labels().filter((l) => startedAt.has(l.customerOrderNumber));
    if (created.length >= count) {
      return {
        seconds: created.map((l) => (Date.parse(l.createdAt) - startedAt.get(l.customerOrderNumber)!) / 1000),
        orderIds: [...startedAt.keys()],
      };
    }
    if (Date.now() > deadline) throw new Error(`only ${created.length} of ${count} labels after 15 minutes`);
    await sleep(250);
  }
}

/**
 * Workflow tasks per shipment once it waits for tracking (label created, order read): a first
 * attempt that waits long for the pace inside its workflow task makes the SDK extend the task,
 * which costs extra tasks and history events.
 */
async function workflowTasksToTracking(server: DevServer, orderIds: string[]): Promise<number[]> {
  const deadline = Date.now() + 120_000;
  const counts: number[] = [];
  for (const orderId of orderIds) {
    const handle = server.client.workflow.getHandle(shipmentWorkflowId({ shop: 'bench', orderId }));
    for (;;) {
      const events = (await handle.fetchHistory()).events ?? [];
      // Tracking has begun once the tracking wait is scheduled (after the order read).
      const tracking = events.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'awaitTrackingChange');
      if (tracking || Date.now() > deadline) {
        counts.push(events.filter((e) => e.workflowTaskCompletedEventAttributes).length);
        break;
      }
      await sleep(500);
    }
  }
  return counts;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

const round = (n: number) => Math.round(n * 1000) / 1000;
