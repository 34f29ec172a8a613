/**
 * Where Temporal is and how to prove who we are: the SDK's environment configuration
 * (@temporalio/envconfig: the TEMPORAL_* variables and the TOML profile file), the one place the
 * worker (NativeConnection) and every client command (Connection) get their connection from.
 *
 * What this adds to the SDK's loader: our defaults (localhost:7233, namespace default), our
 * TEMPORAL_TASK_QUEUE, and errors that name the variable or the file and key at start instead
 * of a silent fallback (the SDK ignores a TEMPORAL_CONFIG_FILE that does not exist, reads
 * TEMPORAL_TLS=yes as "off", and drops a client certificate that has no key) or a bare ENOENT.
 */
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import type { TLSConfig } from '@temporalio/client';
import {
  loadClientConfig,
  loadClientConfigProfile,
  toClientOptions,
  type ClientConfigProfile,
  type ConfigDataSource,
} from '@temporalio/envconfig';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from '../domain/shipment';
import { ConfigError, parseEnv, parseHostPort, type Env } from './settings';

export const TEMPORAL_DEFAULTS = { address: 'localhost:7233', namespace: 'default', taskQueue: DEFAULT_TASK_QUEUE } as const;

/** The options Connection.connect and NativeConnection.connect both take. Holds secrets: never log it. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  connection: TemporalConnectionOptions;
  /** The profile file that was read, if any, and the profile taken from it. */
  configFile?: string;
  profile?: string;
}

/** The connection part of every command's --help. */
export const TEMPORAL_CONNECTION_HELP = `Temporal connection (the Temporal SDK's environment configuration; variables override
the values of the profile file):
  TEMPORAL_ADDRESS                  host:port (default localhost:7233)
  TEMPORAL_NAMESPACE                namespace (default "default")
  TEMPORAL_TASK_QUEUE               task queue (default "${TEMPORAL_DEFAULTS.taskQueue}"; worker and import must agree)
  TEMPORAL_API_KEY                  API key, sent as a bearer token; turns TLS on
  TEMPORAL_TLS                      true or false (default off; on with an API key or any TLS setting)
  TEMPORAL_TLS_CLIENT_CERT_PATH     client certificate (PEM) for mutual TLS,
  TEMPORAL_TLS_CLIENT_KEY_PATH        and its private key
  TEMPORAL_TLS_SERVER_CA_CERT_PATH  CA of the server's certificate (default: the system's CAs)
  TEMPORAL_TLS_SERVER_NAME          name to check in the server's certificate (default: the host)
  TEMPORAL_PROFILE                  profile of the TOML file (default "default")
  TEMPORAL_CONFIG_FILE              TOML profile file (default ~/.config/temporalio/temporal.toml)
  Also TEMPORAL_TLS_*_DATA (PEM text instead of a path) and TEMPORAL_GRPC_META_<NAME> (a header).`;

const HOST_PORT_MESSAGE =
  'must be host:port without a scheme, with a port from 1 to 65535, e.g. localhost:7233 or my-ns.a1b2c.tmprl.cloud:7233';
const isHostPort = (text: string) => parseHostPort(text) !== undefined;

/** The SDK reads only 1/true as on, so anything else would silently mean off. */
const flag = z.enum(['true', 'false', '1', '0'], { error: (issue) => `must be true or false (got "${String(issue.input)}")` });

/** A readable PEM file; checked here so the error names the setting, not just ENOENT. */
function pemProblem(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `file not found: ${file}` : `cannot read ${file} (${code ?? String(err)})`;
  }
  return text.includes('-----BEGIN ') ? undefined : `${file} is not a PEM file (no -----BEGIN line)`;
}

const pemPath = z
  .string()
  .optional()
  .superRefine((file, ctx) => {
    const problem = file === undefined ? undefined : pemProblem(file);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const ConnectionEnv = z.object({
  TEMPORAL_ADDRESS: z.string().refine(isHostPort, HOST_PORT_MESSAGE).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).optional(),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default(TEMPORAL_DEFAULTS.taskQueue),
  TEMPORAL_API_KEY: z.string().optional(),
  TEMPORAL_TLS: flag.optional(),
  TEMPORAL_TLS_CLIENT_CERT_PATH: pemPath,
  TEMPORAL_TLS_CLIENT_KEY_PATH: pemPath,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: pemPath,
  TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
  // Read by the SDK's loader but not applied by the TypeScript SDK's connections: refuse rather than ignore.
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: flag
    .optional()
    .refine(
      (v) => v !== 'true' && v !== '1',
      'is not supported by the TypeScript SDK; use TEMPORAL_TLS_SERVER_NAME with the name in the server certificate',
    ),
  TEMPORAL_PROFILE: z.string().optional(),
  TEMPORAL_CONFIG_FILE: z
    .string()
    .optional()
    .superRefine((file, ctx) => {
      if (file === undefined) return;
      try {
        accessSync(file, constants.R_OK);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        ctx.addIssue({ code: 'custom', message: code === 'ENOENT' ? `file not found: ${file}` : `cannot read ${file} (${code})` });
      }
    }),
});

/** The SDK's default profile file location (same rule as the Temporal CLI), used when TEMPORAL_CONFIG_FILE is unset. */
export function defaultConfigFile(env: Env, platform = os.platform()): string | undefined {
  let dir: string | undefined;
  if (platform === 'win32') dir = env.APPDATA || undefined;
  else if (platform === 'darwin') dir = env.HOME ? path.join(env.HOME, 'Library', 'Application Support') : undefined;
  else if (env.XDG_CONFIG_HOME) dir = path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
  else dir = env.HOME ? path.join(env.HOME, '.config') : undefined;
  return dir && path.join(dir, 'temporalio', 'temporal.toml');
}

const pathOf = (source: ConfigDataSource | undefined) => (source && 'path' in source ? source.path : undefined);

/**
 * Reads the connection settings from `env` and the profile file. Throws ConfigError naming
 * each wrong variable, or the file and key of a wrong profile value. Reads certificate files.
 */
export function loadTemporalSettings(env: Env = process.env): TemporalSettings {
  const e = parseEnv(ConnectionEnv, env);
  const configFile = e.TEMPORAL_CONFIG_FILE ?? existingFile(defaultConfigFile(env));
  const profileName = e.TEMPORAL_PROFILE ?? 'default';
  const where = (key: string) => `${configFile}: profile.${profileName}.${key}`;
  const problems: ConfigError['problems'] = [];

  let fileProfile: ClientConfigProfile = {};
  let fileHasProfile = false;
  if (configFile) {
    const profiles = readProfiles(configFile, e.TEMPORAL_CONFIG_FILE ? 'TEMPORAL_CONFIG_FILE' : configFile);
    fileHasProfile = profiles[profileName] !== undefined;
    if (fileHasProfile) fileProfile = profiles[profileName]!;
    else if (e.TEMPORAL_PROFILE !== undefined) {
      const names = Object.keys(profiles);
      throw new ConfigError([
        {
          variable: 'TEMPORAL_PROFILE',
          message: `no profile "${profileName}" in ${configFile} (it has: ${names.length ? names.join(', ') : 'none'})`,
        },
      ]);
    }
  } else if (e.TEMPORAL_PROFILE !== undefined) {
    throw new ConfigError([
      {
        variable: 'TEMPORAL_PROFILE',
        message: `profile "${profileName}" asked for, but there is no profile file: set TEMPORAL_CONFIG_FILE${
          defaultConfigFile(env) ? ` or create ${defaultConfigFile(env)}` : ''
        }`,
      },
    ]);
  }

  // Values from the file that the environment does not override are checked here, named by file and key.
  if (fileProfile.address !== undefined && e.TEMPORAL_ADDRESS === undefined && !isHostPort(fileProfile.address)) {
    problems.push({ variable: where('address'), message: HOST_PORT_MESSAGE });
  }
  const fileFiles: Array<[string, string | undefined, string]> = [
    ['tls.client_cert_path', pathOf(fileProfile.tls?.clientCert), 'TEMPORAL_TLS_CLIENT_CERT'],
    ['tls.client_key_path', pathOf(fileProfile.tls?.clientKey), 'TEMPORAL_TLS_CLIENT_KEY'],
    ['tls.server_ca_cert_path', pathOf(fileProfile.tls?.serverCACert), 'TEMPORAL_TLS_SERVER_CA_CERT'],
  ];
  for (const [key, file, overriddenBy] of fileFiles) {
    const overridden = Boolean(env[`${overriddenBy}_PATH`] || env[`${overriddenBy}_DATA`]);
    const problem = file !== undefined && !overridden ? pemProblem(file) : undefined;
    if (problem) problems.push({ variable: where(key), message: problem });
  }

  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({
      // The SDK's loader fails on a file without the profile (or without any): the file counts only when it has it.
      ...(fileHasProfile ? { configSource: { path: configFile! }, profile: profileName, configFileStrict: true } : { disableFile: true }),
      overrideEnvVars: sdkEnv(env),
    });
  } catch (err) {
    throw new ConfigError([{ variable: configFile ?? '(environment)', message: firstLine(err) }]);
  }
  const tls = profile.tls;
  if (tls && !tls.disabled && Boolean(tls.clientCert) !== Boolean(tls.clientKey)) {
    problems.push({
      variable: tls.clientCert ? 'TEMPORAL_TLS_CLIENT_KEY_PATH' : 'TEMPORAL_TLS_CLIENT_CERT_PATH',
      message: `mutual TLS needs both the client certificate and its key; only the ${tls.clientCert ? 'certificate' : 'key'} is set${
        configFile ? ` (environment or ${configFile}: profile.${profileName}.tls)` : ''
      }`,
    });
  }
  if (problems.length) throw new ConfigError(problems);

  const { connectionOptions, namespace } = toClientOptions(profile);
  const address = connectionOptions.address ?? TEMPORAL_DEFAULTS.address;
  return {
    address,
    namespace: namespace ?? TEMPORAL_DEFAULTS.namespace,
    taskQueue: e.TEMPORAL_TASK_QUEUE,
    connection: {
      address,
      ...(connectionOptions.tls ? { tls: connectionOptions.tls } : {}),
      ...(connectionOptions.apiKey ? { apiKey: connectionOptions.apiKey } : {}),
      ...(profile.grpcMeta && Object.keys(profile.grpcMeta).length ? { metadata: profile.grpcMeta } : {}),
    },
    ...(configFile ? { configFile, profile: profileName } : {}),
  };
}

/** What a log line or an error message may say about the connection: no key, no certificate, no metadata values. */
export function describeTemporal(settings: TemporalSettings) {
  const { tls, apiKey } = settings.connection;
  const clientCert = typeof tls === 'object' && Boolean(tls.clientCertPair);
  return {
    address: settings.address,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    tls: tls ? 'on' : 'off',
    credentials: [apiKey ? 'API key' : '', clientCert ? 'client certificate' : ''].filter(Boolean).join(' and ') || 'none',
    ...(settings.configFile ? { configFile: settings.configFile, profile: settings.profile } : {}),
    ...(settings.connection.metadata ? { grpcMetadata: Object.keys(settings.connection.metadata) } : {}),
  };
}

/** One line for error messages: `localhost:7233 (namespace default, TLS off, no credentials)`. */
export function temporalTarget(settings: TemporalSettings): string {
  const d = describeTemporal(settings);
  const profile = d.configFile ? `, profile ${d.profile} of ${d.configFile}` : '';
  return `${d.address} (namespace ${d.namespace}, TLS ${d.tls}, ${d.credentials === 'none' ? 'no credentials' : d.credentials}${profile})`;
}

/**
 * Why a connection attempt failed, as one line without secrets: the error with its causes
 * (the client wraps "UNAUTHENTICATED: invalid API key" in "Failed to connect to Temporal
 * server") and, when TLS is on and the client only says it timed out, what a TLS handshake
 * with the same settings reports (unknown CA, wrong server name, client certificate required).
 */
export async function explainConnectFailure(settings: TemporalSettings, err: unknown): Promise<string> {
  const messages: string[] = [];
  for (let e: unknown = err; e !== undefined && messages.length < 5; e = e instanceof Error ? e.cause : undefined) {
    const text = e instanceof Error ? e.message : typeof e === 'string' ? e : JSON.stringify(e);
    if (!messages.some((m) => m.includes(text))) messages.push(text);
  }
  const tlsProblem = settings.connection.tls ? await tlsHandshakeProblem(settings) : undefined;
  const all = [...messages, ...(tlsProblem ? [`TLS handshake: ${tlsProblem}`] : [])].join(': ');
  const hint = HINTS.find(([pattern]) => pattern.test(all))?.[1];
  return hint ? `${all} (${hint})` : all;
}

const HINTS: Array<[RegExp, string]> = [
  [
    /unable to verify|self.signed|local issuer|UnknownIssuer/i,
    'the server certificate is not signed by a CA we trust: set TEMPORAL_TLS_SERVER_CA_CERT_PATH (tls.server_ca_cert_path) to its CA',
  ],
  [
    /altnames|NotValidForName/i,
    'the server certificate is not for this name: set TEMPORAL_TLS_SERVER_NAME (tls.server_name) to a name it carries',
  ],
  [
    /certificate required|bad certificate|unknown ca|CertificateRequired/i,
    'the server wants a client certificate it trusts: TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH',
  ],
  [/wrong version number|packet length too long|http request/i, 'the server does not speak TLS: set TEMPORAL_TLS=false'],
  [
    /UNAUTHENTICATED|authentication credentials/i,
    'the server refused the credentials: check TEMPORAL_API_KEY (api_key) or the client certificate',
  ],
];

/** A TLS handshake (ALPN h2, as gRPC) with the connection's CA, client certificate and server name; undefined when it succeeds. */
function tlsHandshakeProblem(settings: TemporalSettings, timeoutMs = 3_000): Promise<string | undefined> {
  const config = typeof settings.connection.tls === 'object' ? settings.connection.tls : {};
  const at = settings.address.lastIndexOf(':');
  const host = settings.address.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  const servername = config.serverNameOverride ?? host;
  return new Promise((resolve) => {
    const socket = tls.connect({
      host,
      port: Number(settings.address.slice(at + 1)),
      ALPNProtocols: ['h2'],
      ...(net.isIP(servername) ? {} : { servername }),
      // Verify the name the client would verify, also when it differs from the address.
      checkServerIdentity: (_host, cert) => tls.checkServerIdentity(servername, cert),
      ...(config.serverRootCACertificate ? { ca: Buffer.from(config.serverRootCACertificate) } : {}),
      ...(config.clientCertPair ? { cert: Buffer.from(config.clientCertPair.crt), key: Buffer.from(config.clientCertPair.key) } : {}),
    });
    const done = (problem: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => done(socket.encrypted && socket.authorized ? undefined : 'no answer'), timeoutMs);
    // OpenSSL's "80EC..:error:0A00045C:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:..." → its reason.
    socket.on('error', (e: Error) => done(/:SSL routines:[^:]*:([^:]+)/.exec(e.message)?.[1] ?? e.message));
    // A refused client certificate shows only after the handshake (TLS 1.3): wait briefly for the alert.
    socket.on('secureConnect', () => setTimeout(() => done(undefined), 300));
  });
}

const CONNECTION_VARIABLE = /^TEMPORAL_(ADDRESS|NAMESPACE|API_KEY|TLS|PROFILE|CONFIG_FILE|GRPC_META_|CODEC_)/;

/** The connection variables set in `env` (names only), e.g. to warn that a shell points elsewhere. */
export function connectionVariablesIn(env: Env): string[] {
  return Object.keys(env).filter((k) => CONNECTION_VARIABLE.test(k) && env[k]);
}

/**
 * The environment for a child process that must talk to a local dev server we started (the
 * caller then sets TEMPORAL_ADDRESS): the caller's connection settings (an API key,
 * certificates, a profile) would send it elsewhere or with TLS, so they are removed and the
 * profile file is switched off.
 */
export function localServerEnv(env: Env): Env {
  const out: Env = {};
  for (const [k, v] of Object.entries(env)) if (!CONNECTION_VARIABLE.test(k)) out[k] = v;
  return { ...out, TEMPORAL_CONFIG_FILE: os.devNull };
}

/** The environment as the SDK's loader should see it: empty values count as unset, as everywhere in config/. */
function sdkEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    // An empty TEMPORAL_GRPC_META_X removes header X from the profile: keep it.
    if (v !== undefined && (v !== '' || k.startsWith('TEMPORAL_GRPC_META_'))) out[k] = v;
  }
  return out;
}

/** The profiles of a TOML file, strictly checked (a misspelt key is an error, not a silently ignored value). */
function readProfiles(file: string, variable: string): Record<string, ClientConfigProfile> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([{ variable, message: `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? firstLine(err)})` }]);
  }
  try {
    return loadClientConfig({ configSource: { data: text }, configFileStrict: true }).profiles;
  } catch (err) {
    // The SDK's loader fails with a TypeError on valid TOML that has no profile table (an empty file, /dev/null).
    if (err instanceof TypeError && !/profile/.test(text)) return {};
    const message = firstLine(err);
    // The Temporal CLI writes this key, but the TypeScript SDK cannot apply it.
    const why = /disable_host_verification/.test(message)
      ? ' (host verification cannot be turned off in the TypeScript SDK; use tls.server_name)'
      : '';
    throw new ConfigError([{ variable, message: `${file}: ${message}${why}` }]);
  }
}

function existingFile(file: string | undefined): string | undefined {
  return file !== undefined && existsSync(file) ? file : undefined;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}
