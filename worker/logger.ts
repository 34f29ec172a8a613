/**
 * Pino for the whole process, and the bridge that sends Temporal's logs (workflow and activity
 * loggers, and the SDK core) through it, so every line is JSON with its workflow context.
 */
import pino, { type Logger as Pino } from 'pino';
import type { Logger, LogLevel, LogMetadata } from '@temporalio/common';

export function createLogger(level: string, destination?: pino.DestinationStream): Pino {
  return pino(
    {
      level,
      base: { service: 'shipping-sync-worker' },
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

/** Temporal's Logger interface on top of pino: meta (workflowId, activityId, ...) becomes fields. */
export class PinoTemporalLogger implements Logger {
  constructor(private readonly pino: Pino) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    this.pino[LEVELS[level]](meta ?? {}, message);
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
