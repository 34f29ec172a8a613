/**
 * All configuration, read from environment variables and validated with zod in one place.
 * A bad or missing setting fails at start with one line per variable; secret values are
 * never echoed back. Where Temporal is and how to reach it: temporal-connection.ts.
 */
import { z } from 'zod';
import { DEFAULT_TRACKING_POLICY, type TrackingPolicy as TrackingPolicyShape } from '../workflows/definitions';
import { TrackingPolicy } from '../workflows/schemas';
import { CLIENT_DEFAULTS, type ShippingApiClientOptions } from '../shipping-api/client';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `500ms`, `20s`, `5m`, `3h`, `7d` (or a bare number of milliseconds). */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) return undefined;
  const ms = Math.round(Number(match[1]) * UNITS[match[2] ?? 'ms']!);
  return ms > 0 ? ms : undefined;
}

/** A duration setting (`500ms` … `7d`) with its default, parsed to milliseconds. */
export const duration = (fallback: string) =>
  z
    .string({ error: 'must be a duration string like 500ms, 20s, 5m, 3h or 7d' })
    .default(fallback)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined) {
        ctx.addIssue({ code: 'custom', message: `must be a positive duration like 500ms, 20s, 5m, 3h or 7d (got "${text}")` });
        return z.NEVER;
      }
      return ms;
    });

const optionalPositive = z.coerce.number().positive().optional();
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** `Stage=duration` pairs, e.g. `Pending=6h,OutForDelivery=1h`; `none` polls every stage at TRACKING_POLL_INTERVAL. */
const stageIntervals = (fallback: Record<string, number>) =>
  z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return fallback;
      if (text.trim() === 'none') return {};
      const out: Record<string, number> = {};
      for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
        const match = /^([^=\s]+)\s*=\s*(.+)$/.exec(pair);
        const ms = match ? parseDuration(match[2]!) : undefined;
        if (!match || ms === undefined) {
          ctx.addIssue({ code: 'custom', message: `"${pair}" is not Stage=duration (e.g. InTransit=3h, OutForDelivery=1h), or use none` });
          return z.NEVER;
        }
        out[match[1]!] = ms;
      }
      return out;
    });

/** Sized for a 2 GB worker: see README "Worker memory and concurrency". */
export const WORKER_DEFAULTS = {
  maxCachedWorkflows: 1000,
  maxConcurrentWorkflowTaskExecutions: 40,
  maxConcurrentActivityTaskExecutions: 100,
} as const;
const PORT_MESSAGE = 'must be a TCP port number (1..65535)';
const secret = z.string({ error: 'is required' }).min(1, 'is required');

const ShippingEnv = z.object({
  SHIPPING_API_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://sandbox.example/api' }),
  SHIPPING_API_KEY: secret,
  SHIPPING_API_TOKEN: secret,
  SHIPPING_API_PRODUCTS_COURIER_PARAM: z.string().min(1).default(CLIENT_DEFAULTS.productsCourierParam),
  SHIPPING_API_TIMEOUT: duration(`${CLIENT_DEFAULTS.headersTimeoutMs}ms`),
});

const WorkerEnv = ShippingEnv.extend({
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  TRACKING_POLL_INTERVAL: duration(`${DEFAULT_TRACKING_POLICY.pollIntervalMs}ms`),
  TRACKING_POLL_INTERVALS: stageIntervals(DEFAULT_TRACKING_POLICY.pollIntervalsMs ?? {}),
  TRACKING_MAX_DURATION: duration(`${DEFAULT_TRACKING_POLICY.maxTrackingMs}ms`),
  TRACKING_TERMINAL_TAGS: z
    .string()
    .default(DEFAULT_TRACKING_POLICY.terminalTags.join(','))
    .transform((s) => s.split(',').map((t) => t.trim()).filter(Boolean))
    .pipe(z.array(z.string()).min(1, 'must name at least one tag')),
  LABEL_CORRECTION_TIMEOUT: duration(`${DEFAULT_TRACKING_POLICY.correctionTimeoutMs}ms`),
  HISTORY_EVENT_LIMIT: z.coerce.number().int().min(10).default(DEFAULT_TRACKING_POLICY.historyEventLimit),
  /** Workflows kept in memory between their tasks; the rest replay their (short) history when woken. */
  WORKER_MAX_CACHED_WORKFLOWS: positiveInt(WORKER_DEFAULTS.maxCachedWorkflows),
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: positiveInt(WORKER_DEFAULTS.maxConcurrentWorkflowTaskExecutions).pipe(
    z.number().min(2, 'must be at least 2 (the SDK needs 2 with a workflow cache)'),
  ),
  WORKER_MAX_CONCURRENT_ACTIVITIES: positiveInt(WORKER_DEFAULTS.maxConcurrentActivityTaskExecutions),
  /** Per-worker cap on activity starts per second. */
  WORKER_MAX_ACTIVITIES_PER_SECOND: optionalPositive,
  /** Server-enforced cap for the whole task queue; give every worker the same value. */
  TASK_QUEUE_MAX_ACTIVITIES_PER_SECOND: optionalPositive,
  /** A workflow bundle prebuilt by `npm run build`; without it the worker bundles at start. */
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
  /** e.g. 0.0.0.0:9464 to expose Prometheus metrics of the worker. */
  METRICS_BIND_ADDRESS: z.string().min(1).optional(),
  /** Port of /livez, /readyz and the project's /metrics; unset = no health server. */
  WORKER_HEALTH_PORT: z
    .string()
    .regex(/^\d{1,5}$/, PORT_MESSAGE)
    .transform(Number)
    .pipe(z.number().min(1, PORT_MESSAGE).max(65535, PORT_MESSAGE))
    .optional(),
  WORKER_HEALTH_HOST: z.string().min(1).default('0.0.0.0'),
});

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: Array<{ variable: string; message: string }>) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}`);
  }
}

export type Env = Record<string, string | undefined>;

/** Parses `env` with `schema`; a failure is a ConfigError with one line per variable. */
export function parseEnv<S extends z.ZodType>(schema: S, env: Env): z.infer<S> {
  // Empty strings count as unset, as they do in most shells' `VAR= cmd`.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues.map((issue) => ({
      variable: String(issue.path[0] ?? '(environment)'),
      message: issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message,
    })),
  );
}

export function loadShippingApiSettings(env: Env = process.env): ShippingApiClientOptions {
  const e = parseEnv(ShippingEnv, env);
  return {
    baseUrl: e.SHIPPING_API_BASE_URL,
    apiKey: e.SHIPPING_API_KEY,
    apiToken: e.SHIPPING_API_TOKEN,
    productsCourierParam: e.SHIPPING_API_PRODUCTS_COURIER_PARAM,
    headersTimeoutMs: e.SHIPPING_API_TIMEOUT,
    bodyTimeoutMs: e.SHIPPING_API_TIMEOUT,
  };
}

export interface WorkerSettings {
  shippingApi: ShippingApiClientOptions;
  logLevel: z.infer<typeof WorkerEnv>['LOG_LEVEL'];
  tracking: TrackingPolicyShape;
  maxActivitiesPerSecond?: number;
  maxTaskQueueActivitiesPerSecond?: number;
  maxCachedWorkflows: number;
  maxConcurrentWorkflowTaskExecutions: number;
  maxConcurrentActivityTaskExecutions: number;
  workflowBundlePath?: string;
  metricsBindAddress?: string;
  /** The health server's address, when WORKER_HEALTH_PORT is set. */
  health?: { host: string; port: number };
}

export function loadWorkerSettings(env: Env = process.env): WorkerSettings {
  const e = parseEnv(WorkerEnv, env);
  return {
    shippingApi: loadShippingApiSettings(env),
    logLevel: e.LOG_LEVEL,
    tracking: TrackingPolicy.parse({
      pollIntervalMs: e.TRACKING_POLL_INTERVAL,
      // As for an order's own settings: one interval given without a stage table means every stage.
      pollIntervalsMs: env.TRACKING_POLL_INTERVAL && !env.TRACKING_POLL_INTERVALS ? {} : e.TRACKING_POLL_INTERVALS,
      maxTrackingMs: e.TRACKING_MAX_DURATION,
      terminalTags: e.TRACKING_TERMINAL_TAGS,
      correctionTimeoutMs: e.LABEL_CORRECTION_TIMEOUT,
      historyEventLimit: e.HISTORY_EVENT_LIMIT,
    }),
    maxActivitiesPerSecond: e.WORKER_MAX_ACTIVITIES_PER_SECOND,
    maxTaskQueueActivitiesPerSecond: e.TASK_QUEUE_MAX_ACTIVITIES_PER_SECOND,
    maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    maxConcurrentWorkflowTaskExecutions: e.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    maxConcurrentActivityTaskExecutions: e.WORKER_MAX_CONCURRENT_ACTIVITIES,
    workflowBundlePath: e.WORKFLOW_BUNDLE_PATH,
    metricsBindAddress: e.METRICS_BIND_ADDRESS,
    health: e.WORKER_HEALTH_PORT === undefined ? undefined : { host: e.WORKER_HEALTH_HOST, port: e.WORKER_HEALTH_PORT },
  };
}

/** Names of the worker's own variables, for --help texts (the connection's are in temporal-connection.ts). */
export const WORKER_ENV_VARIABLES = Object.keys(WorkerEnv.shape);
