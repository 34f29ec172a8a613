/**
 * Shipping accounts without Temporal: the settings file (accounts, shops, default account, the
 * SHIPPING_API_* account), the client's two schemes against the fake's accounts (each with its
 * own credentials, limit and labels), and rotation of file credentials: re-read when a file
 * changes and once on a 401, in-flight calls keep theirs, no credential in an error text.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { accountCalls, singleAccount, UNKNOWN_ACCOUNT, UNKNOWN_ACCOUNT_RETRY_MS } from '../shipping-accounts/directory';
import { ConfigError, loadWorkerSettings } from '../config/settings';
import { loadShippingAccounts, openAccountClient } from '../config/shipping-accounts';
import { startFakeShippingApi, type FakeShippingApi } from '../fake-shipping-api/server';
import { ShippingApiClient } from '../shipping-api/client';
import { credentialsFrom, fixedCredentials } from '../shipping-api/credentials';
import { ShippingApiError } from '../shipping-api/errors';
import { labelRequest } from './helpers/orders';

const tmp = mkdtempSync(path.join(tmpdir(), 'accounts-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = path.join(tmp, name);
  writeFileSync(file, text);
  return file;
}

/** Replaces a file the way a secret mount or `mv` does: a new inode under the same name. */
function replace(file: string, text: string): void {
  writeFileSync(`${file}.new`, text);
  renameSync(`${file}.new`, file);
}

function problems(load: () => unknown): string[] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.variable}: ${p.message}`);
    throw err;
  }
  return [];
}

const BASE = { SHIPPING_API_BASE_URL: 'http://127.0.0.1:1', SHIPPING_API_KEY: 'key-default', SHIPPING_API_TOKEN: 'token-default' };

describe('the accounts settings', () => {
  it('keeps a single-account setup as it was: the account "default" from SHIPPING_API_*, every shop on it', () => {
    const accounts = loadShippingAccounts(BASE);
    expect(accounts.names).toEqual(['default']);
    expect(accounts.accountOf('any-shop')).toEqual({ account: 'default' });
    expect(JSON.stringify(accounts.get('default'))).not.toContain('key-default');
  });

  it('names accounts, maps shops, and falls back to defaultAccount; relative files from the file’s folder', () => {
    write('sandbox-key', 'sb-key\n');
    write('sandbox-token', 'sb-token\n');
    const file = write(
      'accounts.json',
      JSON.stringify({
        accounts: {
          sandbox: { baseUrl: 'http://127.0.0.1:2', apiKeyFile: 'sandbox-key', apiTokenFile: 'sandbox-token', maxRequestsPerSecond: 5 },
          production: { baseUrl: 'https://api.example', auth: 'bearer', accessToken: 'prod-access-token', shipperAccountId: 'SA-1' },
        },
        shops: { 'oslo-outdoor': 'production', 'porto-wines': 'sandbox' },
        defaultAccount: 'sandbox',
      }),
    );
    const accounts = loadShippingAccounts({ SHIPPING_ACCOUNTS_FILE: file }, { mode: 'adaptive', noise: 'learn' });
    expect(accounts.names).toEqual(['production', 'sandbox']);
    expect(accounts.accountOf('oslo-outdoor')).toEqual({ account: 'production' });
    expect(accounts.accountOf('lyon-ceramics')).toEqual({ account: 'sandbox' });
    expect(accounts.get('sandbox')!.pacing).toEqual({ mode: 'adaptive', noise: 'learn', maxRequestsPerSecond: 5 });
    expect(accounts.get('production')!.auth).toBe('bearer');
    // The worker needs no SHIPPING_API_* then, and a shop outside the map has no account without a default.
    expect(() => loadWorkerSettings({ SHIPPING_ACCOUNTS_FILE: file, PAYLOAD_ENCRYPTION: 'off' })).not.toThrow();
    const noDefault = loadShippingAccounts({
      SHIPPING_ACCOUNTS: JSON.stringify({ accounts: { a: { baseUrl: 'http://x', apiKey: 'k1', apiToken: 't1' } } }),
    });
    expect(noDefault.accountOf('lost')).toEqual({ problem: expect.stringContaining('shop lost has no shipping account') });
  });

  it('names each bad setting by its path, never a credential', () => {
    const found = problems(() =>
      loadShippingAccounts({
        ...BASE,
        SHIPPING_ACCOUNTS: JSON.stringify({
          accounts: {
            default: { baseUrl: 'http://x', apiKey: 'kk', apiToken: 'tt' },
            a: { baseUrl: 'ftp://x', apiKey: 'secret-key-1', apiToken: 'tok en' },
            b: { baseUrl: 'http://x', auth: 'bearer', accessToken: 'secret-token-2' },
            c: { baseUrl: 'http://x', apiKeyFile: path.join(tmp, 'missing'), apiToken: 't', colour: 'red' },
          },
          shops: { s1: 'nowhere' },
          defaultAccount: 'gone',
        }),
      }),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'SHIPPING_ACCOUNTS.accounts.default: is the account SHIPPING_API_BASE_URL defines: name this one otherwise',
        expect.stringMatching(/^SHIPPING_ACCOUNTS\.accounts\.a\.baseUrl: must be an http\(s\) URL/),
        'SHIPPING_ACCOUNTS.accounts.c.colour: unknown field',
        'SHIPPING_ACCOUNTS.shops.s1: names account "nowhere", which is not configured',
        'SHIPPING_ACCOUNTS.defaultAccount: names account "gone", which is not configured',
      ]),
    );
    const again = problems(() =>
      loadShippingAccounts({
        SHIPPING_ACCOUNTS: JSON.stringify({
          accounts: {
            a: { baseUrl: 'http://x', apiKey: 'secret-key-1', apiToken: 'tok en' },
            b: { baseUrl: 'http://x', auth: 'bearer', accessToken: 'secret-token-2' },
            c: { baseUrl: 'http://x', apiKeyFile: path.join(tmp, 'missing'), apiToken: 'tttt' },
          },
        }),
      }),
    );
    expect(again).toEqual([
      'SHIPPING_ACCOUNTS.accounts.a.apiToken: holds a space, a line break or a character that is not visible ASCII',
      'SHIPPING_ACCOUNTS.accounts.b.shipperAccountId: is required with "auth": "bearer" (the spec puts it in service.shipperAccountId)',
      `SHIPPING_ACCOUNTS.accounts.c.apiKeyFile: cannot read ${path.join(tmp, 'missing')}: ENOENT`,
    ]);
    expect([...found, ...again].join('\n')).not.toMatch(/secret-key-1|secret-token-2|tok en/);
  });

  it('takes the default account’s key and token from files too, not both forms', () => {
    const key = write('default-key', 'file-key\n');
    expect(loadShippingAccounts({ ...BASE, SHIPPING_API_KEY: '', SHIPPING_API_KEY_FILE: key }).names).toEqual(['default']);
    expect(problems(() => loadShippingAccounts({ ...BASE, SHIPPING_API_KEY_FILE: key }))).toEqual([
      'SHIPPING_API_KEY: set either SHIPPING_API_KEY or SHIPPING_API_KEY_FILE, not both',
    ]);
    expect(problems(() => loadShippingAccounts({ SHIPPING_API_BASE_URL: BASE.SHIPPING_API_BASE_URL }))).toEqual([
      'SHIPPING_API_KEY: is required',
      'SHIPPING_API_TOKEN: is required',
    ]);
  });
});

describe('a worker asked for an account it does not have', () => {
  it('retries the call every minute, naming the account and the setting, instead of failing the shipment', () => {
    const api = new ShippingApiClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiToken: 't' });
    const directory = singleAccount(api);
    expect(accountCalls(directory, undefined).api).toBe(api); // a shipment that names none: `default`
    let failure: unknown;
    try {
      accountCalls(directory, 'production');
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: UNKNOWN_ACCOUNT,
      nonRetryable: false,
      nextRetryDelay: UNKNOWN_ACCOUNT_RETRY_MS,
      message: 'this worker has no shipping account "production" (it has: default); add it to SHIPPING_ACCOUNTS',
    });
  });
});

describe('accounts on the fake', () => {
  let fake: FakeShippingApi;
  beforeAll(async () => {
    fake = await startFakeShippingApi({
      accounts: [
        { name: 'slow', apiKey: 'key-slow', apiToken: 'token-slow', rateLimit: { perSecond: 1, burst: 2 } },
        { name: 'fast', apiKey: 'key-fast', apiToken: 'token-fast' },
        { name: 'bearer', auth: 'bearer', accessToken: 'access-bearer', shipperAccountId: 'SA-7' },
      ],
    });
  });
  afterAll(() => fake.close());

  let fastLabel = '';
  const headers = (apiKey: string, apiToken: string) =>
    new ShippingApiClient({ baseUrl: fake.baseUrl, credentials: fixedCredentials({ scheme: 'headers', apiKey, apiToken }) });

  it('limits each account by its own bucket, and keeps each account’s labels apart', async () => {
    const slow = headers('key-slow', 'token-slow');
    const fast = headers('key-fast', 'token-fast');
    await slow.listCouriers();
    await slow.listCouriers();
    await expect(slow.listCouriers()).rejects.toMatchObject({ kind: 'rate_limited' });
    for (let i = 0; i < 10; i++) await fast.listCouriers(); // no limit of its own, none of the fake's
    const label = await fast.createLabel({ ...labelRequest('F-1'), idempotencyKey: 'k-F-1' });
    fastLabel = label.id;
    expect(fake.labels().find((l) => l.id === label.id)?.account).toBe('fast');
    await Promise.all([slow.close(), fast.close()]);
  });

  it('serves a Bearer account only with its token, and wants service.shipperAccountId, which the client adds', async () => {
    const bearer = new ShippingApiClient({
      baseUrl: fake.baseUrl,
      credentials: fixedCredentials({ scheme: 'bearer', accessToken: 'access-bearer', shipperAccountId: 'SA-7' }),
    });
    const label = await bearer.createLabel({ ...labelRequest('B-1'), idempotencyKey: 'k-B-1' });
    expect(fake.labels().find((l) => l.id === label.id)?.account).toBe('bearer');
    await expect(bearer.getOrder(fastLabel)).rejects.toMatchObject({ kind: 'forbidden' }); // another account's label
    const wrongAccount = new ShippingApiClient({
      baseUrl: fake.baseUrl,
      credentials: fixedCredentials({ scheme: 'bearer', accessToken: 'access-bearer', shipperAccountId: 'SA-8' }),
    });
    await expect(wrongAccount.createLabel({ ...labelRequest('B-2'), idempotencyKey: 'k-B-2' })).rejects.toMatchObject({
      kind: 'forbidden',
    });
    // The two-header scheme with the token as key is not the Bearer account.
    await expect(headers('access-bearer', 'access-bearer').listCouriers()).rejects.toMatchObject({ kind: 'unauthorized' });
    const raw = await fetch(`${fake.baseUrl}/labels`, {
      method: 'POST',
      headers: { authorization: 'Bearer access-bearer', 'content-type': 'application/json' },
      body: JSON.stringify({ ...labelRequest('B-3'), idempotencyKey: 'k-B-3' }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ details: [{ field: 'service.shipperAccountId' }] });
    await Promise.all([bearer.close(), wrongAccount.close()]);
  });

  it('refuses rotated-out credentials from the moment of the rotation; lists accounts without a credential', async () => {
    const before = headers('key-fast', 'token-fast');
    await before.listCouriers();
    fake.rotateCredentials('fast', { apiKey: 'key-fast-2', apiToken: 'token-fast-2' });
    await expect(before.listCouriers()).rejects.toMatchObject({ kind: 'unauthorized' });
    await headers('key-fast-2', 'token-fast-2').listCouriers();
    const listed = await (await fetch(`${fake.baseUrl}/__admin/accounts`)).text();
    expect(listed).toContain('"bearer"');
    expect(listed).not.toMatch(/key-|token-|access-/);
    await before.close();
  });
});

describe('rotation of file credentials', () => {
  let fake: FakeShippingApi;
  beforeAll(async () => {
    fake = await startFakeShippingApi({ accounts: [{ name: 'rot', apiKey: 'key-old-111', apiToken: 'token-old-111' }] });
  });
  afterAll(() => fake.close());

  it('uses replaced files from the next call: nothing refused', async () => {
    const keyFile = write('rot-key', 'key-old-111\n');
    const tokenFile = write('rot-token', 'token-old-111\n');
    const reloads: string[][] = [];
    const accounts = loadShippingAccounts({
      SHIPPING_ACCOUNTS: JSON.stringify({ accounts: { rot: { baseUrl: fake.baseUrl, apiKeyFile: keyFile, apiTokenFile: tokenFile } } }),
    });
    const api = await openAccountClient(accounts.get('rot')!, { onReload: ({ files }) => reloads.push(files) });
    await api.listCouriers();
    replace(keyFile, 'key-new-222\n');
    replace(tokenFile, 'token-new-222\n');
    fake.rotateCredentials('rot', { apiKey: 'key-new-222', apiToken: 'token-new-222' });
    await api.listCouriers();
    expect(reloads).toEqual([[keyFile, tokenFile]]);
    expect(fake.requestLog().filter((r) => r.status === 401)).toEqual([]);
    await api.close();
  });

  it('keeps the last good credentials while a file is half-written', async () => {
    fake.rotateCredentials('rot', { apiKey: 'key-old-111', apiToken: 'token-old-111' });
    const keyFile = write('half-key', 'key-old-111\n');
    const tokenFile = write('half-token', 'token-old-111\n');
    const problems: string[] = [];
    const source = await credentialsFrom(
      { scheme: 'headers', apiKey: { file: keyFile }, apiToken: { file: tokenFile } },
      { onReload: ({ problem }) => void (problem && problems.push(problem)) },
    );
    const client = new ShippingApiClient({ baseUrl: fake.baseUrl, credentials: source });
    replace(keyFile, '');
    await client.listCouriers(); // the empty file is not used: the old key still works
    expect(problems).toEqual([`${keyFile}: the credential is empty`]);
    await client.close();
  });

  describe('against a service that rotates while a call is out, and echoes what it refuses', () => {
    let server: Server;
    let baseUrl: string;
    const keyFile = path.join(tmp, 'race-key');
    const tokenFile = path.join(tmp, 'race-token');
    const refused: string[] = [];
    beforeAll(async () => {
      server = createServer((req, res) => {
        const key = req.headers['x-rr-apikey'];
        res.setHeader('content-type', 'application/json');
        if (key === 'key-new-444') return res.end(JSON.stringify({ couriers: [] }));
        refused.push(String(key));
        // The operator replaced the files while this call was out: it is refused, echoing the key.
        if (key === 'key-old-333') {
          replace(keyFile, 'key-new-444\n');
          replace(tokenFile, 'token-new-444\n');
        }
        res.statusCode = 401;
        res.end(JSON.stringify({ error: `Unauthorized: unknown key ${String(key)}`, code: `BAD_KEY_${String(key)}` }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('reads the files again once on a 401 and makes the call with the new credentials before it fails', async () => {
      write('race-key', 'key-old-333\n');
      write('race-token', 'token-old-333\n');
      const source = await credentialsFrom({ scheme: 'headers', apiKey: { file: keyFile }, apiToken: { file: tokenFile } });
      const client = new ShippingApiClient({ baseUrl, credentials: source });
      await expect(client.listCouriers()).resolves.toEqual([]);
      expect(refused).toEqual(['key-old-333']);
      await client.close();
    });

    it('fails a 401 that new files do not answer, with every credential it ever held redacted', async () => {
      replace(keyFile, 'key-unknown-555\n');
      const source = await credentialsFrom({ scheme: 'headers', apiKey: { file: keyFile }, apiToken: { file: tokenFile } });
      const client = new ShippingApiClient({ baseUrl, credentials: source });
      const err = (await client.listCouriers().catch((e: unknown) => e)) as ShippingApiError;
      expect(err).toBeInstanceOf(ShippingApiError);
      expect(err.kind).toBe('unauthorized');
      expect(refused.at(-1)).toBe('key-unknown-555');
      const text = JSON.stringify({ ...err.toJSON(), message: err.message });
      expect(text).toContain('[redacted]');
      expect(text).not.toContain('key-unknown-555');
      await client.close();
    });
  });
});
