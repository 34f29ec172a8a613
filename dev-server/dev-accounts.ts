/**
 * `npm run dev`'s two example shipping accounts beside the default one: "sandbox" (the two
 * headers, a limit of 5 calls a second) serves the WooCommerce shop, "production" (Bearer, 20 a
 * second) the Shopify one; every other shop stays on `default` (SHIPPING_API_*), so the quick
 * start is as it was. Their credentials are made once per data dir, kept in files (0600, in a
 * 0700 folder) the worker reads, and again when they change: replace one and tell the fake
 * (POST /__admin/credentials) to try a rotation.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AnyFakeAccount } from '../fake-shipping-api/server';
import { PLATFORM_SHOPS } from './example-shops';

export interface DevAccounts {
  /** --accounts-file for the fake API: the accounts as it checks them. */
  fakeAccountsFile: string;
  /** Writes SHIPPING_ACCOUNTS_FILE for the worker (and the import) against the fake at `apiUrl`; its path. */
  settingsFor(apiUrl: string): string;
  /** Which shop uses which account, for the banner. */
  shops: Record<string, string>;
}

export const DEV_SHIPPER_ACCOUNT_ID = 'SA-DEV-1';

/** The accounts' files in `<dataDir>/accounts/`, credentials made once. */
export function ensureDevAccounts(dataDir: string): DevAccounts {
  const dir = path.join(dataDir, 'accounts');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secret = (name: string, prefix: string) => {
    const file = path.join(dir, name);
    try {
      fs.writeFileSync(file, `${prefix}-${randomBytes(12).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    return fs.readFileSync(file, 'utf8').trim();
  };
  const sandbox = { apiKey: secret('sandbox.key', 'sbx-key'), apiToken: secret('sandbox.token', 'sbx-token') };
  const production = { accessToken: secret('production.token', 'prd-token') };
  const shops = { [PLATFORM_SHOPS.woocommerce]: 'sandbox', [PLATFORM_SHOPS.shopify]: 'production' };

  const settingsFor = (apiUrl: string) => {
    const file = path.join(dir, 'shipping-accounts.json');
    writePrivate(file, {
      accounts: {
        sandbox: { baseUrl: apiUrl, apiKeyFile: 'sandbox.key', apiTokenFile: 'sandbox.token' },
        production: { baseUrl: apiUrl, auth: 'bearer', accessTokenFile: 'production.token', shipperAccountId: DEV_SHIPPER_ACCOUNT_ID },
      },
      shops,
    });
    return file;
  };
  const fakeAccountsFile = path.join(dir, 'fake-api-accounts.json');
  const fakeAccounts: AnyFakeAccount[] = [
    { name: 'sandbox', ...sandbox, rateLimit: { perSecond: 5, burst: 5 } },
    {
      name: 'production',
      auth: 'bearer',
      ...production,
      shipperAccountId: DEV_SHIPPER_ACCOUNT_ID,
      rateLimit: { perSecond: 20, burst: 20 },
    },
  ];
  writePrivate(fakeAccountsFile, fakeAccounts);
  return { fakeAccountsFile, settingsFor, shops };
}

function writePrivate(file: string, value: unknown): void {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}
