/**
 * A platform credential given inline or as a file (`consumerSecret` or `consumerSecretFile`),
 * as the shop connector configuration accepts it. The file is read when the worker loads its
 * configuration; problems name the field, never the value.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** Credentials are short: a longer value is a wrong file, not a token. */
const MAX_SECRET_LENGTH = 1024;

export const SecretText = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(MAX_SECRET_LENGTH, `must be at most ${MAX_SECRET_LENGTH} characters`)
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  .refine((text) => text.trim() === text && !/[\s\u0000-\u001f\u007f]/.test(text), 'must not contain whitespace or control characters');

/** A platform webhook key, or several while a key is rotated (old and new side by side, the newest last). */
export const WebhookSecretSetting = z.union([SecretText, z.array(SecretText).min(1, 'must not be empty').max(10, 'at most 10 keys')]);

/** A secret setting that may be a list (webhookSecret) as a list: none, one or several. */
export function secretList(value: string | readonly string[] | null): string[] {
  return value === null ? [] : typeof value === 'string' ? [value] : [...value];
}

export const SecretFile = z.string({ error: 'must be a file path' }).min(1, 'must not be empty');

export interface SecretProblem {
  /** The field to name: `consumerSecretFile`. */
  field: string;
  message: string;
}

/**
 * The value of `field` (inline) or `${field}File`; `{ problem }` when neither, both, or the file
 * cannot be read or holds something that is not a credential. `readFiles: false` (the import,
 * which only needs to know the connector type) returns an empty string for a file.
 */
export function resolveSecret(
  config: Record<string, unknown>,
  field: string,
  readFiles: boolean,
): { value: string } | { value: null } | { problem: SecretProblem } {
  // A list (webhookSecret during a rotation) passes as it is: the builder reads it with secretList.
  const inline = config[field] as string | undefined;
  const file = config[`${field}File`] as string | undefined;
  if (inline !== undefined && file !== undefined) return { problem: { field, message: `set either ${field} or ${field}File, not both` } };
  if (inline !== undefined) return { value: inline };
  if (file === undefined) return { value: null };
  if (!readFiles) return { value: '' };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return {
      problem: { field: `${field}File`, message: `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` },
    };
  }
  const parsed = SecretText.safeParse(text.replace(/\r?\n$/, ''));
  if (!parsed.success) return { problem: { field: `${field}File`, message: `${file}: ${parsed.error.issues[0]!.message}` } };
  return { value: parsed.data };
}

/** Makes `field` of `target` hold `value` without being enumerable: logs, JSON and spreads omit it. */
export function hideSecret<T extends object>(target: T, field: string, value: unknown): T {
  Object.defineProperty(target, field, { value, enumerable: false });
  return target;
}

/** A connector setting that is wrong, thrown while a connector is built and reported with its field. */
export class SettingError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Credentials in a URL's query or a form or JSON body, whoever's they are: a store that echoes a request echoes them. */
const SECRET_PARAMETER =
  /\b(consumer_key|consumer_secret|client_secret|access_token|oauth_signature|oauth_consumer_key)(=|%3D|"\s*:\s*"|'\s*:\s*')([^&\s"'<>;,)]*)/gi;
/** A known secret shorter than this is not searched for in text (it would cut words apart; such a secret is weak anyway). */
const MIN_SCRUBBED_LENGTH = 4;

/**
 * `text` (a store's answer, or a message made of one) with every known secret of the connector
 * and every credential parameter replaced by [redacted], before it becomes an error, a log line
 * or an activity failure. `known` holds the connector's secrets in the forms they travel in.
 */
export function scrubSecrets(text: string, known: readonly string[]): string {
  let out = text.replace(SECRET_PARAMETER, '$1$2[redacted]');
  for (const secret of known) {
    if (secret.length < MIN_SCRUBBED_LENGTH) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join('[redacted]');
  }
  return out;
}
