/**
 * Payload encryption through real boundaries: a real Temporal dev server, the fake shipping API
 * over loopback, the import and status commands as child processes, the codec server over HTTP.
 * "Readable" is checked on the history exactly as the server stores and serves it: the raw gRPC
 * GetWorkflowExecutionHistory answer, serialized to bytes and searched.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../client/cli-support';
import { startShipment } from '../order-import/start-shipment';
import { dataConverterFor } from '../codec/data-converter';
import { EncryptionCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA, PayloadDecryptionError } from '../codec/encryption-codec';
import { startCodecServer, type CodecServer } from '../codec/server';
import {
  ConfigError,
  loadCodecServerSettings,
  loadPayloadEncryptionSettings,
  loadWorkerSettings,
  type EncryptionKey,
  type PayloadEncryptionSettings,
} from '../config/settings';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { cancelShipmentSignal, stateQuery, type ShipmentOutcome } from '../workflow-definitions/shipment';
import { shipmentWorkflowId, type ShipmentInput } from '../domain/shipment';
import { createShipmentWorker } from '../worker/create-worker';
import { FAST_TRACKING, TEST_CREDENTIALS } from './helpers/harness';
import { rawRequest } from './helpers/api';
import { REPO_ROOT, runCli } from './helpers/cli';
import { freePort } from '../dev-server/free-port';
import { order } from './helpers/orders';
import { createTestEnv, getWorkflowBundle } from './helpers/temporal-env';
import { startDevProcess, stopDevProcess } from './helpers/dev-process';
import { waitFor } from './helpers/wait';

// The SDK require()s the failure converter by path (codec/failure-converter.ts): under tsx and
// in dist/ that works; a vitest fork's own require needs tsx's hook for a .ts file.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the hook must load before the SDK, synchronously
(require('tsx/cjs/api') as { register: () => unknown }).register();

const OLD_KEY: EncryptionKey = { id: 'key-2026-01', key: randomBytes(32) };
const NEW_KEY: EncryptionKey = { id: 'key-2026-07', key: randomBytes(32) };
const ONLY_OLD: PayloadEncryptionSettings = { keys: [OLD_KEY], activeKeyId: OLD_KEY.id };
const ROTATED: PayloadEncryptionSettings = { keys: [NEW_KEY, OLD_KEY], activeKeyId: NEW_KEY.id };
const keysSetting = (...keys: EncryptionKey[]) => keys.map((k) => `${k.id}=${k.key.toString('base64')}`).join(',');

/** The personal data of test/helpers/api.ts's sample order (recipient and sender). */
const PERSONAL_DATA = [
  'de Vries',
  'Keizersgracht',
  '+31 20 7654321',
  'jan@example.nl',
  'Schmidt',
  'Lagerstra',
  '+49 30 1234567',
  'shipping@shop.example',
];
/** The courier rejects this postal code, and its wording quotes it. */
const REJECTED_POSTAL_CODE = '9999 ZZ';

let env: TestWorkflowEnvironment;
let fake: FakeShippingApi;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'payload-codec-'));
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  env = await createTestEnv();
  fake = await startFakeShippingApi({
    port: 0,
    trackingStepMs: 150,
    accounts: [{ name: 'main', ...TEST_CREDENTIALS }],
    rejectPostalCodes: [REJECTED_POSTAL_CODE],
  });
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await fake?.close();
  await env?.teardown();
  rmSync(tmp, { recursive: true, force: true });
});

/** An in-process worker of this project on its own queue, with or without the codec. */
async function startWorker(taskQueue: string, encryption: PayloadEncryptionSettings | undefined, api: FakeShippingApi = fake) {
  const worker = await createShipmentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    shippingApi: { baseUrl: api.baseUrl, ...TEST_CREDENTIALS },
    tracking: FAST_TRACKING,
    workflowBundle: await getWorkflowBundle(),
    dataConverter: dataConverterFor(encryption),
  });
  const running = worker.run();
  const stop = async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  };
  cleanups.push(stop);
  return { stop };
}

const clientWith = (encryption: PayloadEncryptionSettings | undefined) =>
  new Client({ connection: env.connection, namespace: 'default', dataConverter: dataConverterFor(encryption) });

/** The history as the server hands it out, every page, as the protobuf bytes it stores. */
async function rawHistory(workflowId: string): Promise<{ bytes: Buffer; events: temporal.api.history.v1.IHistoryEvent[] }> {
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await env.client.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId },
      nextPageToken,
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { bytes: Buffer.from(temporal.api.history.v1.History.encode({ events }).finish()), events };
}

const readable = (bytes: Buffer, texts: string[]) => texts.filter((t) => bytes.includes(Buffer.from(t, 'utf8')));

function keyIdsIn(events: temporal.api.history.v1.IHistoryEvent[]): Set<string> {
  const ids = new Set<string>();
  const visit = (value: unknown): void => {
    if (!value || typeof value !== 'object') return;
    if (value instanceof Uint8Array) return;
    const metadata = (value as Payload).metadata;
    const id = metadata?.[KEY_ID_METADATA];
    if (id) ids.add(Buffer.from(id).toString('utf8'));
    for (const child of Object.values(value)) visit(child);
  };
  visit(events);
  return ids;
}

/** Buffers and Uint8Arrays alike, for comparing payloads. */
const normalized = (payloads: Payload[]) =>
  payloads.map((p) => ({
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v)])),
    data: Buffer.from(p.data ?? new Uint8Array()),
  }));

function startInput(events: temporal.api.history.v1.IHistoryEvent[]): Payload[] {
  return events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads ?? [];
}

describe('a shipment with encryption keys set', () => {
  it('imported and run to delivery, leaves no personal data readable in the stored history; clients with the key read it', async () => {
    const taskQueue = `codec-${randomUUID()}`;
    await startWorker(taskQueue, ONLY_OLD);
    const input: ShipmentInput = order('acme', `P-${randomUUID().slice(0, 8)}`);
    const file = path.join(tmp, 'orders.ndjson');
    writeFileSync(file, JSON.stringify(input) + '\n');
    const cliEnv = {
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: taskQueue,
      SHIPPING_API_BASE_URL: fake.baseUrl,
      SHIPPING_API_KEY: TEST_CREDENTIALS.apiKey,
      SHIPPING_API_TOKEN: TEST_CREDENTIALS.apiToken,
      PAYLOAD_ENCRYPTION_KEYS: keysSetting(OLD_KEY),
    };
    const imported = await runCli(['import', file, '--json'], { env: cliEnv });
    expect(imported.code, imported.stderr).toBe(EXIT.ok);
    expect(JSON.parse(imported.stdout).counts).toMatchObject({ started: 1 });

    const workflowId = shipmentWorkflowId(input);
    const outcome = (await clientWith(ONLY_OLD).workflow.getHandle(workflowId).result()) as ShipmentOutcome;
    expect(outcome.outcome).toBe('delivered');

    const { bytes, events } = await rawHistory(workflowId);
    expect(bytes.includes(Buffer.from(workflowId))).toBe(true); // the search does find what is there
    expect(readable(bytes, PERSONAL_DATA)).toEqual([]);
    expect(readable(bytes, [ENCRYPTED_ENCODING, OLD_KEY.id])).toEqual([ENCRYPTED_ENCODING, OLD_KEY.id]);
    // The summary and details the Web UI lists are payloads too.
    expect(readable(bytes, ['Order ', 'dhl-express EXPRESS_WORLDWIDE'])).toEqual([]);

    // With the key, the input is the order exactly; without it, nothing decodes.
    const [decoded] = await new EncryptionCodec(ONLY_OLD).decode(startInput(events));
    // The import fixes the shop's shipping account in the input (here the one from SHIPPING_API_*).
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ ...input, account: 'default' });
    await expect(env.client.workflow.getHandle(workflowId).result()).rejects.toThrow(/binary\/encrypted/);

    // The operator CLI (a real process) reads it with the keys from its environment.
    const status = await runCli(['status', '--json', 'acme', input.orderId], { env: cliEnv });
    expect(status.code, status.stderr).toBe(EXIT.ok);
    expect(JSON.parse(status.stdout)).toMatchObject({ state: { phase: 'completed' }, outcome: { outcome: 'delivered' } });
  });

  it('encrypts failure messages too: the courier wording that quotes the postal code is not readable', async () => {
    const taskQueue = `codec-${randomUUID()}`;
    await startWorker(taskQueue, ONLY_OLD);
    const client = clientWith(ONLY_OLD);
    const input = order('acme', `R-${randomUUID().slice(0, 8)}`, { postalCode: REJECTED_POSTAL_CODE });
    const { workflowId } = (await startShipment(client, taskQueue, input)) as { workflowId: string };
    const handle = client.workflow.getHandle(workflowId);
    const state = await waitFor(
      async () => {
        const s = await handle.query(stateQuery);
        return s.phase === 'awaiting_correction' ? s : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: 'awaiting_correction' },
    );
    // Decrypted, the carrier's wording is there and quotes the postal code ...
    expect(JSON.stringify(state.lastError)).toContain(REJECTED_POSTAL_CODE);
    await handle.signal(cancelShipmentSignal, { reason: 'test' });
    expect(((await handle.result()) as ShipmentOutcome).outcome).toBe('cancelled_by_operator');

    // ... and stored, neither the wording nor the postal code is readable: the failure's message is encoded.
    const { bytes } = await rawHistory(workflowId);
    expect(readable(bytes, [REJECTED_POSTAL_CODE, 'Invalid destination postal code', ...PERSONAL_DATA])).toEqual([]);
    expect(readable(bytes, ['Encoded failure'])).toEqual(['Encoded failure']);
  });
});

describe('compatibility with unencrypted histories', () => {
  it('a shipment started without encryption finishes after the worker restarts with the codec', async () => {
    // Tracking slow enough that the shipment is still tracking when the worker is replaced.
    const slowFake = await startFakeShippingApi({ port: 0, trackingStepMs: 1_500, accounts: [{ name: 'main', ...TEST_CREDENTIALS }] });
    cleanups.push(() => slowFake.close());
    const taskQueue = `codec-${randomUUID()}`;
    const plainWorker = await startWorker(taskQueue, undefined, slowFake);
    const input = order('acme', `U-${randomUUID().slice(0, 8)}`);
    const { workflowId } = (await startShipment(env.client, taskQueue, input)) as { workflowId: string };
    await waitFor(
      async () => ((await env.client.workflow.getHandle(workflowId).query(stateQuery)).phase === 'tracking' ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 100, what: 'tracking under the plain worker' },
    );
    await plainWorker.stop();

    await startWorker(taskQueue, ONLY_OLD, slowFake);
    const outcome = (await clientWith(ONLY_OLD).workflow.getHandle(workflowId).result()) as ShipmentOutcome;
    expect(outcome.outcome).toBe('delivered');
    expect(outcome.tag).toBe('Delivered');

    const { bytes } = await rawHistory(workflowId);
    // The history written before the switch stays plain (the check can see personal data) ...
    expect(readable(bytes, ['Keizersgracht'])).toEqual(['Keizersgracht']);
    // ... and what the codec worker wrote after it is encrypted.
    expect(readable(bytes, [ENCRYPTED_ENCODING])).toEqual([ENCRYPTED_ENCODING]);
  });

  it('the recorded replay fixtures (all unencrypted) replay with the codec installed', async () => {
    const dir = path.join(__dirname, 'fixtures', 'histories');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(20);
    const histories = files.map((f) => ({
      workflowId: f.replace(/\.json$/, ''),
      history: historyFromJSON(JSON.parse(readFileSync(path.join(dir, f), 'utf8'))),
    }));
    const options = { workflowBundle: await getWorkflowBundle(), dataConverter: dataConverterFor(ROTATED) };
    for await (const result of Worker.runReplayHistories(options, histories)) {
      expect(result.error, result.workflowId).toBeUndefined();
    }
  });
});

describe('key rotation', () => {
  it('a shipment started under the old key finishes on a worker whose active key is the new one', async () => {
    const taskQueue = `codec-${randomUUID()}`;
    await startWorker(taskQueue, ROTATED);
    const input = order('acme', `K-${randomUUID().slice(0, 8)}`);
    // A client that has not been given the new key yet starts it under the old one.
    const { workflowId } = (await startShipment(clientWith(ONLY_OLD), taskQueue, input)) as { workflowId: string };
    const outcome = (await clientWith(ROTATED).workflow.getHandle(workflowId).result()) as ShipmentOutcome;
    expect(outcome.outcome).toBe('delivered');
    const { bytes, events } = await rawHistory(workflowId);
    expect(keyIdsIn(events)).toEqual(new Set([OLD_KEY.id, NEW_KEY.id]));
    expect(readable(bytes, PERSONAL_DATA)).toEqual([]);

    // The encrypted history replays deterministically with the codec.
    const history = temporal.api.history.v1.History.create({ events });
    await Worker.runReplayHistory(
      { workflowBundle: await getWorkflowBundle(), dataConverter: dataConverterFor(ROTATED) },
      history,
      workflowId,
    );

    // Dropping the old key too early makes the old payloads unreadable, with a message naming the key.
    await expect(new EncryptionCodec({ keys: [NEW_KEY], activeKeyId: NEW_KEY.id }).decode(startInput(events))).rejects.toThrow(
      `payload encrypted with key "${OLD_KEY.id}", which is not configured (known: ${NEW_KEY.id}); add it to PAYLOAD_ENCRYPTION_KEYS`,
    );
  });

  it('encodes with the active key, decodes with any configured key, and refuses altered or relabelled payloads', async () => {
    const plain = defaultPayloadConverter.toPayload({ name: 'Jan de Vries' });
    const [underOld] = await new EncryptionCodec(ONLY_OLD).encode([plain]);
    const rotated = new EncryptionCodec(ROTATED);
    expect(normalized(await rotated.decode([underOld!]))).toEqual(normalized([plain]));
    const [underNew] = await rotated.encode([plain]);
    expect(Buffer.from(underNew!.metadata![KEY_ID_METADATA]!).toString()).toBe(NEW_KEY.id);
    // A fresh IV each time: the same value never encrypts to the same bytes.
    const [again] = await rotated.encode([plain]);
    expect(Buffer.from(again!.data!).equals(Buffer.from(underNew!.data!))).toBe(false);

    // Flip every bit of one byte: setting it to a fixed value leaves it unchanged when it already held that value (1 run in 256).
    const tampered = Buffer.from(underOld!.data!);
    tampered[20] = tampered[20]! ^ 0xff;
    const altered = { ...underOld!, data: tampered };
    await expect(rotated.decode([altered])).rejects.toThrow(PayloadDecryptionError);
    const relabelled = { ...underOld!, metadata: { ...underOld!.metadata, [KEY_ID_METADATA]: Buffer.from(NEW_KEY.id) } };
    await expect(rotated.decode([relabelled])).rejects.toThrow(/failed authentication/);
    // Payloads written before encryption pass through untouched.
    expect(await rotated.decode([plain])).toEqual([plain]);
  });
});

describe('key configuration', () => {
  const problems = (fn: () => unknown): string[] => {
    try {
      fn();
    } catch (err) {
      if (err instanceof ConfigError) return err.problems.map((p) => `${p.variable}: ${p.message}`);
      throw err;
    }
    return [];
  };
  const b64 = (n: number) => randomBytes(n).toString('base64');

  it('is off without keys, and reads keys inline or from a file; the first is active unless PAYLOAD_ENCRYPTION_KEY_ID says otherwise', () => {
    expect(loadPayloadEncryptionSettings({})).toBeUndefined();
    const inline = loadPayloadEncryptionSettings({ PAYLOAD_ENCRYPTION_KEYS: keysSetting(NEW_KEY, OLD_KEY) })!;
    expect(inline.activeKeyId).toBe(NEW_KEY.id);
    expect(inline.keys.map((k) => k.key)).toEqual([NEW_KEY.key, OLD_KEY.key]);
    const file = path.join(tmp, 'keys');
    writeFileSync(
      file,
      `# rotated 2026-07\n${NEW_KEY.id}=${NEW_KEY.key.toString('base64')}\n${OLD_KEY.id}=${OLD_KEY.key.toString('base64')}\n`,
    );
    const fromFile = loadPayloadEncryptionSettings({ PAYLOAD_ENCRYPTION_KEYS_FILE: file, PAYLOAD_ENCRYPTION_KEY_ID: OLD_KEY.id })!;
    expect(fromFile).toEqual({ keys: [NEW_KEY, OLD_KEY], activeKeyId: OLD_KEY.id });
  });

  it('names the setting and the key id in every error, and never the key material', () => {
    const short = b64(16);
    const found = problems(() =>
      loadPayloadEncryptionSettings({ PAYLOAD_ENCRYPTION_KEYS: `a=${b64(32)},a=${b64(32)},b=${short},c=not*base64,=${b64(32)},d` }),
    );
    expect(found).toEqual([
      'PAYLOAD_ENCRYPTION_KEYS: duplicate key id "a"',
      'PAYLOAD_ENCRYPTION_KEYS: key "b" must be 32 bytes, got 16 (generate one with: openssl rand -base64 32)',
      'PAYLOAD_ENCRYPTION_KEYS: key "c" is not valid base64 (generate one with: openssl rand -base64 32)',
      'PAYLOAD_ENCRYPTION_KEYS: entry 5 is not keyId=base64 (a key id is 1-64 of A-Z a-z 0-9 . _ -)',
      'PAYLOAD_ENCRYPTION_KEYS: entry 6 is not keyId=base64 (a key id is 1-64 of A-Z a-z 0-9 . _ -)',
    ]);
    expect(found.join('\n')).not.toContain(short);
    expect(
      problems(() => loadPayloadEncryptionSettings({ PAYLOAD_ENCRYPTION_KEYS: keysSetting(OLD_KEY), PAYLOAD_ENCRYPTION_KEY_ID: 'nope' })),
    ).toEqual([`PAYLOAD_ENCRYPTION_KEY_ID: "nope" is not among the configured keys (${OLD_KEY.id})`]);
    expect(
      problems(() => loadPayloadEncryptionSettings({ PAYLOAD_ENCRYPTION_KEYS: keysSetting(OLD_KEY), PAYLOAD_ENCRYPTION_KEYS_FILE: '/x' })),
    ).toEqual(['PAYLOAD_ENCRYPTION_KEYS: set either PAYLOAD_ENCRYPTION_KEYS or PAYLOAD_ENCRYPTION_KEYS_FILE, not both']);
    expect(problems(() => loadPayloadEncryptionSettings({ PAYLOAD_ENCRYPTION_KEYS_FILE: path.join(tmp, 'missing') }))).toEqual([
      `PAYLOAD_ENCRYPTION_KEYS_FILE: cannot read ${path.join(tmp, 'missing')}: ENOENT`,
    ]);
    // The worker reports a bad key together with its other bad settings.
    expect(problems(() => loadWorkerSettings({ PAYLOAD_ENCRYPTION_KEYS: `a=${short}` }))).toEqual(
      expect.arrayContaining([
        'SHIPPING_API_KEY: is required',
        expect.stringMatching(/^PAYLOAD_ENCRYPTION_KEYS: key "a" must be 32 bytes/),
      ]),
    );
  });
});

describe('the codec server', () => {
  const TOKEN = randomBytes(24).toString('hex');
  const UI = 'http://localhost:8233';
  let server: CodecServer;
  beforeAll(async () => {
    server = await startCodecServer({
      ...loadCodecServerSettings({ PAYLOAD_ENCRYPTION_KEYS: keysSetting(NEW_KEY, OLD_KEY), CODEC_SERVER_TOKEN: TOKEN }),
    });
  });
  afterAll(() => server?.close());

  const wire = (p: Payload) => ({
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    data: Buffer.from(p.data ?? []).toString('base64'),
  });
  const post = (op: string, body: unknown, headers: Record<string, string> = {}) =>
    rawRequest(server.url, 'POST', `/${op}`, { headers: { authorization: `Bearer ${TOKEN}`, ...headers }, body });

  it('refuses requests without the bearer token or with a wrong one', async () => {
    const body = { payloads: [] };
    const none = await rawRequest(server.url, 'POST', '/decode', { body });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((await post('decode', body, { authorization: `Bearer ${TOKEN.slice(0, -1)}x` })).status).toBe(401);
    expect((await post('encode', body, { authorization: TOKEN })).status).toBe(401); // not a Bearer header
    expect((await post('decode', body)).status).toBe(200);
  });

  it('answers CORS only for the Web UI origin, preflight included', async () => {
    const preflight = await rawRequest(server.url, 'OPTIONS', '/decode', {
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-namespace',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(UI);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('Authorization, Authorization-Extras, Content-Type, X-Namespace');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');

    const foreign = await rawRequest(server.url, 'OPTIONS', '/decode', { headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();

    expect((await post('decode', { payloads: [] }, { origin: UI })).headers.get('access-control-allow-origin')).toBe(UI);
    expect(
      (await post('decode', { payloads: [] }, { origin: 'https://evil.example' })).headers.get('access-control-allow-origin'),
    ).toBeNull();
    // A refusal carries the CORS header, so the Web UI can tell "wrong token" from "unreachable".
    const refused = await rawRequest(server.url, 'POST', '/decode', { headers: { origin: UI }, body: { payloads: [] } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(UI);
  });

  it('round-trips payloads with the worker codec both ways, passes plain ones through, and names an unknown key', async () => {
    const plain = defaultPayloadConverter.toPayload({ shipTo: { name: 'Jan de Vries', street: 'Keizersgracht 12' } });
    const encoded = await post('encode', { payloads: [wire(plain)] });
    expect(encoded.status).toBe(200);
    const served = (encoded.json as { payloads: Array<{ metadata: Record<string, string>; data: string }> }).payloads[0]!;
    expect(Buffer.from(served.metadata[KEY_ID_METADATA]!, 'base64').toString()).toBe(NEW_KEY.id);
    expect(Buffer.from(served.data, 'base64').includes(Buffer.from('Keizersgracht'))).toBe(false);
    const servedPayload = {
      metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: Buffer.from(NEW_KEY.id) },
      data: Buffer.from(served.data, 'base64'),
    };
    expect(normalized(await new EncryptionCodec(ROTATED).decode([servedPayload]))).toEqual(normalized([plain]));

    // The Web UI's request shape: an old-key payload, a plain one, its query parameter and X-Namespace.
    const [underOld] = await new EncryptionCodec(ONLY_OLD).encode([plain]);
    const decoded = await rawRequest(server.url, 'POST', '/decode?preserveStorageRefs=true', {
      headers: { authorization: `Bearer ${TOKEN}`, 'x-namespace': 'default' },
      body: { payloads: [wire(underOld!), wire(plain)] },
    });
    expect(decoded.status).toBe(200);
    expect(decoded.json).toEqual({ payloads: [wire(plain), wire(plain)] });

    const stranger = await new EncryptionCodec({ keys: [{ id: 'retired', key: randomBytes(32) }], activeKeyId: 'retired' }).encode([plain]);
    const unknown = await post('decode', { payloads: [wire(stranger[0]!)] });
    expect(unknown.status).toBe(422);
    expect(unknown.json).toEqual({
      error: `payload encrypted with key "retired", which is not configured (known: ${NEW_KEY.id}, ${OLD_KEY.id}); add it to PAYLOAD_ENCRYPTION_KEYS`,
    });
    expect((await post('decode', { payloads: [{ data: 'not base64!' }] })).status).toBe(400);
  });

  it('without a token (npm run dev) serves only requests addressed to a loopback name', async () => {
    const settings = loadCodecServerSettings({ PAYLOAD_ENCRYPTION_KEYS: keysSetting(OLD_KEY) }, { requireToken: false });
    expect(settings.token).toBeUndefined();
    const open = await startCodecServer(settings);
    cleanups.push(() => open.close());
    expect((await rawRequest(open.url, 'POST', '/decode', { body: { payloads: [] } })).status).toBe(200);
    // What a DNS-rebound page would send: its own host name, resolved to 127.0.0.1.
    const status = await new Promise<number>((resolve, reject) => {
      const { port } = new URL(open.url);
      const req = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/decode', headers: { host: `rebound.example:${port}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{"payloads":[]}');
    });
    expect(status).toBe(403);
  });

  it('as a command: --help, refuses to start without a token, and runs without one only on loopback', () => {
    const run = (args: string[], extraEnv: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'codec/server-main.ts', ...args], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, ...extraEnv },
        encoding: 'utf8',
        timeout: 30_000,
      });
    const help = run(['--help'], {});
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('CODEC_SERVER_TOKEN');
    const noToken = run(['--port', '0'], { PAYLOAD_ENCRYPTION_KEYS: keysSetting(OLD_KEY) });
    expect(noToken.status).toBe(2);
    expect(noToken.stderr).toContain('CODEC_SERVER_TOKEN: is required');
    const exposed = run(['--insecure-no-auth', '--host', '0.0.0.0'], { PAYLOAD_ENCRYPTION_KEYS: keysSetting(OLD_KEY) });
    expect(exposed.status).toBe(2);
    expect(exposed.stderr).toContain('--insecure-no-auth is only allowed on a loopback --host');
  });
});

describe('npm run dev with a key', () => {
  let dev: ChildProcess | undefined;
  afterAll(() => stopDevProcess(dev));

  it('starts the codec server and points the Web UI at it; the UI origin can decrypt what the worker stored', async () => {
    const [temporalPort, uiPort, fakeApiPort, codecPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const [shopPort, shopifyPort, wooPort, triggerPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const keyFile = path.join(tmp, 'dev-keys');
    writeFileSync(keyFile, `${OLD_KEY.id}=${OLD_KEY.key.toString('base64')}\n`);
    const devEnv: NodeJS.ProcessEnv = {
      ...process.env,
      NO_COLOR: '1',
      TRACKING_POLL_INTERVAL: '500ms',
      PAYLOAD_ENCRYPTION_KEYS_FILE: keyFile,
    };
    for (const key of [
      'SHIPPING_API_BASE_URL',
      'SHIPPING_API_KEY',
      'SHIPPING_API_TOKEN',
      'TEMPORAL_TASK_QUEUE',
      'PAYLOAD_ENCRYPTION_KEYS',
      'CODEC_SERVER_TOKEN',
    ])
      delete devEnv[key];
    const dataDir = mkdtempSync(path.join(tmp, 'dev-'));
    const started = await startDevProcess(
      {
        'temporal-port': temporalPort,
        'ui-port': uiPort,
        'fake-api-port': fakeApiPort,
        'shop-port': shopPort,
        'shopify-port': shopifyPort,
        'woocommerce-port': wooPort,
        'codec-port': codecPort,
        'trigger-port': triggerPort,
        'data-dir': dataDir,
        'tracking-step-ms': 300,
      },
      devEnv,
    );
    dev = started.child;
    const output = started.output();
    const codecUrl = `http://127.0.0.1:${codecPort}`;
    expect(output).toContain(`Payloads          encrypted (key "${OLD_KEY.id}"); the Web UI decrypts through ${codecUrl}`);
    expect(output).not.toContain(OLD_KEY.key.toString('base64'));

    // What the Web UI's server hands the browser: the codec endpoint, and no token to pass.
    const settings = (await (await fetch(`http://localhost:${uiPort}/api/v1/settings`)).json()) as {
      Codec: { Endpoint: string; PassAccessToken: boolean };
    };
    expect(settings.Codec).toMatchObject({ Endpoint: codecUrl, PassAccessToken: false });

    // The banner's exports, as pasted into the second terminal: the import encrypts with the same keys.
    const exportLine = output.split('\n').find((l) => l.trim().startsWith('export '))!;
    const userEnv = Object.fromEntries(
      exportLine
        .trim()
        .slice('export '.length)
        .split(' ')
        .map((pair) => pair.split('=') as [string, string]),
    );
    expect(userEnv.PAYLOAD_ENCRYPTION_KEYS_FILE).toBe(keyFile);
    const input = order('dev-shop', 'D-1');
    const file = path.join(tmp, 'dev-order.ndjson');
    writeFileSync(file, JSON.stringify(input) + '\n');
    const imported = await runCli(['import', file, '--json'], { env: userEnv });
    expect(imported.code, imported.stderr).toBe(EXIT.ok);

    const connection = await Connection.connect({ address: `localhost:${temporalPort}` });
    try {
      const history = await connection.workflowService.getWorkflowExecutionHistory({
        namespace: 'default',
        execution: { workflowId: shipmentWorkflowId(input) },
      });
      const stored = startInput(history.history!.events!)[0]!;
      expect(Buffer.from(stored.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
      // The request the browser makes: from the UI's origin, no Authorization header.
      const decoded = await rawRequest(codecUrl, 'POST', '/decode?preserveStorageRefs=true', {
        headers: { origin: `http://localhost:${uiPort}`, 'x-namespace': 'default' },
        body: {
          payloads: [
            {
              metadata: {
                encoding: Buffer.from(stored.metadata!.encoding!).toString('base64'),
                [KEY_ID_METADATA]: Buffer.from(stored.metadata![KEY_ID_METADATA]!).toString('base64'),
              },
              data: Buffer.from(stored.data!).toString('base64'),
            },
          ],
        },
      });
      expect(decoded.status).toBe(200);
      expect(decoded.headers.get('access-control-allow-origin')).toBe(`http://localhost:${uiPort}`);
      const plain = (decoded.json as { payloads: Array<{ data: string }> }).payloads[0]!;
      expect(JSON.parse(Buffer.from(plain.data, 'base64').toString('utf8'))).toEqual({ ...input, account: 'default' });
    } finally {
      await connection.close();
    }

    process.kill(-started.child.pid!, 'SIGINT');
    await started.exited;
    expect(started.output()).toContain('[codec] Received SIGINT');
    const refused = await fetch(`${codecUrl}/decode`, { method: 'POST', body: '{"payloads":[]}' }).then(
      () => 'answered',
      () => 'refused',
    );
    expect(refused).toBe('refused');
  }, 240_000);
});
