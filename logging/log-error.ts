/**
 * An error as a log line shows it: message, type and cause chain. pino serialises only `err`,
 * and the SDK logs its failures under `error` ("Workflow failed", "Activity failed"); an error
 * made inside the workflow sandbox is of another realm, so `instanceof Error` is false and
 * JSON.stringify of it is `{}`. This reads any error-like value by its fields instead, and takes
 * nothing else from it (no details, headers or request: those may hold personal data or
 * credentials), so the line tells what failed and nothing it must not.
 */

export interface LoggedError {
  /** The class (`TypeError`, `ApplicationFailure`, `ShippingApiError`, …). */
  name: string;
  /** ApplicationFailure's type, or a Node error's code. */
  type?: string;
  message: string;
  nonRetryable?: boolean;
  stack?: string;
  cause?: LoggedError;
}

const MAX_TEXT = 4_000;
const MAX_CAUSES = 8;
const REDACTED = '[redacted]';

/**
 * A serializer for pino: `secrets` are values (credentials the process holds) masked wherever
 * they appear in a message or stack.
 */
export function errorSerializer(secrets: readonly string[] = []): (value: unknown) => unknown {
  const masked = secrets.filter((s) => s.length >= 6);
  const clean = (text: string) => bounded(masked.reduce((t, s) => t.split(s).join(REDACTED), text));
  const read = (value: unknown, depth: number): LoggedError | undefined => {
    if (!isErrorLike(value)) return undefined;
    const name = typeof value.name === 'string' && value.name !== '' ? value.name : classNameOf(value);
    const kind = [value.type, value.code, value.kind].find((k): k is string => typeof k === 'string');
    const cause = depth < MAX_CAUSES ? read(value.cause, depth + 1) : undefined;
    return {
      name,
      ...(kind === undefined ? {} : { type: kind }),
      message: clean(value.message),
      ...(typeof value.nonRetryable === 'boolean' ? { nonRetryable: value.nonRetryable } : {}),
      ...(typeof value.stack === 'string' ? { stack: clean(value.stack) } : {}),
      ...(cause ? { cause } : {}),
    };
  };
  return (value) => read(value, 0) ?? value;
}

interface ErrorLike {
  message: string;
  name?: unknown;
  type?: unknown;
  code?: unknown;
  nonRetryable?: unknown;
  stack?: unknown;
  cause?: unknown;
  /** A failure record's kind (the workflow's RecordedError): plain data, no class of its own. */
  kind?: unknown;
  constructor?: { name?: string };
}

/** An error's class; a plain object (a failure record) is no class: `Error`, never `Object`. */
function classNameOf(value: ErrorLike): string {
  const name = value.constructor?.name;
  return name && name !== 'Object' ? name : 'Error';
}

/** Of any realm: the workflow sandbox's errors are not instances of this realm's Error. */
function isErrorLike(value: unknown): value is ErrorLike {
  if (typeof value !== 'object' || value === null) return false;
  if (value instanceof Error) return true;
  return Object.prototype.toString.call(value) === '[object Error]' || typeof (value as { message?: unknown }).message === 'string';
}

function bounded(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… (${text.length - MAX_TEXT} more characters)` : text;
}

/** The values of the settings that hold credentials (…KEY, …TOKEN, …SECRET, …PASSWORD), to mask. */
export function secretsOfEnv(env: Record<string, string | undefined>): string[] {
  return Object.entries(env)
    .filter(([name, value]) => /(KEY|TOKEN|SECRET|PASSWORD)S?$/.test(name) && value !== undefined && value.length >= 6)
    .map(([, value]) => value as string);
}
