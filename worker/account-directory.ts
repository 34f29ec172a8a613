/**
 * The worker's shipping accounts, each with its own client (credentials, connection pool) and
 * its own fleet-wide pacer: a pacer of its own in this process (create-worker.ts, callPacing)
 * and an account workflow of its own that relays its holds and pools its noise between the
 * workers (fleet-rate-limit.ts). Which pacer serves a call is decided here, by the account the
 * shipment names; how it paces is the pacer's business.
 */
import type { Client } from '@temporalio/client';
import type { AccountCalls, AccountDirectory } from '../shipping-accounts/directory';
import { openAccountClient, type ShippingAccount, type ShippingAccounts } from '../config/shipping-accounts';
import { knownAccounts, recordAccountAnswer, recordPaceAlone } from '../metrics/counters';
import type { CallPacing } from '../pacing/account-pacer';
import type { ShippingApiClient } from '../shipping-api/client';
import { ShippingApiError } from '../shipping-api/errors';
import { callPacing } from './create-worker';
import { accountWorkflowId, fleetRateLimits, type FleetRateLimits } from '../pacing/fleet-rate-limit';

export interface DirectoryLog {
  warn(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  debug(message: string, meta?: Record<string, unknown>): void;
}

export interface OpenAccounts extends AccountDirectory {
  /** Every account's client, e.g. for the courier list of the metric label. */
  clients(): Array<{ name: string; api: ShippingApiClient; pacing: AccountCalls['pacing'] }>;
  close(): Promise<void>;
}

/**
 * Opens every configured account: reads its credentials (a file that cannot be read fails the
 * start, naming it) and learns its fleet's recorded hold before any call goes out.
 * `temporal` unset: no fleet relay (each worker paces alone).
 */
export async function openAccounts(
  accounts: ShippingAccounts,
  options: { temporal?: { client: Client; taskQueue: string }; log: DirectoryLog },
): Promise<OpenAccounts> {
  const opened = new Map<string, AccountCalls & { fleet?: FleetRateLimits }>();
  knownAccounts(accounts.names);
  try {
    for (const name of accounts.names) opened.set(name, await openAccount(accounts.get(name)!, options));
  } catch (err) {
    await closeAll(opened.values());
    throw err;
  }
  return {
    names: accounts.names,
    accountOf: accounts.accountOf,
    find: (name) => opened.get(name),
    clients: () => [...opened].map(([name, { api, pacing }]) => ({ name, api, pacing })),
    close: () => closeAll(opened.values()),
  };
}

async function openAccount(
  account: ShippingAccount,
  { temporal, log }: { temporal?: { client: Client; taskQueue: string }; log: DirectoryLog },
): Promise<AccountCalls & { fleet?: FleetRateLimits }> {
  const api = await openAccountClient(account, {
    // The files that changed, never what they hold.
    onReload: ({ files, problem }) =>
      problem
        ? log.warn('shipping account credentials changed but cannot be used yet; calls keep the previous ones', {
            account: account.name,
            files,
            problem,
          })
        : log.info('shipping account credentials reloaded', { account: account.name, files }),
  });
  // 429s reach every worker of the account through Temporal (not when its pacing is off).
  const fleet =
    temporal && account.pacing.mode === 'adaptive'
      ? fleetRateLimits({
          client: temporal.client,
          taskQueue: temporal.taskQueue,
          workflowId: accountWorkflowId(account, temporal.taskQueue),
          onAlone: (alone) => recordPaceAlone(account.name, alone),
          log: withAccount(log, account.name),
        })
      : undefined;
  const pacing = await callPacing(account.pacing, fleet, {
    info: (message, meta) => log.info(message, { account: account.name, ...meta }),
  });
  return { api, pacing: countingAnswers(pacing, account.name), fleet };
}

/** Each call the account's pacing lets out, counted by its answer (metrics: shipping_api_answers_total). */
function countingAnswers(pacing: CallPacing, account: string): CallPacing {
  return {
    waitUntil: (until, signal) => pacing.waitUntil(until, signal),
    run: (cls, call, signal, wait) =>
      pacing.run(
        cls,
        async (callSignal) => {
          try {
            const result = await call(callSignal);
            recordAccountAnswer(account, 'ok');
            return result;
          } catch (err) {
            recordAccountAnswer(account, err instanceof ShippingApiError && err.kind === 'rate_limited' ? 'rate_limited' : 'error');
            throw err;
          }
        },
        signal,
        wait,
      ),
  };
}

function withAccount(log: DirectoryLog, account: string): DirectoryLog {
  return {
    warn: (message, meta) => log.warn(message, { account, ...meta }),
    info: (message, meta) => log.info(message, { account, ...meta }),
    debug: (message, meta) => log.debug(message, { account, ...meta }),
  };
}

async function closeAll(accounts: Iterable<AccountCalls & { fleet?: FleetRateLimits }>): Promise<void> {
  await Promise.allSettled([...accounts].flatMap(({ api, fleet }) => [api.close(), ...(fleet ? [fleet.close()] : [])]));
}
