/**
 * The shipping accounts a fleet works with, and which shop uses which (SHIPPING_ACCOUNTS or
 * SHIPPING_ACCOUNTS_FILE; the format is in docs/configuration.md, "Shipping accounts"). Without
 * it the one account `default` comes from SHIPPING_API_BASE_URL and SHIPPING_API_KEY/_TOKEN, so
 * a single-account deployment needs no change. Problems name the setting and the JSON path,
 * never a credential.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { AccountName } from '../domain/schemas';
import { DEFAULT_SHIPPING_ACCOUNT } from '../domain/shipment';
import { ShippingApiClient } from '../shipping-api/client';
import {
  credentialProblem,
  credentialsFrom,
  MAX_CREDENTIAL_BYTES,
  type AuthScheme,
  type CredentialsConfig,
  type FileCredentialsOptions,
  type SecretSource,
} from '../shipping-api/credentials';
import {
  ConfigError,
  credentialFileProblem,
  jsonPath,
  problemCollector,
  loadDefaultAccount,
  loadShippingClientSettings,
  type Env,
  type PacingSettings,
  type SharedClientOptions,
} from './settings';

/** The account built from SHIPPING_API_*: today's single account. */
export const DEFAULT_ACCOUNT = DEFAULT_SHIPPING_ACCOUNT;
/** Accounts and mapped shops a file may hold: a fleet has a handful of accounts, an integrator thousands of shops. */
const MAX_ACCOUNTS = 100;
const MAX_SHOPS = 100_000;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

const Inline = z.string().min(1, 'must not be empty').max(MAX_CREDENTIAL_BYTES);
const FilePath = z.string().min(1, 'must not be empty').max(4096);

const AccountEntry = z.strictObject({
  baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://sandbox.example/api' }),
  /** headers: x-rr-apikey + x-rr-apitoken (the spec's); bearer: the spec's alternative form, unverified. */
  auth: z.enum(['headers', 'bearer'], { error: 'must be headers or bearer' }).default('headers'),
  apiKey: Inline.optional(),
  apiKeyFile: FilePath.optional(),
  apiToken: Inline.optional(),
  apiTokenFile: FilePath.optional(),
  accessToken: Inline.optional(),
  accessTokenFile: FilePath.optional(),
  shipperAccountId: z.string().min(1).max(200).optional(),
  /** This worker's ceiling of the account's pace, calls per second. */
  maxRequestsPerSecond: z.number().positive().max(10_000, 'must be at most 10000 per second').optional(),
  pacing: z.enum(['adaptive', 'off'], { error: 'must be adaptive or off' }).optional(),
});
type AccountEntry = z.infer<typeof AccountEntry>;

const AccountsFile = z.strictObject(
  {
    accounts: z
      .record(AccountName, z.unknown())
      .refine((a) => Object.keys(a).length <= MAX_ACCOUNTS, `must name at most ${MAX_ACCOUNTS} accounts`),
    shops: z
      .record(z.string().min(1).max(200), AccountName)
      .refine((s) => Object.keys(s).length <= MAX_SHOPS, `must map at most ${MAX_SHOPS} shops`)
      .default({}),
    defaultAccount: AccountName.optional(),
  },
  { error: 'must be a JSON object with "accounts" (and optionally "shops", "defaultAccount")' },
);

export interface ShippingAccount {
  name: string;
  baseUrl: string;
  auth: AuthScheme;
  /** Where the credentials come from; values only for inline ones (not enumerable: logs omit them). */
  readonly credentials: CredentialsConfig;
  /** Client options shared by every account (timeouts, body limit, the products parameter). */
  client: SharedClientOptions;
  pacing: PacingSettings;
}

/** The account of a shop's new shipments, or why it has none. */
export type AccountOf = (shop: string) => { account: string } | { problem: string };

export interface ShippingAccounts {
  /** Names, sorted. */
  names: string[];
  get(name: string): ShippingAccount | undefined;
  /** The account a shop's new shipments use, or a problem naming the shop and the setting. */
  accountOf: AccountOf;
  /** The account shops without a mapping use, if any. */
  defaultAccount: string | null;
}

/**
 * The accounts from SHIPPING_API_* (the `default` account) and SHIPPING_ACCOUNTS[_FILE], with
 * `pacing` (the worker's SHIPPING_API_PACING and friends) as every account's default. Credential
 * files are checked here, to report a missing one with the other settings; the client reads them
 * at start, and again whenever they change.
 */
export function loadShippingAccounts(env: Env = process.env, pacing: PacingSettings = { mode: 'adaptive' }): ShippingAccounts {
  const { problems, collect } = problemCollector();
  const client = collect(() => loadShippingClientSettings(env));
  const byDefault = collect(() => loadDefaultAccount(env));
  const given = collect(() => accountsText(env));
  if (!client || problems.length > 0) throw new ConfigError(problems);

  const accounts = new Map<string, ShippingAccount>();
  if (byDefault) accounts.set(DEFAULT_ACCOUNT, account(DEFAULT_ACCOUNT, byDefault.baseUrl, byDefault.credentials, client, pacing));
  let shops: Record<string, string> = {};
  let defaultAccount: string | null = byDefault ? DEFAULT_ACCOUNT : null;
  if (given) {
    const at = (where: PropertyKey[]) => `${given.variable}${jsonPath(where)}`;
    let json: unknown;
    try {
      json = JSON.parse(given.text);
    } catch (e) {
      const position = /position (\d+)/.exec(e instanceof Error ? e.message : '');
      throw new ConfigError([
        { variable: given.variable, message: `is not valid JSON${position ? ` (at character ${position[1]})` : ''}` },
      ]);
    }
    const parsed = AccountsFile.safeParse(json);
    if (!parsed.success) throw new ConfigError(parsed.error.issues.flatMap((issue) => problemsOf(issue, [], at)));
    for (const [name, raw] of Object.entries(parsed.data.accounts)) {
      if (name === DEFAULT_ACCOUNT && byDefault) {
        problems.push({
          variable: at(['accounts', name]),
          message: 'is the account SHIPPING_API_BASE_URL defines: name this one otherwise',
        });
        continue;
      }
      const entry = AccountEntry.safeParse(raw);
      if (!entry.success) {
        problems.push(...entry.error.issues.flatMap((issue) => problemsOf(issue, ['accounts', name], at)));
        continue;
      }
      const credentials = credentialsOf(entry.data, given.folder, (field, message) =>
        problems.push({ variable: at(['accounts', name, field]), message }),
      );
      if (!credentials) continue;
      const own: PacingSettings = {
        ...pacing,
        ...(entry.data.pacing ? { mode: entry.data.pacing } : {}),
        ...(entry.data.maxRequestsPerSecond ? { maxRequestsPerSecond: entry.data.maxRequestsPerSecond } : {}),
      };
      accounts.set(name, account(name, entry.data.baseUrl, credentials, client, own));
    }
    const known = (name: string) => (name === DEFAULT_ACCOUNT && byDefault !== null) || Object.hasOwn(parsed.data.accounts, name);
    for (const [shop, name] of Object.entries(parsed.data.shops)) {
      if (!known(name)) problems.push({ variable: at(['shops', shop]), message: `names account "${name}", which is not configured` });
    }
    const fallback = parsed.data.defaultAccount;
    if (fallback !== undefined) {
      if (known(fallback)) defaultAccount = fallback;
      else problems.push({ variable: at(['defaultAccount']), message: `names account "${fallback}", which is not configured` });
    }
    if (problems.length > 0) throw new ConfigError(problems);
    if (accounts.size === 0) throw new ConfigError([{ variable: at(['accounts']), message: 'names no account' }]);
    shops = parsed.data.shops;
  }
  const names = [...accounts.keys()].sort();
  return {
    names,
    get: (name) => accounts.get(name),
    defaultAccount,
    accountOf(shop) {
      const mapped = Object.hasOwn(shops, shop) ? shops[shop] : undefined;
      if (mapped !== undefined) return { account: mapped };
      if (defaultAccount !== null) return { account: defaultAccount };
      return {
        problem: `shop ${shop} has no shipping account: map it under "shops" in ${given?.variable ?? 'SHIPPING_ACCOUNTS'}, or set "defaultAccount"`,
      };
    },
  };
}

/**
 * The account's client, its credentials read now (a file that cannot be read is a
 * CredentialsError naming it) and again whenever they change.
 */
export async function openAccountClient(account: ShippingAccount, options: FileCredentialsOptions = {}): Promise<ShippingApiClient> {
  const credentials = await credentialsFrom(account.credentials, options);
  return new ShippingApiClient({ baseUrl: account.baseUrl, credentials, ...account.client });
}

function account(
  name: string,
  baseUrl: string,
  credentials: CredentialsConfig,
  client: SharedClientOptions,
  pacing: PacingSettings,
): ShippingAccount {
  const out = { name, baseUrl, auth: credentials.scheme, client, pacing } as ShippingAccount;
  // Inline values must not reach a log line that prints the account.
  Object.defineProperty(out, 'credentials', { value: credentials, enumerable: false });
  return out;
}

/** SHIPPING_ACCOUNTS or SHIPPING_ACCOUNTS_FILE (not both), with the folder relative files are read from. */
function accountsText(env: Env): { text: string; variable: string; folder: string } | undefined {
  const inline = env.SHIPPING_ACCOUNTS || undefined;
  const file = env.SHIPPING_ACCOUNTS_FILE || undefined;
  if (inline && file)
    throw new ConfigError([{ variable: 'SHIPPING_ACCOUNTS', message: 'set either SHIPPING_ACCOUNTS or SHIPPING_ACCOUNTS_FILE, not both' }]);
  if (inline) {
    if (inline.length > MAX_FILE_BYTES)
      throw new ConfigError([{ variable: 'SHIPPING_ACCOUNTS', message: `is longer than ${MAX_FILE_BYTES} bytes` }]);
    return { text: inline, variable: 'SHIPPING_ACCOUNTS', folder: process.cwd() };
  }
  if (!file) return undefined;
  try {
    const text = readFileSync(file, 'utf8');
    if (text.length > MAX_FILE_BYTES) throw Object.assign(new Error(), { code: `larger than ${MAX_FILE_BYTES} bytes` });
    return { text, variable: 'SHIPPING_ACCOUNTS_FILE', folder: path.dirname(path.resolve(file)) };
  } catch (err) {
    throw new ConfigError([
      { variable: 'SHIPPING_ACCOUNTS_FILE', message: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` },
    ]);
  }
}

/** The entry's credentials for its scheme: each part inline or a file (read once here to check it), never both. */
function credentialsOf(
  entry: AccountEntry,
  folder: string,
  problem: (field: string, message: string) => void,
): CredentialsConfig | undefined {
  const wrongScheme =
    entry.auth === 'headers'
      ? (['accessToken', 'accessTokenFile', 'shipperAccountId'] as const)
      : (['apiKey', 'apiKeyFile', 'apiToken', 'apiTokenFile'] as const);
  let ok = true;
  for (const field of wrongScheme) {
    if (entry[field] !== undefined) {
      problem(field, `does not go with "auth": "${entry.auth}"`);
      ok = false;
    }
  }
  const part = (field: 'apiKey' | 'apiToken' | 'accessToken'): SecretSource | undefined => {
    const inline = entry[field];
    const file = entry[`${field}File`];
    if (inline !== undefined && file !== undefined) return void problem(field, `set either ${field} or ${field}File, not both`);
    if (inline !== undefined) {
      const bad = credentialProblem(inline);
      return bad ? void problem(field, bad) : { value: inline };
    }
    if (file === undefined) return void problem(field, `is required (or ${field}File)`);
    const resolved = path.resolve(folder, file);
    const bad = credentialFileProblem(resolved);
    return bad ? void problem(`${field}File`, bad) : { file: resolved };
  };
  if (entry.auth === 'headers') {
    const apiKey = part('apiKey');
    const apiToken = part('apiToken');
    return ok && apiKey && apiToken ? { scheme: 'headers', apiKey, apiToken } : undefined;
  }
  const accessToken = part('accessToken');
  if (entry.shipperAccountId === undefined) {
    problem('shipperAccountId', 'is required with "auth": "bearer" (the spec puts it in service.shipperAccountId)');
    return undefined;
  }
  return ok && accessToken ? { scheme: 'bearer', accessToken, shipperAccountId: entry.shipperAccountId } : undefined;
}

function problemsOf(issue: z.core.$ZodIssue, prefix: PropertyKey[], at: (where: PropertyKey[]) => string): ConfigError['problems'] {
  if (issue.code === 'unrecognized_keys')
    return issue.keys.map((key) => ({ variable: at([...prefix, ...issue.path, key]), message: 'unknown field' }));
  const missing = issue.code === 'invalid_type' && / received undefined$/.test(issue.message);
  return [{ variable: at([...prefix, ...issue.path]), message: missing ? 'is required' : issue.message }];
}
