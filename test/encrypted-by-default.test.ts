/**
 * Encrypted by default on every path, through real processes: `npm run import` and `npm run cli`
 * as child processes against a real Temporal dev server, a dev checkout's key and connectors as
 * `npm run dev` leaves them (its own functions write them), and a real worker process with keys
 * that meets a shipment started in clear.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataConverterFor } from '../codec/data-converter';
import { ENCRYPTED_ENCODING } from '../codec/encryption-codec';
import { loadPayloadEncryptionSettings } from '../config/settings';
import { ensureDevKeyFile } from '../dev-server/dev-key';
import { DEV_CONNECTORS_FILE, writeDevFile, writeDevSession } from '../dev-server/dev-session';
import { freePort } from '../dev-server/free-port';
import { shipmentWorkflowId } from '../domain/shipment';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { createShipmentWorker } from '../worker/create-worker';
import { REPO_ROOT } from './helpers/cli';
import { FAST_TRACKING, TEST_CREDENTIALS } from './helpers/harness';
import { order } from './helpers/orders';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';
import { waitFor } from './helpers/wait';
import { killWorkerProcesses, startWorkerProcess, workerEnv } from './helpers/worker-process';

// The SDK require()s the failure converter by path (codec/failure-converter.ts): a vitest fork needs tsx's hook for it.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the hook must load before the SDK, synchronously
(require('tsx/cjs/api') as { register: () => unknown }).register();

let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'encrypted-by-default-'));
const noDevCheckout = path.join(tmp, 'no-dev-checkout');
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  env = await createTestEnv();
  fake = await startFakeShippingApi({ port: 0, trackingStepMs: 150, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
});
afterAll(async () => {
  killWorkerProcesses();
  for (const cleanup of cleanups.reverse()) await cleanup();
  await fake?.close();
  await env?.teardown();
  rmSync(tmp, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run <script> -- <args>` as the README types it, with PATH, HOME and `settings` only. */
function npmRun(script: 'import' | 'cli', args: string[], settings: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', script, '--', ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...settings },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(
      () => (child.kill('SIGKILL'), reject(new Error(`npm run ${script} ${args.join(' ')}: no end\n${stderr}`))),
      60_000,
    );
    child.on('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })));
  });
}

/** The README's second terminal: the API's settings and the Temporal address, nothing about keys. */
function terminal(taskQueue: string, devDataDir = noDevCheckout): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    SHIPPING_API_BASE_URL: fake.baseUrl,
    SHIPPING_API_KEY: TEST_CREDENTIALS.apiKey,
    SHIPPING_API_TOKEN: TEST_CREDENTIALS.apiToken,
    DEV_DATA_DIR: devDataDir,
  };
}

function orderFile(shop: string, orderId: string): string {
  const file = path.join(tmp, `${orderId}.ndjson`);
  writeFileSync(file, JSON.stringify(order(shop, orderId)) + '\n');
  return file;
}

async function startedInput(workflowId: string) {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  return history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
}

const encodingOf = (payload: { metadata?: Record<string, Uint8Array> | null }) =>
  Buffer.from(payload.metadata?.encoding ?? new Uint8Array()).toString('utf8');

describe('a client without a key', () => {
  it('npm run import (a file or --from) and npm run cli refuse, naming the setting to export, and start nothing', async () => {
    const orderId = `CLR-${randomUUID().slice(0, 8)}`;
    const settings = terminal(`enc-${randomUUID()}`);
    const runs = {
      import: await npmRun('import', [orderFile('acme', orderId)], settings),
      from: await npmRun('import', ['--from', 'oslo-outdoor'], settings),
      status: await npmRun('cli', ['status', 'acme', orderId], settings),
      attention: await npmRun('cli', ['attention'], settings),
    };
    for (const [what, run] of Object.entries(runs)) {
      expect(run.code, `${what}: ${run.stderr}`).toBe(2);
      expect(run.stderr, what).toMatch(/PAYLOAD_ENCRYPTION_KEYS_FILE: is not set .*in clear, so nothing was sent/);
      expect(run.stderr, what).toContain('PAYLOAD_ENCRYPTION=off or --no-encryption');
    }
    await expect(env.client.workflow.getHandle(shipmentWorkflowId({ shop: 'acme', orderId })).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
  });
});

describe('a dev checkout (the key and connectors npm run dev made)', () => {
  it('npm run import and npm run cli use them without an export: the shipment is encrypted and read back', async () => {
    const dataDir = path.join(tmp, 'dev-data');
    const { file: keysFile } = ensureDevKeyFile(dataDir);
    const connectorsFile = writeDevFile(
      dataDir,
      DEV_CONNECTORS_FILE,
      JSON.stringify({
        'porto-test': {
          type: 'woocommerce',
          url: `http://127.0.0.1:${await freePort()}`,
          consumerKey: 'ck_fake',
          consumerSecret: 'cs_fake',
          import: {
            every: '1m',
            mapping: {
              defaultService: { courier: 'dpd-de', productCode: 'DPD_CLASSIC' },
              shipFrom: {
                contact: { firstName: 'Inês', lastName: 'Costa', phone: '+351 22 555 0101' },
                address: { streetLines: ['Rua das Flores 10'], city: 'Porto', postalCode: '4050-262', countryCode: 'PT' },
              },
              orderIdPrefix: 'PT-',
            },
          },
        },
      }),
    );
    writeDevSession(dataDir, {
      temporalAddress: env.address,
      namespace: 'default',
      payloadEncryptionKeysFile: keysFile,
      shopConnectorsFile: connectorsFile,
    });
    const taskQueue = `enc-${randomUUID()}`;
    const worker = await createShipmentWorker({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue,
      shippingApi: { baseUrl: fake.baseUrl, ...TEST_CREDENTIALS },
      tracking: FAST_TRACKING,
      workflowBundle: await getWorkflowBundle(),
      dataConverter: dataConverterFor(loadPayloadEncryptionSettings({ PAYLOAD_ENCRYPTION_KEYS_FILE: keysFile })),
    });
    const running = worker.run();
    cleanups.push(async () => (worker.shutdown(), await running));

    const orderId = `DEV-${randomUUID().slice(0, 8)}`;
    const settings = terminal(taskQueue, dataDir);
    const imported = await npmRun('import', [orderFile('acme', orderId), '--json'], settings);
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout).counts).toMatchObject({ started: 1 });
    expect(encodingOf(await startedInput(shipmentWorkflowId({ shop: 'acme', orderId })))).toBe(ENCRYPTED_ENCODING);

    const status = await npmRun('cli', ['status', '--json', 'acme', orderId], settings);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ state: { shop: 'acme', orderId } });

    // Told to go without a key, reading it names the setting (was: "Unknown encoding: binary/encrypted").
    const keyless = await npmRun('cli', ['status', 'acme', orderId, '--no-encryption'], settings);
    expect(keyless.code, keyless.stderr).not.toBe(0);
    expect(keyless.stderr).toMatch(/encrypted \(key "dev-key-1"\) and no key is set: set PAYLOAD_ENCRYPTION_KEYS_FILE/);
    expect(keyless.stderr).not.toContain('Unknown encoding');

    // The shops npm run dev gave the worker: --from finds them (it then reads the store, closed here).
    const deadline = ['--from', 'porto-test', '--skip-preflight', '--deadline', '1s'];
    const fromShop = await npmRun('import', deadline, settings);
    expect(fromShop.stderr).toMatch(/reading porto-test since/);
    expect(fromShop.stderr).not.toContain('no such shop');
    const elsewhere = await npmRun('import', [...deadline, '--no-encryption'], terminal(taskQueue));
    expect(elsewhere.stderr).toContain('--from porto-test: no such shop in SHOP_CONNECTORS');
  });
});

describe('a worker with keys', () => {
  it('meeting a shipment started in clear logs a warning naming it and counts it in workflows_in_clear_total', async () => {
    const dataDir = path.join(tmp, 'worker-keys');
    mkdirSync(dataDir, { recursive: true });
    const { file: keysFile } = ensureDevKeyFile(dataDir);
    const taskQueue = `enc-${randomUUID()}`;
    const healthPort = await freePort();
    const worker = await startWorkerProcess({
      ...workerEnv(env.address, taskQueue, fake.baseUrl),
      PAYLOAD_ENCRYPTION_KEYS_FILE: keysFile,
      WORKER_HEALTH_PORT: String(healthPort),
      TRACKING_POLL_INTERVAL: '200ms',
    });
    const metric = async () => {
      const text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
      return Number(/^workflows_in_clear_total (\d+)/m.exec(text)?.[1]);
    };
    expect(await metric()).toBe(0);

    const orderId = `PLN-${randomUUID().slice(0, 8)}`;
    const imported = await npmRun('import', [orderFile('acme', orderId), '--no-encryption'], terminal(taskQueue));
    expect(imported.code, imported.stderr).toBe(0);
    const workflowId = shipmentWorkflowId({ shop: 'acme', orderId });
    expect(encodingOf(await startedInput(workflowId))).toBe('json/plain');

    await waitFor(() => worker.output().includes(`${workflowId}: its payloads reached this worker unencrypted`), {
      timeoutMs: 30_000,
      what: 'the worker to warn about the shipment in clear',
    });
    expect(await metric()).toBe(1);
  });
});
