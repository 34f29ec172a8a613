/**
 * Pino for the whole process, and the bridge that sends Temporal's logs (workflow and activity
 * loggers, and the SDK core) through it, so every line is JSON with its workflow context.
 */
import pino, { type Logger as Pino } from 'pino';
import pinoPretty from 'pino-pretty';
import { ApplicationFailure, type Logger, type LogLevel, type LogMetadata } from '@temporalio/common';
import { FAILURE_TYPES, SHOP_BUSY, SHOP_ORDER_CHANGED, SHOP_UNAVAILABLE } from '../workflow-definitions/activity-failures';
import { errorSerializer } from './log-error';

/**
 * Where log lines go: JSON for machines, or pino-pretty's one readable line per entry for a
 * person (a terminal, or `npm run dev`, which sets LOG_FORMAT=pretty).
 */
export function logDestination(
  format: 'json' | 'pretty' | undefined,
  stdout: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): pino.DestinationStream | undefined {
  const pretty = format === 'pretty' || (format === undefined && stdout.isTTY === true);
  if (!pretty) return undefined;
  return pinoPretty({
    destination: stdout,
    colorize: stdout.isTTY === true && !process.env.NO_COLOR,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    singleLine: true,
  });
}

/** `secrets`: values the process holds (secretsOfEnv) that an error's text must never show. */
export function createLogger(level: string, destination?: pino.DestinationStream, secrets: readonly string[] = []): Pino {
  const errorFields = errorSerializer(secrets);
  return pino(
    {
      level,
      base: { service: 'shipping-sync-worker' },
      // Our code logs errors as `err`, the SDK as `error`: both show message, type and cause chain.
      serializers: { err: errorFields, error: errorFields },
      // Defence in depth: credentials are never logged on purpose, and are censored if they ever are.
      redact: {
        paths: ['apiKey', 'apiToken', '*.apiKey', '*.apiToken', 'headers["x-rr-apikey"]', 'headers["x-rr-apitoken"]'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

// Failures our activities already logged once, in their own words (shipping API and shop delivery),
// and the merchant's change the label's check found (an expected outcome, said once at info).
const SHIPPING_FAILURE_TYPES = new Set([...Object.values(FAILURE_TYPES), SHOP_BUSY, SHOP_UNAVAILABLE, SHOP_ORDER_CHANGED]);

/**
 * Temporal's Logger interface on top of pino: meta (workflowId, activityId, ...) becomes fields.
 * Two corrections to the SDK's lines: the activity task token is dropped (it completes the
 * activity, so it is a credential of sorts, and it is noise), and the SDK's own "Activity failed"
 * for a shipping API failure or the shop's change found before the label goes to debug: the
 * activity logged it once already, with the call's context, at the level it deserves (a 429 or a
 * merchant's cancel is info, not a warning with a stack trace).
 */
export class PinoTemporalLogger implements Logger {
  constructor(private readonly pino: Pino) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const { taskToken: _token, ...fields } = meta ?? {};
    const error: unknown = fields.error;
    const shippingFailure = error instanceof ApplicationFailure && SHIPPING_FAILURE_TYPES.has(error.type ?? '');
    const effective = message === 'Activity failed' && shippingFailure ? 'DEBUG' : level;
    this.pino[LEVELS[effective]](fields, message);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}
