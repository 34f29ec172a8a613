/** Defaults of the fake shipping API and its dev credentials, shared by the server and the CLI. */
import type { FakeAccount } from './types';

export const DEV_API_KEY = 'dev-api-key';
export const DEV_API_TOKEN = 'dev-api-token';
export const DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  trackingStepMs: 60_000,
  rejectPostalCodes: ['00000'] as readonly string[],
  seed: 1,
  maxBodyBytes: 1024 * 1024,
} as const;

/** The default account, from the environment or the dev credentials; says which fell back. */
export function defaultAccount(env: NodeJS.ProcessEnv = process.env): {
  account: FakeAccount;
  devKey: boolean;
  devToken: boolean;
} {
  const key = env.SHIPPING_API_KEY;
  const token = env.SHIPPING_API_TOKEN;
  const devKey = key === undefined || key === '';
  const devToken = token === undefined || token === '';
  return {
    account: { name: 'default', apiKey: devKey ? DEV_API_KEY : key, apiToken: devToken ? DEV_API_TOKEN : token },
    devKey,
    devToken,
  };
}

/** Stage length of the poll-counted tracking model (only its checkpoint times show it). */
export const POLL_STAGE_MS = 60_000;
