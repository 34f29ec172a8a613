/**
 * fake-shipping-api/main.ts as a real child process: start-up line, calls through the client,
 * extra accounts, secrets never printed, --help, bad flags (exit 2), graceful SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ShippingApiClient } from '../shipping-api/client';
import { parseCli } from '../fake-shipping-api/main';
import { sampleLabelRequest, shippingError } from './helpers/api';
import { waitFor } from './helpers/wait';

const ROOT = path.resolve(__dirname, '..');
const MAIN = path.join(ROOT, 'fake-shipping-api', 'main.ts');
const FLAGS = [
  '--host',
  '--port',
  '--tracking-step-ms',
  '--reject-postal-code',
  '--seed',
  '--rate-limit',
  '--burst',
  '--rate-limiter',
  '--error-rate',
  '--latency-ms',
  '--hang-rate',
  '--malformed-rate',
  '--rate-limited-rate',
  '--retry-after',
  '--lost-answer-rate',
  '--fault-endpoint',
  '--extra-account',
  '--help',
];

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: ChildProcess[] = [];

function run(args: string[], env: Record<string, string | undefined> = {}): Run {
  const fullEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete fullEnv[k];
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: ROOT, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

// Each test starts a process through tsx (~0.5-2 s); the timeout is a ceiling, not the expectation.
describe('fake-api command line', { timeout: 20_000 }, () => {
  it('starts, prints its base URL, serves the client, keeps secrets out of the output, stops on SIGTERM', async () => {
    const secrets = { SHIPPING_API_KEY: 'sk-live-7f3a9c', SHIPPING_API_TOKEN: 'tok-live-91be44' };
    const proc = run(['--port', '0', '--tracking-step-ms', '0', '--extra-account', 'rival:rival-key:rival:token'], secrets);
    const baseUrl = await waitFor(() => /Fake shipping API listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(proc.stdout())?.[1], {
      timeoutMs: 8_000,
      what: `the start-up line (stderr: ${proc.stderr()})`,
    });

    const client = new ShippingApiClient({ baseUrl, apiKey: secrets.SHIPPING_API_KEY, apiToken: secrets.SHIPPING_API_TOKEN });
    const rival = new ShippingApiClient({ baseUrl, apiKey: 'rival-key', apiToken: 'rival:token' });
    try {
      expect((await client.listCouriers()).length).toBeGreaterThan(0);
      const label = await client.createLabel(sampleLabelRequest());
      expect((await client.getTracking(label.id)).tag).toBe('Delivered');
      expect((await shippingError(rival.getOrder(label.id))).kind).toBe('forbidden');
      const dev = new ShippingApiClient({ baseUrl, apiKey: 'dev-api-key', apiToken: 'dev-api-token' });
      expect((await shippingError(dev.listCouriers())).kind).toBe('unauthorized');
      await dev.close();
    } finally {
      await client.close();
      await rival.close();
    }

    proc.child.kill('SIGTERM');
    const exit = await proc.exited;
    expect(exit.code).toBe(0);
    const output = proc.stdout() + proc.stderr();
    expect(output).not.toContain(secrets.SHIPPING_API_KEY);
    expect(output).not.toContain(secrets.SHIPPING_API_TOKEN);
    expect(output).not.toContain('rival:token');
    expect(proc.stderr()).toMatch(/SIGTERM/);
  });

  it('notes the fallback to the dev credentials', async () => {
    const proc = run(['--port', '0'], { SHIPPING_API_KEY: undefined, SHIPPING_API_TOKEN: undefined });
    const baseUrl = await waitFor(() => /listening on (\S+)/.exec(proc.stdout())?.[1], { timeoutMs: 8_000 });
    expect(proc.stderr()).toMatch(/dev-api-key/);
    const dev = new ShippingApiClient({ baseUrl, apiKey: 'dev-api-key', apiToken: 'dev-api-token' });
    expect(await dev.listCouriers()).toHaveLength(4);
    await dev.close();
    proc.child.kill('SIGINT');
    expect((await proc.exited).code).toBe(0);
  });

  it('--help lists every flag and exits 0', async () => {
    const proc = run(['--help']);
    expect((await proc.exited).code).toBe(0);
    for (const flag of FLAGS) expect(proc.stdout()).toContain(flag);
    expect(proc.stdout()).toContain('default 4010');
  });

  it('a bad flag value exits 2 naming the flag', async () => {
    const proc = run(['--error-rate', '1.5']);
    expect((await proc.exited).code).toBe(2);
    expect(proc.stderr()).toContain('--error-rate');
    expect(proc.stdout()).not.toContain('listening');
    const unknown = run(['--frobnicate']);
    expect((await unknown.exited).code).toBe(2);
    expect(unknown.stderr()).toContain('--frobnicate');
  });
});

describe('flag parsing', () => {
  it('maps every flag onto the options', () => {
    const command = parseCli(
      [
        '--host',
        '0.0.0.0',
        '--port',
        '5000',
        '--tracking-step-ms',
        '250',
        '--reject-postal-code',
        '11111',
        '--reject-postal-code',
        '22222',
        '--seed',
        '9',
        '--rate-limit',
        '2.5',
        '--error-rate',
        '0.1',
        '--latency-ms',
        '20',
        '--hang-rate',
        '0.05',
        '--malformed-rate',
        '0.2',
        '--rate-limited-rate',
        '0.1',
        '--retry-after',
        '1-5',
        '--lost-answer-rate',
        '0.03',
        '--fault-endpoint',
        'POST /labels',
        '--fault-endpoint',
        'get /tracking/{id}',
        '--extra-account',
        'b:kb:tb',
      ],
      { SHIPPING_API_KEY: 'k', SHIPPING_API_TOKEN: 't' },
    );
    expect(command).toEqual({
      kind: 'run',
      extraAccountNames: ['b'],
      options: {
        host: '0.0.0.0',
        port: 5000,
        trackingStepMs: 250,
        rejectPostalCodes: ['11111', '22222'],
        seed: 9,
        accounts: [
          { name: 'default', apiKey: 'k', apiToken: 't' },
          { name: 'b', apiKey: 'kb', apiToken: 'tb' },
        ],
        faults: {
          rateLimit: { perSecond: 2.5, burst: 3 },
          rateLimitedRate: 0.1,
          rateLimitedRetryAfter: { minSeconds: 1, maxSeconds: 5 },
          serverErrorRate: 0.1,
          latencyMs: 20,
          hangRate: 0.05,
          malformedRate: 0.2,
          lostAnswerRate: 0.03,
          endpoints: ['POST /labels', 'GET /tracking'],
        },
      },
    });
    expect(parseCli([], {})).toMatchObject({ kind: 'run', options: { port: 4010, host: '127.0.0.1' } });
    expect(parseCli(['--retry-after', '3'], {})).toMatchObject({
      options: { faults: { rateLimitedRetryAfter: { minSeconds: 3, maxSeconds: 3 } } },
    });
    expect(parseCli(['--rate-limit', '4', '--rate-limiter', 'window'], {})).toMatchObject({
      options: { faults: { rateLimit: { perSecond: 4, kind: 'window' } } },
    });
    expect(parseCli(['--rate-limit', '4', '--rate-limiter', 'bucket'], {})).toMatchObject({
      options: { faults: { rateLimit: { perSecond: 4, burst: 4 } } },
    });
  });

  it.each([
    [['--port', '70000'], '--port'],
    [['--port', 'abc'], '--port'],
    [['--tracking-step-ms', '-5'], '--tracking-step-ms'],
    [['--seed', '1.5'], '--seed'],
    [['--rate-limit', '0'], '--rate-limit'],
    [['--burst', '3'], '--burst'],
    [['--rate-limit', '5', '--burst', '0'], '--burst'],
    [['--rate-limiter', 'window'], '--rate-limiter'],
    [['--rate-limit', '5', '--rate-limiter', 'leaky'], '--rate-limiter'],
    [['--rate-limit', '2.5', '--rate-limiter', 'window'], '--rate-limit'],
    [['--rate-limit', '5', '--burst', '5', '--rate-limiter', 'window'], '--burst'],
    [['--hang-rate', 'often'], '--hang-rate'],
    [['--malformed-rate', '-0.1'], '--malformed-rate'],
    [['--latency-ms', ''], '--latency-ms'],
    [['--fault-endpoint', 'GET /nowhere'], '--fault-endpoint'],
    [['--extra-account', 'only-a-name'], '--extra-account'],
    [['--extra-account', 'default:x:y'], '--extra-account'],
    [['--port'], '--port'],
    [['--rate-limited-rate', '1.1'], '--rate-limited-rate'],
    [['--retry-after', '5-2'], '--retry-after'],
    [['--retry-after', '1-2-3'], '--retry-after'],
    [['--retry-after', 'soon'], '--retry-after'],
    [['--lost-answer-rate', 'x'], '--lost-answer-rate'],
  ])('%j is rejected naming %s', (args, flag) => {
    expect(() => parseCli(args, {})).toThrow(flag);
  });
});
