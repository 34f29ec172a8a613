/**
 * shop-receiver/main.ts: flag parsing in-process, and one real child process (start-up line,
 * a signed delivery, secrets never printed, graceful SIGTERM), plus the schema script's flags.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeShipmentEvent } from '../domain/events';
import { closeWebhookDispatcher, deliverWebhook } from '../platforms/webhook/write-back';
import { CLI_DEFAULT_PORT, HELP, parseCli, SECRETS_ENV } from '../shop-receiver/main';
import { waitFor } from './helpers/wait';

const ROOT = path.resolve(__dirname, '..');
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const started: ChildProcess[] = [];

afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await closeWebhookDispatcher();
});

function run(script: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

describe('parseCli', () => {
  it('--help, defaults, and every fault flag', () => {
    expect(parseCli(['--help'], {})).toEqual({ kind: 'help' });
    expect(parseCli(['--secret', secret], {})).toEqual({
      kind: 'run',
      options: { secrets: [secret], host: '127.0.0.1', port: CLI_DEFAULT_PORT, seed: undefined, faults: {} },
    });
    const cmd = parseCli(
      [
        '--secret',
        secret,
        '--port',
        '0',
        '--slow-ms',
        '250',
        '--error-rate',
        '0.2',
        '--rate-limit',
        '2',
        '--gone-shop',
        'beta',
        '--gone-shop',
        'gamma',
        '--seed',
        '7',
      ],
      {},
    );
    expect(cmd).toMatchObject({
      kind: 'run',
      options: {
        port: 0,
        seed: 7,
        faults: { slowMs: 250, errorRate: 0.2, rateLimit: { perSecond: 2, burst: 2 }, gone: ['beta', 'gamma'] },
      },
    });
    expect(parseCli(['--gone'], { [SECRETS_ENV]: `${secret} ${secret}` })).toMatchObject({
      options: { secrets: [secret, secret], faults: { gone: true } },
    });
    for (const flag of [
      '--secret',
      '--port',
      '--slow-ms',
      '--error-rate',
      '--rate-limit',
      '--burst',
      '--gone',
      '--gone-shop',
      '--seed',
      '--help',
    ]) {
      expect(HELP).toContain(flag);
    }
  });

  it('names the bad flag and never echoes a secret', () => {
    const bad: Array<[string[], RegExp]> = [
      [[], /--secret: at least one is required/],
      [['--secret', 'whsec_hunter2hunter2'], /--secret #1: must look like whsec_<base64>/],
      [['--secret', secret, '--port', '70000'], /--port: "70000" is not an integer between 0 and 65535/],
      [['--secret', secret, '--error-rate', '1.5'], /--error-rate/],
      [['--secret', secret, '--burst', '3'], /--burst: only valid together with --rate-limit/],
      [['--secret', secret, '--gone', '--gone-shop', 'x'], /--gone-shop/],
      [['--secret', secret, '--colour'], /--colour/],
    ];
    for (const [args, message] of bad) {
      let error: Error | undefined;
      try {
        parseCli(args, {});
      } catch (e) {
        error = e as Error;
      }
      expect(error?.message).toMatch(message);
      expect(error?.message).not.toContain('hunter2');
      expect(error?.message).not.toContain(secret.slice(6));
    }
  });
});

describe('npm run shop-receiver (child process)', () => {
  it('starts, accepts a signed webhook, prints no secret, and stops on SIGTERM', async () => {
    const r = run('shop-receiver/main.ts', ['--port', '0'], { [SECRETS_ENV]: secret });
    const url = await waitFor(() => /listening on (http:\/\/[^\s]+)/.exec(r.stdout())?.[1], {
      timeoutMs: 20_000,
      what: 'the start-up line',
    });
    const event = makeShipmentEvent({
      shop: 'demo',
      orderId: 'D-1',
      sequence: 1,
      occurredAt: new Date().toISOString(),
      type: 'tracking.updated',
      data: { tag: 'InTransit', subtag: null, subtagMessage: null, trackingNumber: 'T1', lastCheckpoint: null },
    });
    expect(await deliverWebhook({ url: `${url}/webhooks/demo`, secrets: [secret], event })).toEqual({ kind: 'delivered', status: 200 });
    const { orders } = (await (await fetch(`${url}/api/orders`)).json()) as { orders: Array<{ orderId: string; tag: string }> };
    expect(orders).toMatchObject([{ orderId: 'D-1', tag: 'InTransit' }]);
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    expect(r.stdout() + r.stderr()).not.toContain(secret.slice(6));
  });

  it('bad flags exit 2 with the flag named; --help exits 0', async () => {
    const bad = run('shop-receiver/main.ts', ['--secret', 'nope']);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toContain('--secret #1: must look like whsec_<base64>');
    const help = run('shop-receiver/main.ts', ['--help']);
    expect(await help.exited).toBe(0);
    expect(help.stdout()).toBe(HELP);
  });
});

describe('npm run shop-sync:schema', () => {
  it('--check exits 0 for the committed file; --help documents the flags', async () => {
    const check = run('platforms/webhook/event-schema.ts', ['--check']);
    expect(await check.exited).toBe(0);
    const help = run('platforms/webhook/event-schema.ts', ['--help']);
    expect(await help.exited).toBe(0);
    expect(help.stdout()).toContain('--check');
    const bad = run('platforms/webhook/event-schema.ts', ['--bogus']);
    expect(await bad.exited).toBe(2);
  });
});
