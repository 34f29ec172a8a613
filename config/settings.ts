/**
 * All configuration, read from environment variables and validated with zod in one place.
 * A bad or missing setting fails at start with one line per variable; secret values are
 * never echoed back. Where Temporal is and how to reach it: temporal-connection.ts.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { getHeapStatistics } from 'node:v8';
import ms, { type StringValue } from 'ms';
import { z } from 'zod';
import { formatDuration } from '../domain/duration';
import { DEFAULT_TRACKING_POLICY, type TrackingPolicy as TrackingPolicyShape } from '../domain/shipment';
import { DEFAULT_LIVE_ORDER_MAX_AGE_MS, type ShipmentPriorities } from '../domain/priority';
import { TrackingPolicy } from '../domain/schemas';
import { CLIENT_DEFAULTS, type ShippingApiClientOptions } from '../shipping-api/client';
import { credentialProblem, type CredentialsConfig, type SecretSource } from '../shipping-api/credentials';

/**
 * Parses `500ms`, `20s`, `5m`, `3h`, `7d` (or a bare number of milliseconds; `ms` also takes the
 * long forms, `90 seconds`, `2 days`); undefined unless a positive whole number of milliseconds.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined; // ms throws on it
  const parsed = ms(trimmed as StringValue) as number | undefined;
  if (parsed === undefined || !Number.isFinite(parsed)) return undefined;
  const rounded = Math.round(parsed);
  return rounded > 0 ? rounded : undefined;
}

/**
 * Longest wait a Node timer holds (2^31-1 ms, 24.8 days): setTimeout fires a longer one after
 * 1 ms, so an HTTP timeout of "30d" failed every call at once.
 */
export const TIMER_MAX_MS = 2 ** 31 - 1;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export interface DurationBounds {
  minMs: number;
  maxMs: number;
}

/** HTTP timeouts: below 100 ms nothing answers, beyond 10 minutes a stuck call holds its slot for nothing. */
export const HTTP_TIMEOUT_BOUNDS: DurationBounds = { minMs: 100, maxMs: 10 * MINUTE };

/** Parses a duration within `bounds`; undefined with the reason otherwise. */
function boundedDuration(text: string, { minMs, maxMs }: DurationBounds): { ms: number } | { problem: string } {
  // Zero only where the bounds allow it (an import's overlap); elsewhere a duration is positive.
  const ms = minMs === 0 && /^\s*0+(\.0+)?\s*(ms|s|m|h|d)?\s*$/.test(text) ? 0 : parseDuration(text);
  if (ms === undefined) return { problem: `must be a positive duration like 500ms, 20s, 5m, 3h or 7d (got "${text}")` };
  if (ms < minMs || ms > maxMs)
    return { problem: `must be from ${formatDuration(minMs)} to ${formatDuration(maxMs)} (got "${text.trim()}")` };
  return { ms };
}

/** A duration setting (`500ms` … `7d`) with its default and bounds, parsed to milliseconds. */
export const duration = (fallback: string, bounds: DurationBounds) =>
  z
    .string({ error: 'must be a duration string like 500ms, 20s, 5m, 3h or 7d' })
    .default(fallback)
    .transform((text, ctx) => {
      const parsed = boundedDuration(text, bounds);
      if ('problem' in parsed) {
        ctx.addIssue({ code: 'custom', message: parsed.problem });
        return z.NEVER;
      }
      return parsed.ms;
    });

/** A poll faster than this is a busy loop against the API; slower than a timer holds is never. */
export const POLL_INTERVAL_BOUNDS: DurationBounds = { minMs: 100, maxMs: TIMER_MAX_MS };
/** How long a shipment is tracked or waits for corrected data: up to a year. */
const LONG_WAIT_BOUNDS: DurationBounds = { minMs: SECOND, maxMs: 365 * DAY };

/** A rate in calls per second, at most `max`. */
const optionalRate = (max: number) => z.coerce.number().positive().max(max, `must be at most ${max} per second`).optional();
const positiveInt = (fallback: number, max: number, why: string) =>
  z.coerce.number().int().positive().max(max, `must be at most ${max} (${why})`).default(fallback);

/** `Stage=duration` pairs, e.g. `Pending=6h,OutForDelivery=1h`; `none` polls every stage at TRACKING_POLL_INTERVAL. */
const stageIntervals = (fallback: Record<string, number>) =>
  z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return fallback;
      if (text.trim() === 'none') return {};
      const out: Record<string, number> = {};
      for (const pair of text
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)) {
        const match = /^([^=\s]+)\s*=\s*(.+)$/.exec(pair);
        if (!match || parseDuration(match[2]!) === undefined) {
          ctx.addIssue({ code: 'custom', message: `"${pair}" is not Stage=duration (e.g. InTransit=3h, OutForDelivery=1h), or use none` });
          return z.NEVER;
        }
        const parsed = boundedDuration(match[2]!, POLL_INTERVAL_BOUNDS);
        if ('problem' in parsed) {
          ctx.addIssue({ code: 'custom', message: `${match[1]}: ${parsed.problem}` });
          return z.NEVER;
        }
        out[match[1]!] = parsed.ms;
      }
      return out;
    });

/**
 * What one cached shipment holds in the workflow thread's heap, measured (`npm run bench --
 * --scenario scale`: 88 MB used with 500 cached, 29 MB with none): bounds what may be set
 * (`maxCachedWorkflowsForHeap`). docs/configuration.md, "Worker memory and concurrency".
 */
export const CACHED_WORKFLOW_BYTES = 120 * 1024;
/**
 * What one cache place costs the worker's RSS in all: the workflow thread's heap, the SDK core's
 * state for the run, and what the allocator keeps for them. Measured with jemalloc, as `npm
 * start` runs: 3,000 brought to tracking, back to back on a quiet machine, 369 MB settled with 512
 * places and 246 MB with 256, about 480 KB a place (docs/benchmarks.md).
 */
export const CACHED_WORKFLOW_RSS_BYTES = 480 * 1024;
/**
 * The workflow cache's share of a default worker's memory goal (500 MB settled, 700 MB at the
 * peak of an import, with 10,000 shipments in tracking). 256 places hold what an import keeps in
 * flight: 10,000 imported at 14 a second made no cache miss (no replay) with 256.
 */
export const WORKFLOW_CACHE_BUDGET_BYTES = 120 * 2 ** 20;
/** The default cache: as many places as the budget holds at the measured cost of one. */
export function defaultMaxCachedWorkflows(budgetBytes = WORKFLOW_CACHE_BUDGET_BYTES, bytesPerWorkflow = CACHED_WORKFLOW_RSS_BYTES): number {
  return Math.floor(budgetBytes / bytesPerWorkflow);
}
export const WORKER_DEFAULTS = {
  // A shipment waiting for its tracking's next change needs no cache place (its poller shard
  // polls it; a cache miss replays ~40 events): the import's gate keeps at most a few hundred in flight.
  maxCachedWorkflows: defaultMaxCachedWorkflows(),
  maxConcurrentWorkflowTaskExecutions: 40,
  maxConcurrentActivityTaskExecutions: 100,
} as const;
/**
 * The fleet's tracking pollers (activities/tracking-poller.ts): shards per task queue, each
 * carrying its labels in its continue-as-new input (about 250 bytes a label: keep shards under
 * about 4,000 labels each, see docs/capacity.md), and how long one span polls before its shard
 * continues as new.
 */
export const TRACKING_POLLER_DEFAULTS = { shards: 16, spanMs: 10 * 60_000, maxLabels: 4000 } as const;
/** How often the tracking reconciler looks for shipments no shard watches (tracking-poller/reconciler.ts). */
export const TRACKING_RECONCILE_DEFAULT_MS = 10 * 60_000;
export const TRACKING_POLLER_SPAN_BOUNDS: DurationBounds = { minMs: 1000, maxMs: 60 * 60_000 };

/**
 * The live shipments' worker (worker/create-worker.ts `createShipmentWorkers`): the configured
 * slots, its own cache. A live shipment is cached while its label is made; waiting for tracking
 * it needs no place, so 100 keeps a burst's labels cached at two fifths of the shipments' cache.
 */
export const LIVE_WORKER_DEFAULTS = { maxCachedWorkflows: 100 } as const;
/**
 * The shop pulls' worker (its own task queue): one page read and a few shipment starts at a time
 * per shop, so a few slots serve many shops; a pull's workflow is a loop of a few dozen events.
 */
export const PULL_WORKER_DEFAULTS = {
  maxCachedWorkflows: 50,
  maxConcurrentWorkflowTaskExecutions: 4,
  maxConcurrentActivityTaskExecutions: 8,
} as const;
const PORT_MESSAGE = 'must be a TCP port number (1..65535)';
/** The health server has no authentication: loopback unless WORKER_HEALTH_HOST says otherwise. */
export const HEALTH_DEFAULTS = { host: '127.0.0.1' } as const;

/** A TCP port a server of the worker listens on; unset = that server is off. */
const portSetting = () =>
  z
    .string()
    .regex(/^\d{1,5}$/, PORT_MESSAGE)
    .transform(Number)
    .pipe(z.number().min(1, PORT_MESSAGE).max(65535, PORT_MESSAGE))
    .optional();

/** The interface it listens on: loopback unless told otherwise. */
const hostSetting = () =>
  z.string().refine(isHost, 'must be an IP address or a host name, e.g. 127.0.0.1 or 0.0.0.0').default(HEALTH_DEFAULTS.host);

/**
 * The cache may take at most half the heap at the measured cost of a place. 1,000,000,000 logged
 * "worker started", then aborted allocating 36 GB.
 */
export function maxCachedWorkflowsForHeap(heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  return Math.floor(heapLimitBytes / 2 / CACHED_WORKFLOW_BYTES);
}

/** An IP address or a DNS name (no scheme, no port). */
export function isHost(text: string): boolean {
  return (
    isIP(text) !== 0 ||
    /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/.test(text)
  );
}

/** `host:port` (an IPv6 host in brackets) with a port of 1..65535; undefined when it is not. */
export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:/[\]@]+)):(\d{1,5})$/.exec(text);
  if (!match) return undefined;
  const host = match[1] ?? match[2]!;
  const port = Number(match[3]);
  if (port < 1 || port > 65535 || (match[1] !== undefined ? isIP(host) !== 6 : !isHost(host))) return undefined;
  return { host, port };
}

const hostPort = (example: string) =>
  z.string().refine((text) => parseHostPort(text) !== undefined, `must be host:port with a port from 1 to 65535, e.g. ${example}`);
const secret = z.string({ error: 'is required' }).min(1, 'is required');

/** The default account's address and credentials (required unless SHIPPING_ACCOUNTS names the accounts). */
const DefaultAccountEnv = z.object({
  SHIPPING_API_BASE_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://sandbox.example/api' })
    .describe('Base address of the shipping API (sandbox or production), http(s): the account "default"'),
  SHIPPING_API_KEY: secret.describe('API key, sent as x-rr-apikey (or SHIPPING_API_KEY_FILE); never in workflow input, history or logs'),
  SHIPPING_API_TOKEN: secret.describe(
    'API token, sent as x-rr-apitoken (or SHIPPING_API_TOKEN_FILE); never in workflow input, history or logs',
  ),
});

/** How every account's client calls: shared by all accounts. */
const ShippingClientEnv = z.object({
  SHIPPING_API_PRODUCTS_COURIER_PARAM: z
    .string()
    .min(1)
    .default(CLIENT_DEFAULTS.productsCourierParam)
    .describe('Query parameter of GET /products that selects the courier (not shown in the spec)'),
  SHIPPING_API_TIMEOUT: duration(`${CLIENT_DEFAULTS.headersTimeoutMs}ms`, HTTP_TIMEOUT_BOUNDS).describe(
    'Headers and body timeout of each HTTP call, 100ms to 10m',
  ),
  SHIPPING_API_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024, 'must be at least 65536 (64 KiB)')
    .max(256 * 1024 * 1024, 'must be at most 268435456 (256 MiB)')
    .default(CLIENT_DEFAULTS.maxResponseBytes)
    .describe('Largest answer body read, 64 KiB to 256 MiB'),
});

const ShippingEnv = DefaultAccountEnv.extend(ShippingClientEnv.shape);

const WorkerEnv = ShippingEnv.extend({
  LOG_LEVEL: z
    .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
    .default('info')
    .describe('trace, debug, info, warn, error, fatal or silent'),
  LOG_FORMAT: z
    .enum(['json', 'pretty'], { error: 'must be json or pretty' })
    .optional()
    .describe('json (one object a line, for log shippers) or pretty (for a person); unset: pretty on a terminal, else json'),
  TRACKING_POLL_INTERVAL: duration(`${DEFAULT_TRACKING_POLICY.pollIntervalMs}ms`, POLL_INTERVAL_BOUNDS).describe(
    'Time between tracking polls in a stage TRACKING_POLL_INTERVALS does not name (alone: every stage)',
  ),
  TRACKING_POLL_INTERVALS: stageIntervals(DEFAULT_TRACKING_POLICY.pollIntervalsMs ?? {}).describe(
    'Poll interval per stage, e.g. NotRegistered=2h,Pending=6h,OutForDelivery=1h; none: TRACKING_POLL_INTERVAL everywhere',
  ),
  TRACKING_MAX_DURATION: duration(`${DEFAULT_TRACKING_POLICY.maxTrackingMs}ms`, LONG_WAIT_BOUNDS).describe(
    'Tracking ends as tracking_timed_out after this',
  ),
  TRACKING_TERMINAL_TAGS: z
    .string()
    .default(DEFAULT_TRACKING_POLICY.terminalTags.join(','))
    .transform((s) =>
      s
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string()).min(1, 'must name at least one tag'))
    .describe('Comma-separated tracking tags that end a shipment'),
  LABEL_CORRECTION_TIMEOUT: duration(`${DEFAULT_TRACKING_POLICY.correctionTimeoutMs}ms`, LONG_WAIT_BOUNDS).describe(
    'How long a rejected label waits for corrected data (then label_failed)',
  ),
  SHOP_HOLD_TIMEOUT: duration(`${DEFAULT_TRACKING_POLICY.shopHoldTimeoutMs}ms`, LONG_WAIT_BOUNDS).describe(
    'How long a shipment whose order the merchant holds in the shop waits for the release (then hold_timed_out)',
  ),
  // Temporal terminates a workflow at 51,200 history events: continue-as-new must come well before.
  HISTORY_EVENT_LIMIT: z.coerce
    .number()
    .int()
    .min(10)
    .max(40_000, 'must be at most 40000 (Temporal ends a workflow at 51,200 history events)')
    .default(DEFAULT_TRACKING_POLICY.historyEventLimit)
    .describe('Continue-as-new at this history length (or when the server suggests it), 10 to 40000'),
  TRACKING_POLLERS: positiveInt(TRACKING_POLLER_DEFAULTS.shards, 1024, 'each shard is a workflow and a running activity').describe(
    'Tracking poller shards per shipping account (each polls its share of the open labels), 1 to 1024; every worker of a task queue the same',
  ),
  TRACKING_POLLER_SPAN: duration(`${TRACKING_POLLER_DEFAULTS.spanMs}ms`, TRACKING_POLLER_SPAN_BOUNDS).describe(
    'How long a poller shard polls before it continues as new with what it did, 1s to 1h',
  ),
  TRACKING_POLLER_MAX_LABELS: positiveInt(
    TRACKING_POLLER_DEFAULTS.maxLabels,
    6000,
    'a shard carries its labels in its continue-as-new input',
  ).describe(
    'Labels a tracking poller shard takes before new ones overflow to the next shard, 1 to 6000; every worker of a task queue the same',
  ),
  TRACKING_RECONCILE_EVERY: duration(`${TRACKING_RECONCILE_DEFAULT_MS}ms`, { minMs: 1000, maxMs: 24 * 3_600_000 }).describe(
    'How often a worker looks for shipments in tracking that no running poller shard watches and tells them to join again, 1s to 24h',
  ),
  /** Workflows kept in memory between their tasks; the rest replay their (short) history when woken. */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce
    .number()
    .int()
    .positive()
    .default(WORKER_DEFAULTS.maxCachedWorkflows)
    .superRefine((n, ctx) => {
      const max = maxCachedWorkflowsForHeap();
      const heapMb = Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
      if (n > max) {
        ctx.addIssue({
          code: 'custom',
          message: `must be at most ${max}: at about ${CACHED_WORKFLOW_BYTES / 1024} KB each, more do not fit half of this process's ${heapMb} MB heap limit (raise it with NODE_OPTIONS=--max-old-space-size=<MB>)`,
        });
      }
    })
    .describe(`Workflows kept in memory between their tasks (about ${CACHED_WORKFLOW_RSS_BYTES / 1024} KB of the worker's memory each)`),
  // Each task replays a workflow at once: beyond a few hundred they only compete for the CPU.
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: positiveInt(
    WORKER_DEFAULTS.maxConcurrentWorkflowTaskExecutions,
    500,
    'more only compete for the CPU',
  )
    .pipe(z.number().min(2, 'must be at least 2 (the SDK needs 2 with a workflow cache)'))
    .describe('Workflow tasks run at once, 2 to 500'),
  // Each in-flight call holds its answer in memory.
  WORKER_MAX_CONCURRENT_ACTIVITIES: positiveInt(
    WORKER_DEFAULTS.maxConcurrentActivityTaskExecutions,
    1000,
    'each in-flight API call holds its answer in memory',
  ).describe('API calls in flight at once, 1 to 1000'),
  /** Per-worker cap on activity starts per second. */
  WORKER_MAX_ACTIVITIES_PER_SECOND: optionalRate(100_000).describe('Per-worker cap on activity starts per second'),
  /** Server-enforced cap for the whole task queue; give every worker the same value. */
  TASK_QUEUE_MAX_ACTIVITIES_PER_SECOND: optionalRate(100_000).describe(
    'Server-enforced cap for the whole task queue; give every worker the same value',
  ),
  /** adaptive: find and follow the account's rate limit from 429s; off: every call at once. */
  SHIPPING_API_PACING: z
    .enum(['adaptive', 'off'], { error: 'must be adaptive or off' })
    .default('adaptive')
    .describe("adaptive: follow the account's rate limit from 429s, fleet-wide; off: every call at once"),
  /** learn: 429s no pace causes are learned from fresh calls and cost only their retry; off: every 429 holds and slows. */
  SHIPPING_API_429_NOISE: z
    .enum(['learn', 'off'], { error: 'must be learn or off' })
    .default('learn')
    .describe('learn: tell 429s no pace causes from a limit and let them cost only their retry; off: every 429 holds the fleet and slows'),
  /** Optional ceiling of the adaptive pace, in calls per second for the account, fleet-wide. */
  SHIPPING_API_MAX_REQUESTS_PER_SECOND: optionalRate(10_000).describe(
    "Ceiling of the adaptive pace, calls per second: the account's whatever the number of workers (each worker's with SHIPPING_API_PACE_SHARES=worker)",
  ),
  /**
   * fleet (default): one rate per account for the whole fleet, shared by demand; worker: each
   * worker finds its own share (the pace of 1.0: a small account shared by several workers
   * met 429s by the third, docs/retries-and-pacing.md).
   */
  SHIPPING_API_PACE_SHARES: z
    .enum(['fleet', 'worker'], { error: 'must be fleet or worker' })
    .default('fleet')
    .describe("fleet: the account's one rate, kept by the fleet and shared by demand; worker: each worker finds its own pace"),
  /** Orders pulled this soon after they were placed or changed go ahead of a backlog (domain/priority.ts). */
  LIVE_ORDER_MAX_AGE: livePriority().describe(
    "A pulled order changed at most this long before its shipment starts is live: its shipment and label go ahead of a backlog's (Temporal task priority); off: all alike",
  ),
  /** A workflow bundle prebuilt by `npm run build`; without it the worker bundles at start. */
  WORKFLOW_BUNDLE_PATH: z
    .string()
    .min(1)
    .optional()
    .describe('A workflow bundle prebuilt by npm run build; unset: bundled at start, in a process of its own'),
  /** e.g. 127.0.0.1:9464 for the SDK's Prometheus metrics of the worker (0.0.0.0:9464 to expose them). */
  METRICS_BIND_ADDRESS: hostPort('127.0.0.1:9464').optional().describe("host:port for the SDK's Prometheus metrics, e.g. 127.0.0.1:9464"),
  /** Port of /livez, /readyz and the project's /metrics; unset = no health server. */
  WORKER_HEALTH_PORT: portSetting().describe('Port of /livez, /readyz and /metrics; unset: no health server'),
  /** Loopback unless told otherwise: the endpoints have no authentication. */
  WORKER_HEALTH_HOST: hostSetting().describe('Address the health server listens on (no authentication: loopback unless told)'),
  /** Port of the platform webhook endpoint (shop-trigger/); unset = no endpoint, the schedules alone pull. */
  SHOP_TRIGGER_PORT: portSetting().describe(
    "Port of the Shopify/WooCommerce webhook endpoint that starts a shop's pull at once; unset: off",
  ),
  /** Every delivery is signature-checked; still loopback by default, behind the TLS proxy that exposes /hooks/. */
  SHOP_TRIGGER_HOST: hostSetting().describe(
    'Address the webhook endpoint listens on (put a TLS proxy in front: the platforms send to https only)',
  ),
});

/** LIVE_ORDER_MAX_AGE: a duration from 1s to 7d, or off. */
function livePriority() {
  return z
    .string()
    .default(formatDuration(DEFAULT_LIVE_ORDER_MAX_AGE_MS))
    .transform((text, ctx): ShipmentPriorities => {
      if (text.trim() === 'off') return 'off';
      const parsed = boundedDuration(text, LIVE_ORDER_AGE_BOUNDS);
      if ('ms' in parsed) return { liveOrderMaxAgeMs: parsed.ms };
      ctx.addIssue({ code: 'custom', message: `${parsed.problem}, or off` });
      return z.NEVER;
    });
}
const LIVE_ORDER_AGE_BOUNDS: DurationBounds = { minMs: SECOND, maxMs: 7 * DAY };

/** The shipment priorities a process that starts shipments uses (the worker's pulls, the import CLI). */
export function loadShipmentPriorities(env: Env = process.env): ShipmentPriorities {
  return parseEnv(z.object({ LIVE_ORDER_MAX_AGE: livePriority() }), env).LIVE_ORDER_MAX_AGE;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: Array<{ variable: string; message: string }>) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}`);
  }
}

export type Env = Record<string, string | undefined>;

/**
 * Runs loaders and keeps their ConfigErrors' problems instead of stopping at the first, so one
 * report names every bad setting: `collect(load)` is the loader's value, or undefined after a problem.
 */
export function problemCollector(): { problems: ConfigError['problems']; collect: <T>(load: () => T) => T | undefined } {
  const problems: ConfigError['problems'] = [];
  const collect = <T>(load: () => T): T | undefined => {
    try {
      return load();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
      return undefined;
    }
  };
  return { problems, collect };
}

/** `.acme.secrets[0]`, or `["my shop"]` for keys that are not plain identifiers: where in a JSON setting a problem is. */
export function jsonPath(path: ReadonlyArray<PropertyKey>): string {
  return path
    .map((segment) =>
      typeof segment === 'number'
        ? `[${segment}]`
        : /^[A-Za-z_$][\w$-]*$/.test(String(segment))
          ? `.${String(segment)}`
          : `[${JSON.stringify(String(segment))}]`,
    )
    .join('');
}

/** Parses `env` with `schema`; a failure is a ConfigError with one line per variable. */
export function parseEnv<S extends z.ZodType>(schema: S, env: Env): z.infer<S> {
  // Empty strings count as unset, as they do in most shells' `VAR= cmd`.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues.map((issue) => {
      const variable = String(issue.path[0] ?? '(environment)');
      // Zod does not keep the input in its issues; whether the variable was set tells "missing" from "not a number".
      const set = cleaned[variable] !== undefined;
      const message = issue.code !== 'invalid_type' ? issue.message : set ? `must be a ${issue.expected}` : 'is required';
      return { variable, message };
    }),
  );
}

/** Client options every account shares, from SHIPPING_API_TIMEOUT and friends. */
export type SharedClientOptions = Omit<ShippingApiClientOptions, 'baseUrl' | 'apiKey' | 'apiToken' | 'credentials'>;

export function loadShippingClientSettings(env: Env = process.env): SharedClientOptions {
  const e = parseEnv(ShippingClientEnv, env);
  return {
    productsCourierParam: e.SHIPPING_API_PRODUCTS_COURIER_PARAM,
    headersTimeoutMs: e.SHIPPING_API_TIMEOUT,
    bodyTimeoutMs: e.SHIPPING_API_TIMEOUT,
    maxResponseBytes: e.SHIPPING_API_MAX_RESPONSE_BYTES,
  };
}

/** Whether SHIPPING_ACCOUNTS names the accounts: then the default account is optional. */
export function accountsGiven(env: Env): boolean {
  return Boolean(env.SHIPPING_ACCOUNTS || env.SHIPPING_ACCOUNTS_FILE);
}

/**
 * The variables of the default account the environment must hold: none when SHIPPING_ACCOUNTS
 * names the accounts and SHIPPING_API_BASE_URL is unset; a key or token given as a _FILE is not
 * required inline.
 */
function defaultAccountSchema<S extends z.ZodObject<typeof DefaultAccountEnv.shape>>(schema: S, env: Env) {
  const none = accountsGiven(env) && !env.SHIPPING_API_BASE_URL;
  return schema.partial({
    SHIPPING_API_BASE_URL: none || undefined,
    SHIPPING_API_KEY: none || Boolean(env.SHIPPING_API_KEY_FILE) || undefined,
    SHIPPING_API_TOKEN: none || Boolean(env.SHIPPING_API_TOKEN_FILE) || undefined,
  } as Record<keyof typeof DefaultAccountEnv.shape, true>);
}

/**
 * The default account (`SHIPPING_API_BASE_URL`, `SHIPPING_API_KEY[_FILE]`, `SHIPPING_API_TOKEN[_FILE]`),
 * or null when SHIPPING_ACCOUNTS names the accounts and the base URL is unset. A file is checked
 * here and read by the client (again whenever it changes).
 */
export function loadDefaultAccount(env: Env = process.env): { baseUrl: string; credentials: CredentialsConfig } | null {
  const e = parseEnv(defaultAccountSchema(DefaultAccountEnv, env), env);
  if (!e.SHIPPING_API_BASE_URL) return null;
  const part = (name: 'SHIPPING_API_KEY' | 'SHIPPING_API_TOKEN'): SecretSource => {
    const file = env[`${name}_FILE`] || undefined;
    if (file && env[name]) throw new ConfigError([{ variable: name, message: `set either ${name} or ${name}_FILE, not both` }]);
    if (!file) return { value: e[name]! };
    const problem = credentialFileProblem(file);
    if (problem) throw new ConfigError([{ variable: `${name}_FILE`, message: problem }]);
    return { file: path.resolve(file) };
  };
  const { problems, collect } = problemCollector();
  const apiKey = collect(() => part('SHIPPING_API_KEY'));
  const apiToken = collect(() => part('SHIPPING_API_TOKEN'));
  if (problems.length > 0) throw new ConfigError(problems);
  return { baseUrl: e.SHIPPING_API_BASE_URL, credentials: { scheme: 'headers', apiKey: apiKey!, apiToken: apiToken! } };
}

/** Why a credential file cannot be used now (unreadable, too long, not one visible-ASCII value), or undefined. */
export function credentialFileProblem(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
  }
  const problem = credentialProblem(text.trim());
  return problem ? `${file}: the credential ${problem}` : undefined;
}

/** The default account's client options with its credentials read now (the command line's one-shot calls). */
export function loadShippingApiSettings(env: Env = process.env): ShippingApiClientOptions {
  const account = loadDefaultAccount({ ...env, SHIPPING_ACCOUNTS: undefined, SHIPPING_ACCOUNTS_FILE: undefined })!;
  const read = (source: SecretSource) => ('value' in source ? source.value : readFileSync(source.file, 'utf8').trim());
  const { credentials } = account as { credentials: Extract<CredentialsConfig, { scheme: 'headers' }> };
  return {
    baseUrl: account.baseUrl,
    apiKey: read(credentials.apiKey),
    apiToken: read(credentials.apiToken),
    ...loadShippingClientSettings(env),
  };
}

export interface PacingSettings {
  mode: 'adaptive' | 'off';
  /** Ceiling of the account's pace, calls per second, fleet-wide (one worker alone: its own); unset: whatever the account accepts. */
  maxRequestsPerSecond?: number;
  /** fleet (the default, also when unset): one rate per account for the whole fleet; worker: each worker paces alone (AIMD shares). */
  shares?: 'fleet' | 'worker';
  /** Whether 429s no pace causes are learned (default) or each 429 holds and slows. */
  noise?: 'learn' | 'off';
}

export interface WorkerSettings {
  /** How every account's client calls (the accounts themselves: config/shipping-accounts.ts). */
  shippingClient: SharedClientOptions;
  logLevel: z.infer<typeof WorkerEnv>['LOG_LEVEL'];
  /** Unset: pretty when stdout is a terminal. */
  logFormat?: 'json' | 'pretty';
  tracking: TrackingPolicyShape;
  trackingPollers: { shards: number; spanMs: number; maxLabels: number };
  /** The tracking reconciler's pass interval. */
  trackingReconcileMs: number;
  maxActivitiesPerSecond?: number;
  maxTaskQueueActivitiesPerSecond?: number;
  pacing: PacingSettings;
  maxCachedWorkflows: number;
  maxConcurrentWorkflowTaskExecutions: number;
  maxConcurrentActivityTaskExecutions: number;
  workflowBundlePath?: string;
  metricsBindAddress?: string;
  /** The health server's address, when WORKER_HEALTH_PORT is set. */
  health?: { host: string; port: number };
  /** The platform webhook endpoint's address, when SHOP_TRIGGER_PORT is set. */
  shopTrigger?: { host: string; port: number };
  /** Undefined only when told PAYLOAD_ENCRYPTION=off: payloads are stored in clear. */
  payloadEncryption?: PayloadEncryptionSettings;
  /** Which pulled orders' shipments go ahead of a backlog. */
  priorities: ShipmentPriorities;
}

export function loadWorkerSettings(env: Env = process.env): WorkerSettings {
  let e: z.infer<typeof WorkerEnv>;
  try {
    e = parseEnv(defaultAccountSchema(WorkerEnv, env), env) as z.infer<typeof WorkerEnv>;
  } catch (err) {
    // One report for every bad variable, the encryption keys' included.
    if (!(err instanceof ConfigError)) throw err;
    try {
      loadPayloadEncryptionSettings(env);
    } catch (keyErr) {
      if (keyErr instanceof ConfigError) throw new ConfigError([...err.problems, ...keyErr.problems]);
    }
    throw err;
  }
  const encryption = loadRequiredPayloadEncryption(env, WORKER_WITHOUT_KEYS);
  const payloadEncryption = encryption === 'off' ? undefined : encryption;
  if (e.LOG_LEVEL === 'trace' && !payloadEncryption) {
    // The SDK logs every workflow activation and activity task at trace, payloads included:
    // label requests (names, addresses, phones) in base64 unless they are encrypted.
    throw new ConfigError([
      {
        variable: 'LOG_LEVEL',
        message:
          'trace logs every workflow and activity payload (label requests with names and addresses); allowed only with PAYLOAD_ENCRYPTION_KEYS set, so they are ciphertext. Use debug otherwise',
      },
    ]);
  }
  const tracking = TrackingPolicy.safeParse({
    pollIntervalMs: e.TRACKING_POLL_INTERVAL,
    // As for an order's own settings: one interval given without a stage table means every stage.
    pollIntervalsMs: env.TRACKING_POLL_INTERVAL && !env.TRACKING_POLL_INTERVALS ? {} : e.TRACKING_POLL_INTERVALS,
    maxTrackingMs: e.TRACKING_MAX_DURATION,
    terminalTags: e.TRACKING_TERMINAL_TAGS,
    correctionTimeoutMs: e.LABEL_CORRECTION_TIMEOUT,
    shopHoldTimeoutMs: e.SHOP_HOLD_TIMEOUT,
    historyEventLimit: e.HISTORY_EVENT_LIMIT,
  });
  if (!tracking.success) {
    throw new ConfigError(
      tracking.error.issues.map((issue) => ({ variable: `tracking policy ${issue.path.join('.')}`, message: issue.message })),
    );
  }
  return {
    shippingClient: loadShippingClientSettings(env),
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    tracking: tracking.data,
    trackingPollers: { shards: e.TRACKING_POLLERS, spanMs: e.TRACKING_POLLER_SPAN, maxLabels: e.TRACKING_POLLER_MAX_LABELS },
    trackingReconcileMs: e.TRACKING_RECONCILE_EVERY,
    maxActivitiesPerSecond: e.WORKER_MAX_ACTIVITIES_PER_SECOND,
    maxTaskQueueActivitiesPerSecond: e.TASK_QUEUE_MAX_ACTIVITIES_PER_SECOND,
    pacing: {
      mode: e.SHIPPING_API_PACING,
      maxRequestsPerSecond: e.SHIPPING_API_MAX_REQUESTS_PER_SECOND,
      noise: e.SHIPPING_API_429_NOISE,
      shares: e.SHIPPING_API_PACE_SHARES,
    },
    maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    maxConcurrentWorkflowTaskExecutions: e.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    maxConcurrentActivityTaskExecutions: e.WORKER_MAX_CONCURRENT_ACTIVITIES,
    workflowBundlePath: e.WORKFLOW_BUNDLE_PATH,
    metricsBindAddress: e.METRICS_BIND_ADDRESS,
    health: e.WORKER_HEALTH_PORT === undefined ? undefined : { host: e.WORKER_HEALTH_HOST, port: e.WORKER_HEALTH_PORT },
    shopTrigger: e.SHOP_TRIGGER_PORT === undefined ? undefined : { host: e.SHOP_TRIGGER_HOST, port: e.SHOP_TRIGGER_PORT },
    payloadEncryption,
    priorities: e.LIVE_ORDER_MAX_AGE,
  };
}

/** Names of the worker's own variables, for --help texts (the connection's are in temporal-connection.ts). */
/**
 * `npm run worker -- --help`'s list of settings, from the schema itself: each variable with its
 * default (or "required"/"unset") and the meaning its schema carries.
 */
export function workerSettingsHelp(): string {
  const stages = Object.entries(DEFAULT_TRACKING_POLICY.pollIntervalsMs ?? {}).map(([stage, ms]) => `${stage}=${formatDuration(ms)}`);
  const rows = Object.entries(WorkerEnv.shape).map(
    ([name, schema]) =>
      [
        name,
        name === 'TRACKING_POLL_INTERVALS' ? `default ${stages.join(',')}` : defaultOf(schema as z.ZodType),
        schema.description ?? '',
      ] as const,
  );
  rows.push(
    ['SHIPPING_API_KEY_FILE', 'unset', 'SHIPPING_API_KEY from a file, read again when it changes (rotation without a restart)'],
    ['SHIPPING_API_TOKEN_FILE', 'unset', 'SHIPPING_API_TOKEN from a file, read again when it changes'],
    ['SHIPPING_ACCOUNTS', 'unset', 'JSON: accounts by name (baseUrl, auth, credentials, rate settings) and the shops each serves'],
    ['SHIPPING_ACCOUNTS_FILE', 'unset', 'The same, from a file (docs/configuration.md, "Shipping accounts")'],
    [
      'PAYLOAD_ENCRYPTION_KEYS',
      'required',
      'keyId=base64-of-32-bytes,...: encrypt payloads (names, addresses) before they leave the worker',
    ],
    ['PAYLOAD_ENCRYPTION_KEYS_FILE', 'unset', 'The same, from a file'],
    ['PAYLOAD_ENCRYPTION_KEY_ID', 'the first key', 'Which key encrypts new payloads'],
    ['PAYLOAD_ENCRYPTION', 'unset', 'off: run without keys, storing payloads in clear on purpose (not together with keys)'],
  );
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, fallback, meaning]) => `  ${name.padEnd(width)}  ${meaning} (${fallback})`).join('\n');
}

/** A setting's default as a user writes it: the text default of a duration, "required", or "unset". */
function defaultOf(schema: z.ZodType): string {
  const def = (schema as unknown as { _zod: { def: { type: string; defaultValue?: unknown; in?: z.ZodType; innerType?: z.ZodType } } })._zod
    .def;
  if (def.type === 'default') {
    const value = def.defaultValue;
    if (typeof value === 'string' && /^\d+ms$/.test(value)) return `default ${formatDuration(Number.parseInt(value, 10))}`;
    return `default ${String(value)}`;
  }
  if (def.type === 'optional') return 'unset';
  if (def.type === 'pipe' && def.in) return defaultOf(def.in);
  return 'required';
}

// ---------------------------------------------------------------- payload encryption

/** AES-256 needs exactly 32 bytes of key. */
export const ENCRYPTION_KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

export interface PayloadEncryptionSettings {
  /** Every key that may decrypt; `keys[0]` is not necessarily the active one. */
  keys: EncryptionKey[];
  /** The key new payloads are encrypted with. */
  activeKeyId: string;
}

/**
 * `keyId=base64,keyId=base64` (commas or newlines), each key 32 bytes. Problems name the key id,
 * never its material.
 */
function parseKeyList(text: string, ctx: z.RefinementCtx): EncryptionKey[] {
  const keys: EncryptionKey[] = [];
  const entries = text
    .split(/[,\n]/)
    .map((e) => e.trim())
    .filter((e) => e !== '' && !e.startsWith('#'));
  if (entries.length === 0) ctx.addIssue({ code: 'custom', message: 'holds no key; expected keyId=base64-of-32-bytes[,keyId=...]' });
  entries.forEach((entry, index) => {
    const eq = entry.indexOf('=');
    const id = eq > 0 ? entry.slice(0, eq).trim() : '';
    const material = eq > 0 ? entry.slice(eq + 1).trim() : '';
    const where = id ? `key "${id}"` : `entry ${index + 1}`;
    if (!KEY_ID.test(id)) {
      ctx.addIssue({ code: 'custom', message: `${where} is not keyId=base64 (a key id is 1-64 of A-Z a-z 0-9 . _ -)` });
      return;
    }
    if (keys.some((k) => k.id === id)) {
      ctx.addIssue({ code: 'custom', message: `duplicate key id "${id}"` });
      return;
    }
    if (material.length % 4 !== 0 || !BASE64.test(material)) {
      ctx.addIssue({ code: 'custom', message: `key "${id}" is not valid base64 (generate one with: openssl rand -base64 32)` });
      return;
    }
    const key = Buffer.from(material, 'base64');
    if (key.length !== ENCRYPTION_KEY_BYTES) {
      ctx.addIssue({
        code: 'custom',
        message: `key "${id}" must be ${ENCRYPTION_KEY_BYTES} bytes, got ${key.length} (generate one with: openssl rand -base64 32)`,
      });
      return;
    }
    keys.push({ id, key });
  });
  return keys;
}

/** A secret given inline (`NAME`) or as a file (`NAME_FILE`, e.g. a mounted Docker/Kubernetes secret), never both. */
function inlineOrFile(env: Env, name: string): { value: string; source: string } | undefined {
  const inline = env[name] || undefined;
  const file = env[`${name}_FILE`] || undefined;
  if (inline && file) throw new ConfigError([{ variable: name, message: `set either ${name} or ${name}_FILE, not both` }]);
  if (!file) return inline === undefined ? undefined : { value: inline, source: name };
  try {
    return { value: readFileSync(file, 'utf8'), source: `${name}_FILE` };
  } catch (err) {
    throw new ConfigError([
      { variable: `${name}_FILE`, message: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` },
    ]);
  }
}

/**
 * The payload encryption keys, or undefined when none are configured (then payloads are stored
 * as plain JSON, as before). The first key is the active one unless PAYLOAD_ENCRYPTION_KEY_ID names another.
 */
export function loadPayloadEncryptionSettings(env: Env = process.env): PayloadEncryptionSettings | undefined {
  const given = inlineOrFile(env, 'PAYLOAD_ENCRYPTION_KEYS');
  const activeId = env.PAYLOAD_ENCRYPTION_KEY_ID || undefined;
  if (!given) {
    if (activeId) throw new ConfigError([{ variable: 'PAYLOAD_ENCRYPTION_KEY_ID', message: 'is set but PAYLOAD_ENCRYPTION_KEYS is not' }]);
    return undefined;
  }
  const parsed = z.string().transform(parseKeyList).safeParse(given.value);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => ({ variable: given.source, message: issue.message })));
  const keys = parsed.data;
  if (activeId !== undefined && !keys.some((k) => k.id === activeId)) {
    throw new ConfigError([
      {
        variable: 'PAYLOAD_ENCRYPTION_KEY_ID',
        message: `"${activeId}" is not among the configured keys (${keys.map((k) => k.id).join(', ')})`,
      },
    ]);
  }
  return { keys, activeKeyId: activeId ?? keys[0]!.id };
}

/** The setting that lets a process send payloads in clear on purpose; `--no-encryption` sets it for the import and the CLI. */
export const PAYLOAD_ENCRYPTION_OFF = { variable: 'PAYLOAD_ENCRYPTION', value: 'off' } as const;

/**
 * The keys of a process that starts or reads shipments (the import, every CLI command), or 'off'
 * when told to send in clear (PAYLOAD_ENCRYPTION=off). Neither is a ConfigError naming the
 * settings: a client without keys would store names, addresses and phones in clear, silently.
 */
export function loadClientPayloadEncryption(env: Env = process.env): PayloadEncryptionSettings | 'off' {
  return loadRequiredPayloadEncryption(env, CLIENT_WITHOUT_KEYS);
}

const CLIENT_WITHOUT_KEYS =
  'is not set (nor PAYLOAD_ENCRYPTION_KEYS): this would send names, addresses and phones to Temporal in clear, so nothing was sent. ' +
  "Export the worker's keys (`npm run dev` prints the line; with `npm run dev` running in this checkout they are found by themselves), " +
  'or send in clear on purpose: PAYLOAD_ENCRYPTION=off or --no-encryption';

// A worker starts shipments too (its shop pulls and webhooks) and writes every result and state.
const WORKER_WITHOUT_KEYS =
  'is not set (nor PAYLOAD_ENCRYPTION_KEYS): the worker would store names, addresses and phones in Temporal in clear ' +
  '(the shipments its shop pulls start, every result and state), so it did not start. ' +
  'Give it the keys (docs/production.md, "Encrypted payloads and the codec server"), or run in clear on purpose: PAYLOAD_ENCRYPTION=off';

/**
 * The environment of a process run in clear on purpose (a bench or chaos run whose own clients
 * send in clear): the shell's keys left out, PAYLOAD_ENCRYPTION=off.
 */
export function inClear(env: Env): Env {
  const { PAYLOAD_ENCRYPTION_KEYS: _k, PAYLOAD_ENCRYPTION_KEYS_FILE: _f, PAYLOAD_ENCRYPTION_KEY_ID: _i, ...rest } = env;
  return { ...rest, [PAYLOAD_ENCRYPTION_OFF.variable]: PAYLOAD_ENCRYPTION_OFF.value };
}

/** The keys, or 'off' when told to work in clear; neither is a ConfigError naming the settings. */
function loadRequiredPayloadEncryption(env: Env, withoutKeys: string): PayloadEncryptionSettings | 'off' {
  const mode = parseEnv(z.object({ PAYLOAD_ENCRYPTION: z.enum(['off']).optional() }), env).PAYLOAD_ENCRYPTION;
  const keys = loadPayloadEncryptionSettings(env);
  if (mode === 'off' && keys) {
    throw new ConfigError([{ variable: 'PAYLOAD_ENCRYPTION', message: 'is off but PAYLOAD_ENCRYPTION_KEYS(_FILE) is set: drop one' }]);
  }
  if (keys) return keys;
  if (mode === 'off') return 'off';
  throw new ConfigError([{ variable: 'PAYLOAD_ENCRYPTION_KEYS_FILE', message: withoutKeys }]);
}

export const CODEC_SERVER_DEFAULTS = { host: '127.0.0.1', port: 8888, corsOrigins: ['http://localhost:8233'] } as const;

export interface CodecServerSettings {
  encryption: PayloadEncryptionSettings;
  /** Undefined only when the caller chose to run without authentication (loopback development). */
  token: string | undefined;
  corsOrigins: string[];
}

const CodecServerEnv = z.object({
  CODEC_SERVER_CORS_ORIGIN: z
    .string()
    .default(CODEC_SERVER_DEFAULTS.corsOrigins.join(','))
    .transform((s) =>
      s
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(
      z
        .array(z.url({ protocol: /^https?$/, error: 'must be http(s) origins like http://localhost:8233, comma-separated' }))
        .min(1, 'must name at least one origin')
        .transform((urls) => urls.map((u) => new URL(u).origin)),
    ),
});

/** The codec server needs keys and (unless `requireToken` is false) a bearer token of at least 16 characters. */
export function loadCodecServerSettings(
  env: Env = process.env,
  opts: { requireToken: boolean } = { requireToken: true },
): CodecServerSettings {
  const { problems, collect } = problemCollector();
  const encryption = collect(() => loadPayloadEncryptionSettings(env));
  if (!encryption && !problems.some((p) => p.variable.startsWith('PAYLOAD_ENCRYPTION_KEY'))) {
    problems.push({ variable: 'PAYLOAD_ENCRYPTION_KEYS', message: 'is required: the codec server encrypts and decrypts with these keys' });
  }
  const token = collect(() => inlineOrFile(env, 'CODEC_SERVER_TOKEN'))?.value.trim();
  if (opts.requireToken && !token && !problems.some((p) => p.variable.startsWith('CODEC_SERVER_TOKEN'))) {
    problems.push({ variable: 'CODEC_SERVER_TOKEN', message: 'is required (generate one with: openssl rand -hex 32)' });
  } else if (token !== undefined && token.length < 16) {
    problems.push({ variable: 'CODEC_SERVER_TOKEN', message: 'must be at least 16 characters (generate one with: openssl rand -hex 32)' });
  }
  const rest = collect(() => parseEnv(CodecServerEnv, env));
  if (problems.length > 0) throw new ConfigError(problems);
  return { encryption: encryption!, token: token || undefined, corsOrigins: rest!.CODEC_SERVER_CORS_ORIGIN };
}
