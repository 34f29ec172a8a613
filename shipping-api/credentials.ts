/**
 * How a client authenticates to the shipping API, and where its credentials come from.
 *
 * - **headers** (the spec's scheme): `x-rr-apikey` and `x-rr-apitoken`.
 * - **bearer** (the spec's "alternative form", unverified against the real service):
 *   `Authorization: Bearer <token>`, on the host the account names, with `service.shipperAccountId`
 *   in every label request.
 *
 * Credentials given inline never change. Credentials read from files are read again when a file
 * changes (checked before every call: one `stat` per file) and once more after a 401, so a
 * rotated key is used from the next call on, without a restart. A call keeps the credentials it
 * started with. No credential value ever leaves this module but as the request's header.
 */
import { readFile, stat } from 'node:fs/promises';

export type AuthScheme = 'headers' | 'bearer';

export type Credentials =
  { scheme: 'headers'; apiKey: string; apiToken: string } | { scheme: 'bearer'; accessToken: string; shipperAccountId: string };

/** Where each secret part comes from: its value, or a file that holds it. */
export type SecretSource = { value: string } | { file: string };

export type CredentialsConfig =
  | { scheme: 'headers'; apiKey: SecretSource; apiToken: SecretSource }
  | { scheme: 'bearer'; accessToken: SecretSource; shipperAccountId: string };

/** Longest credential read from a file: a key or token is a line, not a document. */
export const MAX_CREDENTIAL_BYTES = 4096;
/** Visible ASCII only: a header value with a space, newline or control character would be refused or split. */
const CREDENTIAL = /^[\x21-\x7e]+$/;

/** Why a credential cannot be used; never holds the value itself. */
export function credentialProblem(value: string): string | undefined {
  if (value.length === 0) return 'is empty';
  if (value.length > MAX_CREDENTIAL_BYTES) return `is longer than ${MAX_CREDENTIAL_BYTES} characters`;
  if (!CREDENTIAL.test(value)) return 'holds a space, a line break or a character that is not visible ASCII';
  return undefined;
}

export class CredentialsError extends Error {
  override readonly name = 'CredentialsError';
}

export interface CredentialSource {
  /** The credentials for the next call: read again first if a file changed. */
  current(): Promise<Credentials>;
  /**
   * After a 401 with `used`: the files read again whatever their times say; the new credentials
   * when they differ from `used`, else null (the 401 stands).
   */
  renewedAfter(used: Credentials): Promise<Credentials | null>;
  /** Every credential value this source has held, for scrubbing texts that might echo one. */
  secrets(): readonly string[];
}

/** Inline credentials: fixed for the life of the process. */
export function fixedCredentials(credentials: Credentials): CredentialSource {
  const secrets = secretsOf(credentials);
  return {
    current: () => Promise.resolve(credentials),
    renewedAfter: () => Promise.resolve(null),
    secrets: () => secrets,
  };
}

export interface FileCredentialsOptions {
  /** Told (without any value) when the credentials changed, or a changed file could not be used. */
  onReload?: (event: { files: string[]; problem?: string }) => void;
}

/**
 * Credentials of which some parts come from files. The first read happens at once (a missing or
 * unusable file is a CredentialsError naming the file); later reads that fail keep the last good
 * credentials, so a file caught half-written never stops the calls.
 */
export async function credentialsFrom(config: CredentialsConfig, options: FileCredentialsOptions = {}): Promise<CredentialSource> {
  const parts = partsOf(config);
  const files = parts.flatMap(([, source]) => ('file' in source ? [source.file] : []));
  if (files.length === 0) return fixedCredentials(assemble(config, Object.fromEntries(parts.map(([name, s]) => [name, valueOf(s)]))));

  const seen = new Map<string, string>();
  const held = new Set<string>();
  // Times first: a file replaced between the two is read again at the first call.
  for (const file of files) seen.set(file, await fingerprint(file).catch(() => ''));
  let credentials = assemble(config, await readParts(parts));
  for (const secret of secretsOf(credentials)) held.add(secret);
  let checking: Promise<void> | null = null;

  async function reload(force: boolean): Promise<void> {
    const prints = await Promise.all(files.map((f) => fingerprint(f).catch(() => '')));
    const changed = files.filter((f, i) => prints[i] !== seen.get(f));
    if (!force && changed.length === 0) return;
    let next: Credentials;
    try {
      next = assemble(config, await readParts(parts));
    } catch (err) {
      // Half-written, or being replaced: keep calling with what worked; the next call looks again.
      options.onReload?.({ files: changed.length > 0 ? changed : files, problem: (err as Error).message });
      return;
    }
    files.forEach((f, i) => seen.set(f, prints[i]!));
    if (sameCredentials(next, credentials)) return;
    credentials = next;
    for (const secret of secretsOf(next)) held.add(secret);
    options.onReload?.({ files: changed.length > 0 ? changed : files });
  }

  /** One look at the files at a time: calls that arrive meanwhile share it. */
  function look(force: boolean): Promise<void> {
    if (!force && checking) return checking;
    const run = reload(force).finally(() => {
      if (checking === run) checking = null;
    });
    checking = run;
    return run;
  }

  return {
    async current() {
      await look(false);
      return credentials;
    },
    async renewedAfter(used) {
      if (!sameCredentials(used, credentials)) return credentials; // rotated while the call was out
      await look(true);
      return sameCredentials(used, credentials) ? null : credentials;
    },
    secrets: () => [...held],
  };
}

/** The headers a call carries. */
export function authHeaders(credentials: Credentials): Record<string, string> {
  return credentials.scheme === 'headers'
    ? { 'x-rr-apikey': credentials.apiKey, 'x-rr-apitoken': credentials.apiToken }
    : { authorization: `Bearer ${credentials.accessToken}` };
}

/** Replaces every known credential in `text` (an answer may echo what it refused). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4 && out.includes(secret)) out = out.split(secret).join('[redacted]');
  return out;
}

function secretsOf(credentials: Credentials): string[] {
  return credentials.scheme === 'headers' ? [credentials.apiKey, credentials.apiToken] : [credentials.accessToken];
}

function sameCredentials(a: Credentials, b: Credentials): boolean {
  return secretsOf(a).join('\u0000') === secretsOf(b).join('\u0000') && a.scheme === b.scheme;
}

type Part = 'apiKey' | 'apiToken' | 'accessToken';

function partsOf(config: CredentialsConfig): Array<[Part, SecretSource]> {
  return config.scheme === 'headers'
    ? [
        ['apiKey', config.apiKey],
        ['apiToken', config.apiToken],
      ]
    : [['accessToken', config.accessToken]];
}

function valueOf(source: SecretSource): string {
  if (!('value' in source)) throw new Error('valueOf: a file source');
  const problem = credentialProblem(source.value);
  if (problem) throw new CredentialsError(`the inline credential ${problem}`);
  return source.value;
}

async function readParts(parts: Array<[Part, SecretSource]>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, source] of parts) out[name] = 'value' in source ? valueOf(source) : await readCredentialFile(source.file);
  return out;
}

/** A credential file: one value, surrounding whitespace (a trailing newline) dropped. */
export async function readCredentialFile(file: string): Promise<string> {
  let info;
  try {
    info = await stat(file);
  } catch (err) {
    throw new CredentialsError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (!info.isFile()) throw new CredentialsError(`${file} is not a file`);
  if (info.size > MAX_CREDENTIAL_BYTES + 2) throw new CredentialsError(`${file} is larger than ${MAX_CREDENTIAL_BYTES} bytes`);
  const value = (await readFile(file, 'utf8')).trim();
  const problem = credentialProblem(value);
  if (problem) throw new CredentialsError(`${file}: the credential ${problem}`);
  return value;
}

/** What tells a replaced file: a Kubernetes secret update swaps a symlink, `mv` a new inode. */
async function fingerprint(file: string): Promise<string> {
  const s = await stat(file);
  return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
}

function assemble(config: CredentialsConfig, values: Record<string, string>): Credentials {
  return config.scheme === 'headers'
    ? { scheme: 'headers', apiKey: values.apiKey!, apiToken: values.apiToken! }
    : { scheme: 'bearer', accessToken: values.accessToken!, shipperAccountId: config.shipperAccountId };
}
