/**
 * The worker and the CLI against a Temporal endpoint that wants TLS, a client certificate or an
 * API key, configured only the SDK's way (TEMPORAL_* variables, a TOML profile). The real dev
 * server has no TLS or auth options, so loopback proxies stand in front of it (test/helpers/
 * tls-proxy.ts) with a throwaway CA made by openssl. Every case ships an order end to end: the
 * real worker process and the CLI's import and status, all through the proxy; then the same
 * with a wrong credential, which must fail with a message that says why and never shows a key.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../client/cli-support';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { runCli } from './helpers/cli';
import { killWorkerProcesses, spawnWorkerProcess, type WorkerProcess } from './helpers/worker-process';
import { TEST_CREDENTIALS } from './helpers/harness';
import { freePort } from '../dev-server/free-port';
import { labelRequest } from './helpers/orders';
import { createTestEnv } from './helpers/temporal-env';
import { makeTestPki, startApiKeyProxy, startTlsProxy, type TestPki, type TestProxy } from './helpers/tls-proxy';
import { waitFor } from './helpers/wait';
import { prebuiltBundlePath } from './helpers/workflow-bundle';

const API_KEY = 'tmprl-live-key-3f9a61c2';
const WRONG_KEY = 'tmprl-wrong-key-77b0e4';

let server: TestWorkflowEnvironment;
let fake: FakeShippingApi;
let pki: TestPki;
let tlsProxy: TestProxy;
let mtlsProxy: TestProxy;
let keyProxy: TestProxy;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'temporal-connection-'));
/** No default profile file for the CLI runs: only what a test states. */
const emptyConfigHome = path.join(tmp, 'config-home');
let bundlePath = '';

type Env = Record<string, string>;
const shippingEnv = (): Env => ({
  SHIPPING_API_BASE_URL: fake.baseUrl,
  SHIPPING_API_KEY: TEST_CREDENTIALS.apiKey,
  SHIPPING_API_TOKEN: TEST_CREDENTIALS.apiToken,
});

beforeAll(async () => {
  mkdirSync(emptyConfigHome);
  // Built once as `npm run build` does, so each worker process starts in a second or two.
  bundlePath = prebuiltBundlePath();
  server = await createTestEnv();
  fake = await startFakeShippingApi({ port: 0, trackingStepMs: 150, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
  pki = makeTestPki(path.join(tmp, 'pki'));
  [tlsProxy, mtlsProxy, keyProxy] = await Promise.all([
    startTlsProxy(pki, server.address),
    startTlsProxy(pki, server.address, { requireClientCert: true }),
    startApiKeyProxy(pki, server.address, API_KEY),
  ]);
});
afterAll(async () => {
  killWorkerProcesses();
  await Promise.all([tlsProxy?.close(), mtlsProxy?.close(), keyProxy?.close()]);
  await fake?.close();
  await server?.teardown();
  rmSync(tmp, { recursive: true, force: true });
});

/** The real worker entry point as its own process, with only PATH and the given variables. */
function spawnWorker(env: Env): WorkerProcess {
  return spawnWorkerProcess({ ...shippingEnv(), WORKFLOW_BUNDLE_PATH: bundlePath, TRACKING_POLL_INTERVAL: '200ms', ...env });
}

const cli = (args: string[], env: Env) => runCli(args, { env: { XDG_CONFIG_HOME: emptyConfigHome, ...shippingEnv(), ...env } });

/**
 * One order end to end with `connection` as the only Temporal settings: the worker process
 * connects with them, the CLI imports the order and reads its status with them until it is
 * delivered. Returns everything the worker printed.
 */
async function shipThrough(connection: Env, orderId: string): Promise<string> {
  const taskQueue = `connection-${randomUUID()}`;
  const env = { ...connection, TEMPORAL_TASK_QUEUE: taskQueue };
  const worker = spawnWorker(env);
  await waitFor(() => (worker.output().includes('worker started') ? true : worker.child.exitCode !== null ? false : undefined), {
    what: 'the worker to start',
    timeoutMs: 60_000,
    intervalMs: 100,
  }).then((started) => {
    if (!started) throw new Error(`worker exited:\n${worker.output()}`);
  });

  const input = path.join(tmp, `${orderId}.ndjson`);
  writeFileSync(input, `${JSON.stringify({ shop: 'tls-shop', orderId, labelRequest: labelRequest(orderId) })}\n`);
  const imported = await cli(['import', input, '--json'], env);
  expect(imported.code, imported.stderr).toBe(EXIT.ok);
  expect(JSON.parse(imported.stdout).counts).toMatchObject({ started: 1 });

  const report = await waitFor(
    async () => {
      const status = await cli(['status', '--json', 'tls-shop', orderId], env);
      expect(status.code, status.stderr).toBe(EXIT.ok);
      const r = JSON.parse(status.stdout);
      return r.execution.status === 'COMPLETED' ? r : undefined;
    },
    { what: `order ${orderId} to complete`, timeoutMs: 45_000, intervalMs: 300 },
  );
  expect(report.outcome.outcome).toBe('delivered');
  expect(report.execution.taskQueue).toBe(taskQueue);

  worker.child.kill('SIGTERM');
  expect(await worker.exited).toBe(0);
  return worker.output();
}

/** A worker that must refuse to run: its exit code and output. */
async function failingWorker(env: Env): Promise<{ code: number | null; output: string }> {
  const worker = spawnWorker({ ...env, TEMPORAL_TASK_QUEUE: `refused-${randomUUID()}` });
  const code = await worker.exited;
  return { code, output: worker.output() };
}

describe('server TLS with a private CA, from variables', () => {
  it('ships an order through a TLS endpoint; an untrusted CA or a wrong server name is refused with the reason', async () => {
    const tls = { TEMPORAL_ADDRESS: tlsProxy.address, TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert };
    const before = tlsProxy.passed();
    const logs = await shipThrough(tls, 'TLS-1');
    expect(logs).toContain(`"temporal":{"address":"${tlsProxy.address}","namespace":"default"`);
    expect(logs).toContain('"tls":"on","credentials":"none"');
    expect(tlsProxy.passed()).toBeGreaterThan(before);

    const [noCa, otherCa, wrongName, worker] = await Promise.all([
      cli(['list'], { TEMPORAL_ADDRESS: tlsProxy.address, TEMPORAL_TLS: 'true' }),
      cli(['list'], { ...tls, TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.otherCaCert }),
      cli(['list'], { ...tls, TEMPORAL_TLS_SERVER_NAME: 'temporal.other.test' }),
      failingWorker({ TEMPORAL_ADDRESS: tlsProxy.address, TEMPORAL_TLS: 'true' }),
    ]);
    for (const run of [noCa, otherCa]) {
      expect(run.code, run.stderr).toBe(EXIT.unavailable);
      expect(run.stderr).toContain(`cannot connect to Temporal at ${tlsProxy.address} (namespace default, TLS on, no credentials)`);
      expect(run.stderr).toMatch(/TLS handshake: .*certificate.*set TEMPORAL_TLS_SERVER_CA_CERT_PATH/);
    }
    expect(wrongName.code, wrongName.stderr).toBe(EXIT.unavailable);
    expect(wrongName.stderr).toMatch(/temporal\.other\.test.*set TEMPORAL_TLS_SERVER_NAME/);
    expect(worker.code, worker.output).toBe(1);
    expect(worker.output).toMatch(/cannot connect to Temporal at .*UnknownIssuer.*TEMPORAL_TLS_SERVER_CA_CERT_PATH/);
  });
});

describe('mutual TLS', () => {
  it('ships an order with the client certificate; without it the endpoint refuses the handshake', async () => {
    const mtls = {
      TEMPORAL_ADDRESS: mtlsProxy.address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
    };
    const logs = await shipThrough(mtls, 'MTLS-1');
    expect(logs).toContain('"tls":"on","credentials":"client certificate"');

    const refusedBefore = mtlsProxy.refused();
    const withoutCert = { TEMPORAL_ADDRESS: mtlsProxy.address, TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert };
    const [cliRun, worker] = await Promise.all([cli(['status', 'tls-shop', 'MTLS-1'], withoutCert), failingWorker(withoutCert)]);
    expect(cliRun.code, cliRun.stderr).toBe(EXIT.unavailable);
    expect(cliRun.stderr).toMatch(
      /TLS handshake: tlsv13 alert certificate required.*TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH/,
    );
    expect(worker.code, worker.output).toBe(1);
    expect(worker.output).toMatch(/cannot connect to Temporal at .*TLS on, no credentials.*certificate required/);
    expect(mtlsProxy.refused()).toBeGreaterThan(refusedBefore);
  });
});

describe('API key', () => {
  it('ships an order with the right key; a wrong or missing key is UNAUTHENTICATED; no key is ever printed', async () => {
    const withKey = { TEMPORAL_ADDRESS: keyProxy.address, TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert, TEMPORAL_API_KEY: API_KEY };
    const passedBefore = keyProxy.passed();
    const logs = await shipThrough(withKey, 'KEY-1');
    expect(logs).toContain('"tls":"on","credentials":"API key"');
    expect(keyProxy.passed()).toBeGreaterThan(passedBefore);

    const refusedBefore = keyProxy.refused();
    const wrong = { ...withKey, TEMPORAL_API_KEY: WRONG_KEY };
    const [wrongCli, missingCli, wrongWorker] = await Promise.all([
      cli(['status', 'tls-shop', 'KEY-1'], wrong),
      cli(['list'], { TEMPORAL_ADDRESS: keyProxy.address, TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert }),
      failingWorker(wrong),
    ]);
    expect(wrongCli.code, wrongCli.stderr).toBe(EXIT.unavailable);
    expect(wrongCli.stderr).toMatch(/\(namespace default, TLS on, API key\): .*UNAUTHENTICATED: invalid API key.*check TEMPORAL_API_KEY/);
    expect(missingCli.code, missingCli.stderr).toBe(EXIT.unavailable);
    expect(missingCli.stderr).toMatch(/UNAUTHENTICATED: API key required/);
    expect(wrongWorker.code, wrongWorker.output).toBe(1);
    expect(wrongWorker.output).toMatch(/cannot connect to Temporal at .*API key\).*invalid API key/);
    expect(keyProxy.refused()).toBeGreaterThanOrEqual(refusedBefore + 3);

    for (const text of [logs, wrongCli.stdout, wrongCli.stderr, missingCli.stderr, wrongWorker.output]) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(WRONG_KEY);
    }
  });
});

describe('TOML profile file', () => {
  it('TEMPORAL_PROFILE selects a profile with mutual TLS; an unknown profile or a missing certificate names the setting', async () => {
    const closedPort = await freePort();
    const configFile = path.join(tmp, 'temporal.toml');
    writeFileSync(
      configFile,
      `# Profiles as the Temporal CLI writes them (temporal config set --profile ...)
[profile.default]
address = "127.0.0.1:${closedPort}"

[profile.shipping-prod]
address = "${mtlsProxy.address}"
namespace = "default"

[profile.shipping-prod.tls]
server_ca_cert_path = "${pki.caCert}"
client_cert_path = "${pki.clientCert}"
client_key_path = "${pki.clientKey}"

[profile.broken]
address = "${mtlsProxy.address}"

[profile.broken.tls]
client_cert_path = "${path.join(tmp, 'no-such-client.pem')}"
client_key_path = "${pki.clientKey}"
`,
    );
    const logs = await shipThrough({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'shipping-prod' }, 'TOML-1');
    expect(logs).toContain(`"tls":"on","credentials":"client certificate","configFile":"${configFile}","profile":"shipping-prod"`);

    const [unknown, broken, defaultProfile, missingFile, worker] = await Promise.all([
      cli(['list'], { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'shipping-staging' }),
      cli(['list'], { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'broken' }),
      cli(['list'], { TEMPORAL_CONFIG_FILE: configFile }),
      cli(['list'], { TEMPORAL_CONFIG_FILE: path.join(tmp, 'missing.toml'), TEMPORAL_PROFILE: 'shipping-prod' }),
      failingWorker({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'broken' }),
    ]);
    expect(unknown.code, unknown.stderr).toBe(EXIT.usage);
    expect(unknown.stderr).toContain(
      `TEMPORAL_PROFILE: no profile "shipping-staging" in ${configFile} (it has: default, shipping-prod, broken)`,
    );
    expect(broken.code, broken.stderr).toBe(EXIT.usage);
    expect(broken.stderr).toContain(
      `${configFile}: profile.broken.tls.client_cert_path: file not found: ${path.join(tmp, 'no-such-client.pem')}`,
    );
    // No TEMPORAL_PROFILE: the profile named default, here an address nothing listens on.
    expect(defaultProfile.code, defaultProfile.stderr).toBe(EXIT.unavailable);
    expect(defaultProfile.stderr).toContain(
      `cannot connect to Temporal at 127.0.0.1:${closedPort} (namespace default, TLS off, no credentials, profile default of ${configFile})`,
    );
    expect(missingFile.code, missingFile.stderr).toBe(EXIT.usage);
    expect(missingFile.stderr).toContain(`TEMPORAL_CONFIG_FILE: file not found: ${path.join(tmp, 'missing.toml')}`);
    expect(worker.code, worker.output).toBe(2);
    expect(worker.output).toContain(`${configFile}: profile.broken.tls.client_cert_path: file not found`);
  });
});
