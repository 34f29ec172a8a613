/**
 * Loading the Temporal connection settings (config/temporal-connection.ts) from variables and
 * TOML profile files on disk: defaults, precedence, and an error naming the setting or the file
 * and key for each mistake. The connections themselves are exercised in
 * temporal-connection.live.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../config/settings';
import { defaultConfigFile, describeTemporal, loadTemporalSettings, localServerEnv } from '../config/temporal-connection';
import { makeTestPki, type TestPki } from './helpers/tls-proxy';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'temporal-config-'));
let pki: TestPki;
const file = (name: string, text: string) => {
  const p = path.join(tmp, name);
  writeFileSync(p, text);
  return p;
};

/** The problems of a ConfigError thrown by `load`, as "VARIABLE: message" lines. */
function problems(env: Record<string, string>): string[] {
  try {
    loadTemporalSettings(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.variable}: ${p.message}`);
    throw err;
  }
  throw new Error('expected a ConfigError');
}

beforeAll(() => {
  pki = makeTestPki(path.join(tmp, 'pki'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('from environment variables', () => {
  it('defaults to a plain local server, namespace default, task queue shipments', () => {
    const s = loadTemporalSettings({});
    expect(s).toMatchObject({ address: 'localhost:7233', namespace: 'default', taskQueue: 'shipments' });
    expect(s.connection).toEqual({ address: 'localhost:7233' });
    expect(describeTemporal(s)).toMatchObject({ tls: 'off', credentials: 'none' });
  });

  it('reads the certificates for mutual TLS, and an API key turns TLS on by itself; neither is ever described', () => {
    const mtls = loadTemporalSettings({
      TEMPORAL_ADDRESS: 'my-ns.a1b2c.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'my-ns.a1b2c',
      TEMPORAL_TASK_QUEUE: 'eu-shipments',
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
      TEMPORAL_TLS_SERVER_NAME: 'frontend.internal',
    });
    const tls = mtls.connection.tls as { clientCertPair: { crt: Uint8Array; key: Uint8Array }; serverNameOverride: string };
    expect(Buffer.from(tls.clientCertPair.key).toString()).toContain('PRIVATE KEY');
    expect(tls.serverNameOverride).toBe('frontend.internal');
    expect(describeTemporal(mtls)).toEqual({
      address: 'my-ns.a1b2c.tmprl.cloud:7233',
      namespace: 'my-ns.a1b2c',
      taskQueue: 'eu-shipments',
      tls: 'on',
      credentials: 'client certificate',
    });

    const key = 'tmprl-secret-8c1d';
    const withKey = loadTemporalSettings({
      TEMPORAL_ADDRESS: 'us-east-1.aws.api.temporal.io:7233',
      TEMPORAL_API_KEY: key,
      TEMPORAL_GRPC_META_X_TENANT: 'eu',
    });
    expect(withKey.connection).toEqual({
      address: 'us-east-1.aws.api.temporal.io:7233',
      tls: true,
      apiKey: key,
      metadata: { 'x-tenant': 'eu' },
    });
    expect(JSON.stringify(describeTemporal(withKey))).not.toContain(key);
    expect(describeTemporal(withKey)).toMatchObject({ tls: 'on', credentials: 'API key', grpcMetadata: ['x-tenant'] });
    // TLS can still be turned off explicitly (e.g. a key checked by a local plaintext proxy).
    expect(loadTemporalSettings({ TEMPORAL_API_KEY: key, TEMPORAL_TLS: 'false' }).connection.tls).toBeUndefined();
  });

  it('names every wrong variable at once', () => {
    expect(
      problems({
        TEMPORAL_ADDRESS: 'https://temporal.example.com',
        TEMPORAL_TLS: 'yes',
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(tmp, 'missing-ca.pem'),
        TEMPORAL_TLS_CLIENT_CERT_PATH: file('not-pem.txt', 'hello'),
        TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true',
      }),
    ).toEqual([
      'TEMPORAL_ADDRESS: must be host:port without a scheme, with a port from 1 to 65535, e.g. localhost:7233 or my-ns.a1b2c.tmprl.cloud:7233',
      'TEMPORAL_TLS: must be true or false (got "yes")',
      `TEMPORAL_TLS_CLIENT_CERT_PATH: ${path.join(tmp, 'not-pem.txt')} is not a PEM file (no -----BEGIN line)`,
      `TEMPORAL_TLS_SERVER_CA_CERT_PATH: file not found: ${path.join(tmp, 'missing-ca.pem')}`,
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: is not supported by the TypeScript SDK; use TEMPORAL_TLS_SERVER_NAME with the name in the server certificate',
    ]);
  });

  it('refuses a client certificate without its key (the SDK would silently connect without one)', () => {
    expect(problems({ TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert })).toEqual([
      'TEMPORAL_TLS_CLIENT_KEY_PATH: mutual TLS needs both the client certificate and its key; only the certificate is set',
    ]);
  });
});

describe('from a TOML profile file', () => {
  const profileFile = () =>
    file(
      'temporal.toml',
      `[profile.default]
address = "localhost:7233"

[profile.prod]
address = "prod.tmprl.example:7233"
namespace = "shipping-prod"
api_key = "from-the-file"

[profile.staging]
address = "staging.example:7233"
[profile.staging.tls]
server_ca_cert_path = "${pki.caCert}"
client_cert_path = "${pki.clientCert}"
client_key_path = "${path.join(tmp, 'gone.key')}"
`,
    );

  it('TEMPORAL_PROFILE picks the profile; variables override its values', () => {
    const configFile = profileFile();
    const prod = loadTemporalSettings({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' });
    expect(prod).toMatchObject({ address: 'prod.tmprl.example:7233', namespace: 'shipping-prod', configFile, profile: 'prod' });
    expect(prod.connection).toMatchObject({ apiKey: 'from-the-file', tls: true });
    const overridden = loadTemporalSettings({
      TEMPORAL_CONFIG_FILE: configFile,
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_NAMESPACE: 'other',
      TEMPORAL_API_KEY: 'from-env',
    });
    expect(overridden).toMatchObject({ address: 'prod.tmprl.example:7233', namespace: 'other' });
    expect(overridden.connection.apiKey).toBe('from-env');
    // Without TEMPORAL_PROFILE: the profile named default.
    expect(loadTemporalSettings({ TEMPORAL_CONFIG_FILE: configFile })).toMatchObject({ address: 'localhost:7233', profile: 'default' });
  });

  it('names the variable, or the file and key, of each mistake', () => {
    const configFile = profileFile();
    expect(problems({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'production' })).toEqual([
      `TEMPORAL_PROFILE: no profile "production" in ${configFile} (it has: default, prod, staging)`,
    ]);
    expect(problems({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'staging' })).toEqual([
      `${configFile}: profile.staging.tls.client_key_path: file not found: ${path.join(tmp, 'gone.key')}`,
    ]);
    // The variable replaces the file's value, so the missing file no longer matters.
    expect(
      loadTemporalSettings({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'staging', TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey })
        .connection.tls,
    ).toMatchObject({ clientCertPair: expect.anything() });
    expect(problems({ TEMPORAL_CONFIG_FILE: path.join(tmp, 'nope.toml') })).toEqual([
      `TEMPORAL_CONFIG_FILE: file not found: ${path.join(tmp, 'nope.toml')}`,
    ]);
    const typo = file('typo.toml', '[profile.default]\naddress = "localhost:7233"\napi-key = "x"\n');
    expect(problems({ TEMPORAL_CONFIG_FILE: typo })).toEqual([
      `TEMPORAL_CONFIG_FILE: ${typo}: Validation error: key(s) unrecognized in profile.default: api-key`,
    ]);
    const noVerify = file('no-verify.toml', '[profile.default.tls]\ndisable_host_verification = true\n');
    expect(problems({ TEMPORAL_CONFIG_FILE: noVerify })[0]).toMatch(
      /disable_host_verification \(host verification cannot be turned off in the TypeScript SDK; use tls.server_name\)$/,
    );
    const broken = file('broken.toml', '[profile.default\naddress = 1\n');
    expect(problems({ TEMPORAL_CONFIG_FILE: broken })[0]).toMatch(new RegExp(`^TEMPORAL_CONFIG_FILE: ${broken}: `));
    expect(problems({ TEMPORAL_PROFILE: 'prod', HOME: tmp })).toEqual([
      `TEMPORAL_PROFILE: profile "prod" asked for, but there is no profile file: set TEMPORAL_CONFIG_FILE or create ${path.join(tmp, '.config', 'temporalio', 'temporal.toml')}`,
    ]);
  });

  it('reads the default file (as the Temporal CLI does) when TEMPORAL_CONFIG_FILE is unset', () => {
    const configHome = path.join(tmp, 'xdg');
    mkdirSync(path.join(configHome, 'temporalio'), { recursive: true });
    writeFileSync(
      path.join(configHome, 'temporalio', 'temporal.toml'),
      '[profile.default]\naddress = "temporal.internal:7233"\nnamespace = "ops"\n',
    );
    expect(defaultConfigFile({ XDG_CONFIG_HOME: configHome }, 'linux')).toBe(path.join(configHome, 'temporalio', 'temporal.toml'));
    expect(loadTemporalSettings({ XDG_CONFIG_HOME: configHome })).toMatchObject({ address: 'temporal.internal:7233', namespace: 'ops' });
  });

  it("a child talking to a local dev server we started ignores the caller's connection settings and profile file", () => {
    const caller = {
      TEMPORAL_CONFIG_FILE: profileFile(),
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_API_KEY: 'k',
      TEMPORAL_TLS: 'true',
      PATH: '/bin',
    };
    const child: Record<string, string | undefined> = { ...localServerEnv(caller), TEMPORAL_ADDRESS: '127.0.0.1:7999' };
    expect(child.PATH).toBe('/bin');
    expect(loadTemporalSettings(child).connection).toEqual({ address: '127.0.0.1:7999' });
  });
});
