/**
 * Settings that could hurt (issue 19, findings 6 and 7): every value from the findings is a
 * ConfigError naming its variable (never a raw ZodError, a stack trace or a worker that starts and
 * then aborts); health and metrics stay on loopback unless told; the courier metric label is a
 * closed set; trace logs need encrypted payloads; plain-http webhooks to other hosts are warned
 * about; the codec server caps the payloads of one request.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  defaultMaxCachedWorkflows,
  loadWorkerSettings,
  maxCachedWorkflowsForHeap,
  parseHostPort,
  workerSettingsHelp,
} from '../config/settings';
import { loadTemporalSettings } from '../config/temporal-connection';
import { loadShopConnectors } from '../platforms/connectors';
import { startCodecServer, MAX_PAYLOADS_PER_REQUEST } from '../codec/server';
import { CourierLabels, courierLabels, watchCourierCodes } from '../metrics/courier-labels';
import { shipmentMetricsInterceptor } from '../metrics/activity-interceptor';
import { registry } from '../metrics/counters';
import { freePort } from '../dev-server/free-port';
import { killWorkerProcesses, spawnWorkerProcess, workerEnv } from './helpers/worker-process';

const BASE = { SHIPPING_API_BASE_URL: 'http://127.0.0.1:4010', SHIPPING_API_KEY: 'k', SHIPPING_API_TOKEN: 't', PAYLOAD_ENCRYPTION: 'off' };
const { PAYLOAD_ENCRYPTION: _off, ...KEYLESS } = BASE;
const KEYS = `k1=${randomBytes(32).toString('base64')}`;

/** The problems of a load that must fail, as `VARIABLE: message` lines. */
function problems(load: () => unknown): string[] {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems.map((p) => `${p.variable}: ${p.message}`);
  }
  throw new Error('the settings were accepted');
}

describe('worker settings with bounds', () => {
  it.each([
    [
      'WORKER_MAX_CACHED_WORKFLOWS',
      '1000000000',
      /^WORKER_MAX_CACHED_WORKFLOWS: must be at most \d+: at about 120 KB each, more do not fit half of this process's \d+ MB heap limit/,
    ],
    ['TRACKING_POLL_INTERVAL', '999999999d', /^TRACKING_POLL_INTERVAL: must be from 100ms to 2147483647ms \(got "999999999d"\)$/],
    ['TRACKING_POLL_INTERVAL', '1ms', /^TRACKING_POLL_INTERVAL: must be from 100ms to/],
    ['TRACKING_POLL_INTERVALS', 'Pending=1ms', /^TRACKING_POLL_INTERVALS: Pending: must be from 100ms/],
    ['SHIPPING_API_TIMEOUT', '99999999999d', /^SHIPPING_API_TIMEOUT: must be from 100ms to 10m/],
    ['TRACKING_MAX_DURATION', '5000d', /^TRACKING_MAX_DURATION: must be from 1s to 365d/],
    ['LABEL_CORRECTION_TIMEOUT', '99999999999d', /^LABEL_CORRECTION_TIMEOUT: must be from 1s to 365d/],
    ['HISTORY_EVENT_LIMIT', '60000', /^HISTORY_EVENT_LIMIT: must be at most 40000/],
    ['WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', '100000', /^WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: must be at most 500/],
    ['WORKER_MAX_CONCURRENT_ACTIVITIES', '1000000', /^WORKER_MAX_CONCURRENT_ACTIVITIES: must be at most 1000/],
    ['WORKER_MAX_ACTIVITIES_PER_SECOND', 'Infinity', /^WORKER_MAX_ACTIVITIES_PER_SECOND: /],
    ['METRICS_BIND_ADDRESS', 'not an address', /^METRICS_BIND_ADDRESS: must be host:port with a port from 1 to 65535/],
    ['METRICS_BIND_ADDRESS', '127.0.0.1:99999', /^METRICS_BIND_ADDRESS: must be host:port/],
    ['WORKER_HEALTH_HOST', 'http://0.0.0.0/', /^WORKER_HEALTH_HOST: must be an IP address or a host name/],
    ['SHIPPING_API_MAX_RESPONSE_BYTES', '1073741824', /^SHIPPING_API_MAX_RESPONSE_BYTES: must be at most 268435456 \(256 MiB\)$/],
    ['SHIPPING_API_MAX_RESPONSE_BYTES', '1000', /^SHIPPING_API_MAX_RESPONSE_BYTES: must be at least 65536 \(64 KiB\)$/],
    ['SHIPPING_API_429_NOISE', 'maybe', /^SHIPPING_API_429_NOISE: must be learn or off/],
    ['SHIPPING_API_PACE_SHARES', 'account', /^SHIPPING_API_PACE_SHARES: must be fleet or worker/],
  ])('%s=%s is a configuration error naming it', (variable, value, message) => {
    expect(problems(() => loadWorkerSettings({ ...BASE, [variable]: value }))).toEqual([expect.stringMatching(message)]);
  });

  it('accepts the values at the bounds and keeps health on loopback by default', () => {
    const settings = loadWorkerSettings({
      ...BASE,
      TRACKING_POLL_INTERVAL: '100ms',
      SHIPPING_API_TIMEOUT: '10m',
      TRACKING_MAX_DURATION: '365d',
      WORKER_MAX_CACHED_WORKFLOWS: String(maxCachedWorkflowsForHeap()),
      WORKER_HEALTH_PORT: '8080',
      METRICS_BIND_ADDRESS: '[::1]:9464',
    });
    expect(settings.tracking.pollIntervalMs).toBe(100);
    expect(settings.health).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(settings.pacing.noise).toBe('learn');
    expect(loadWorkerSettings({ ...BASE, SHIPPING_API_429_NOISE: 'off' }).pacing.noise).toBe('off');
    // One rate per account for the fleet by default: maxRequestsPerSecond is the account's.
    expect(settings.pacing.shares).toBe('fleet');
    expect(loadWorkerSettings({ ...BASE, SHIPPING_API_PACE_SHARES: 'worker' }).pacing.shares).toBe('worker');
  });

  it('sizes the default workflow cache from its memory budget at the measured cost of a place, not from the heap', () => {
    // Half the Dockerfile's 1.5 GB heap at 120 KB a place (20 KB, the old guess, allowed 39,321).
    expect(maxCachedWorkflowsForHeap(1536 * 2 ** 20)).toBe(6553);
    // Measured: a cache place costs the worker about 480 KB of RSS in all (heap, the SDK core's
    // state, the allocator's); the cache's share of a default worker's goal (500 MB settled at
    // 10,000 in tracking) is 120 MiB.
    const cache = loadWorkerSettings(BASE).maxCachedWorkflows;
    expect(cache * 480 * 1024).toBeLessThanOrEqual(120 * 2 ** 20);
    expect(cache).toBe(defaultMaxCachedWorkflows());
    expect(cache).toBe(256);
    // Whatever heap Node gives: the default is the budget's, the heap only bounds what may be set.
    expect(defaultMaxCachedWorkflows(120 * 2 ** 20, 480 * 1024)).toBe(cache);
    // Counted at the heap's 120 KB a place alone, the same budget would have taken four times as many.
    expect(defaultMaxCachedWorkflows(120 * 2 ** 20, 120 * 1024)).toBe(1024);
    expect(loadWorkerSettings({ ...BASE, WORKER_MAX_CACHED_WORKFLOWS: '2000' }).maxCachedWorkflows).toBe(2000);
  });

  it('refuses TEMPORAL_ADDRESS with a port beyond 65535', () => {
    expect(problems(() => loadTemporalSettings({ TEMPORAL_ADDRESS: 'localhost:99999' }))).toEqual([
      expect.stringMatching(/^TEMPORAL_ADDRESS: must be host:port without a scheme, with a port from 1 to 65535/),
    ]);
    expect(parseHostPort('localhost:0')).toBeUndefined();
    expect(parseHostPort('temporal:7233')).toEqual({ host: 'temporal', port: 7233 });
  });

  it('allows trace logging only with encrypted payloads (the SDK logs every payload at trace)', () => {
    expect(problems(() => loadWorkerSettings({ ...BASE, LOG_LEVEL: 'trace' }))).toEqual([
      expect.stringMatching(/^LOG_LEVEL: trace logs every workflow and activity payload .* only with PAYLOAD_ENCRYPTION_KEYS/),
    ]);
    expect(loadWorkerSettings({ ...KEYLESS, LOG_LEVEL: 'trace', PAYLOAD_ENCRYPTION_KEYS: KEYS }).logLevel).toBe('trace');
  });

  it('refuses to run without payload keys unless told PAYLOAD_ENCRYPTION=off, naming the setting', () => {
    expect(problems(() => loadWorkerSettings(KEYLESS))).toEqual([
      expect.stringMatching(
        /^PAYLOAD_ENCRYPTION_KEYS_FILE: is not set \(nor PAYLOAD_ENCRYPTION_KEYS\): the worker would store names.* PAYLOAD_ENCRYPTION=off$/,
      ),
    ]);
    expect(loadWorkerSettings(BASE).payloadEncryption).toBeUndefined();
    expect(loadWorkerSettings({ ...KEYLESS, PAYLOAD_ENCRYPTION_KEYS: KEYS }).payloadEncryption?.activeKeyId).toBe('k1');
    expect(problems(() => loadWorkerSettings({ ...BASE, PAYLOAD_ENCRYPTION_KEYS: KEYS }))).toEqual([
      'PAYLOAD_ENCRYPTION: is off but PAYLOAD_ENCRYPTION_KEYS(_FILE) is set: drop one',
    ]);
  });
});

describe('shop connectors', () => {
  const connector = (url: string, timeout = '15s') =>
    JSON.stringify({ acme: { type: 'webhook', url, secrets: [`whsec_${'a'.repeat(32)}`], timeout } });

  it('refuses a timeout beyond 10 minutes (30d failed every delivery within 30 ms) and bounds the window and backoff', () => {
    expect(problems(() => loadShopConnectors({ SHOP_CONNECTORS: connector('https://acme.example/h', '30d') }))).toEqual([
      'SHOP_CONNECTORS.acme.timeout: must be from 100ms to 10m (got "30d")',
    ]);
    const windowed = JSON.stringify({ deliveryWindow: '9999d', maxBackoff: '30d' });
    expect(problems(() => loadShopConnectors({ SHOP_CONNECTORS: windowed }))).toEqual([
      'SHOP_CONNECTORS.deliveryWindow: must be from 1s to 365d (got "9999d")',
      'SHOP_CONNECTORS.maxBackoff: must be from 1s to 1d (got "30d")',
    ]);
  });

  it('warns about plain http:// to a host that is not loopback', () => {
    expect(loadShopConnectors({ SHOP_CONNECTORS: connector('http://shop.example/hooks') }).warnings).toEqual([
      'SHOP_CONNECTORS.acme.url: plain http:// to shop.example: shipment events (names, tracking) travel unencrypted; use https://',
    ]);
    for (const url of ['https://shop.example/h', 'http://127.0.0.1:8090/h', 'http://localhost:8090/h', 'http://[::1]:8090/h']) {
      expect(loadShopConnectors({ SHOP_CONNECTORS: connector(url) }).warnings).toEqual([]);
    }
  });
});

describe('the worker process', () => {
  afterAll(() => killWorkerProcesses());
  const env = () => workerEnv('127.0.0.1:1', 'q', BASE.SHIPPING_API_BASE_URL);

  it(
    'exits 2 with one line naming the setting when the health address cannot be bound (was a stack trace)',
    { timeout: 60_000 },
    async () => {
      const port = await freePort();
      const worker = spawnWorkerProcess({ ...env(), WORKER_HEALTH_PORT: String(port), WORKER_HEALTH_HOST: '192.0.2.1' });
      expect(await worker.exited).toBe(2);
      expect(worker.output()).toContain(`WORKER_HEALTH_HOST/WORKER_HEALTH_PORT: cannot listen on 192.0.2.1:${port}: EADDRNOTAVAIL`);
      expect(worker.output()).not.toMatch(/\n\s+at /);
    },
  );

  it('exits 2 with one line naming METRICS_BIND_ADDRESS when the SDK cannot serve metrics there', { timeout: 60_000 }, async () => {
    const worker = spawnWorkerProcess({ ...env(), METRICS_BIND_ADDRESS: '192.0.2.1:9464' });
    expect(await worker.exited).toBe(2);
    expect(worker.output()).toContain("METRICS_BIND_ADDRESS: cannot serve the SDK's metrics on 192.0.2.1:9464");
    expect(worker.output()).not.toMatch(/\n\s+at /);
  });

  it(
    'exits 2 before "worker started" without payload keys, naming the setting and the way to run in clear',
    { timeout: 60_000 },
    async () => {
      const worker = spawnWorkerProcess({ ...env(), PAYLOAD_ENCRYPTION: '' });
      expect(await worker.exited).toBe(2);
      expect(worker.output()).toContain('PAYLOAD_ENCRYPTION_KEYS_FILE: is not set (nor PAYLOAD_ENCRYPTION_KEYS): the worker would store');
      expect(worker.output()).toContain('PAYLOAD_ENCRYPTION=off');
      expect(worker.output()).not.toContain('worker started');
      expect(worker.output()).not.toMatch(/\n\s+at /);
    },
  );

  it('exits 2 before "worker started" for a cache that cannot fit', { timeout: 60_000 }, async () => {
    const worker = spawnWorkerProcess({ ...env(), WORKER_MAX_CACHED_WORKFLOWS: '1000000000' });
    expect(await worker.exited).toBe(2);
    expect(worker.output()).toMatch(/WORKER_MAX_CACHED_WORKFLOWS: must be at most/);
    expect(worker.output()).not.toContain('worker started');
  });
});

describe('the courier metric label', () => {
  it('is the courier code when the account lists it, else other (a name, e-mail and phone were a label)', async () => {
    courierLabels.replace([{ code: 'dhl-express', name: 'DHL Express' }]);
    const pii = 'Jane Doe jane@example.com +49 30 1234567';
    for (const courier of ['dhl-express', pii]) {
      const interceptor = shipmentMetricsInterceptor(['Delivered'])({ info: { activityType: 'createLabel' } } as never);
      await interceptor.inbound!.execute!({ args: [{ labelRequest: { courier } }], headers: {} }, async () => ({}));
    }
    const text = await registry.metrics();
    expect(text).toContain('shipping_labels_created_total{courier="dhl-express"} 1');
    expect(text).toContain('shipping_labels_created_total{courier="other"} 1');
    expect(text).not.toContain('jane');
  });

  it('is read from GET /couriers, keeps codes only, and survives a failed read', async () => {
    const labels = new CourierLabels();
    const warnings: string[] = [];
    let answer: () => Promise<Array<{ code: string; name: string }>> = async () => [
      { code: 'ups', name: 'UPS' },
      { code: 'not a code!', name: 'x' },
    ];
    const watch = watchCourierCodes(
      () => answer(),
      (m) => warnings.push(m),
      labels,
    );
    await new Promise((r) => setImmediate(r));
    expect([labels.label('ups'), labels.label('not a code!'), labels.label(42)]).toEqual(['ups', 'other', 'other']);
    answer = async () => {
      throw new Error('down');
    };
    watchCourierCodes(
      () => answer(),
      (m) => warnings.push(m),
      labels,
    ).close();
    await new Promise((r) => setImmediate(r));
    expect(labels.label('ups')).toBe('ups');
    expect(warnings).toEqual([expect.stringMatching(/cannot read GET \/couriers/)]);
    watch.close();
  });
});

describe('the codec server', () => {
  it(`answers 413 to more than ${MAX_PAYLOADS_PER_REQUEST} payloads in one request (4 million took 206 s and 5.7 GB)`, async () => {
    const { loadCodecServerSettings } = await import('../config/settings');
    const server = await startCodecServer(loadCodecServerSettings({ PAYLOAD_ENCRYPTION_KEYS: KEYS, CODEC_SERVER_TOKEN: 'x'.repeat(32) }));
    try {
      const post = (count: number) =>
        fetch(`${server.url}/decode`, {
          method: 'POST',
          headers: { authorization: `Bearer ${'x'.repeat(32)}`, 'content-type': 'application/json' },
          body: `{"payloads":[${Array(count).fill('{}').join(',')}]}`,
        });
      const began = Date.now();
      const flood = await post(4_000_000);
      expect(flood.status).toBe(413);
      expect(await flood.json()).toEqual({ error: `4000000 payloads in one request; at most ${MAX_PAYLOADS_PER_REQUEST}` });
      expect(Date.now() - began).toBeLessThan(20_000);
      expect((await post(MAX_PAYLOADS_PER_REQUEST)).status).toBe(200);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('npm run worker -- --help', () => {
  it('lists every setting with its default (or that it is required) and its meaning, from the schema', () => {
    const help = workerSettingsHelp();
    const lines = help.split('\n');
    expect(lines.find((l) => l.trim().startsWith('SHIPPING_API_KEY'))).toMatch(/x-rr-apikey.*\(required\)$/);
    expect(lines.find((l) => l.trim().startsWith('TRACKING_POLL_INTERVAL '))).toMatch(/\(default 3h\)$/);
    expect(lines.find((l) => l.trim().startsWith('TRACKING_POLL_INTERVALS'))).toContain('NotRegistered=2h');
    expect(lines.find((l) => l.trim().startsWith('WORKER_HEALTH_PORT'))).toMatch(/\(unset\)$/);
    // Every variable the worker reads is there, each with words after its name.
    for (const line of lines) expect(line).toMatch(/^ {2}[A-Z0-9_]+ +\S.* \([^)]+\)$/);
    expect(lines.length).toBeGreaterThanOrEqual(27);
  });
});
