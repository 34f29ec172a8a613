/**
 * Which client and which pacer serve a shipment's shipping account. A shipment names its
 * account in its input (never credentials); the activities look it up here for every call, so
 * each call goes out with that account's credentials and waits under that account's pace, and
 * one account's 429s never hold another's calls. The worker builds the directory from its
 * accounts (worker/account-directory.ts); a worker with one client serves only `default`.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ShippingApiClient } from '../shipping-api/client';
import type { AccountOf } from '../config/shipping-accounts';
import { DEFAULT_SHIPPING_ACCOUNT as DEFAULT_ACCOUNT } from '../domain/shipment';
import { UNPACED, type CallPacing } from '../pacing/account-pacer';

export interface AccountCalls {
  api: ShippingApiClient;
  pacing: CallPacing;
}

export interface AccountDirectory {
  /** Names this worker serves, sorted. */
  names: readonly string[];
  /** The account of a shop's new shipments (the shop pull starts them); absent: they name none. */
  accountOf?: AccountOf;
  /** The account's client and pacer; undefined when this worker does not know the account. */
  find(name: string): AccountCalls | undefined;
}

/** ApplicationFailure type of a call for an account this worker has no settings for. */
export const UNKNOWN_ACCOUNT = 'UnknownShippingAccount';
/**
 * Retried at this interval (the activity's retry policy bounds it by its window): a worker
 * deployed without the account (a rollout under way, a missing entry) must not fail the
 * shipment, and another worker of the fleet may know it.
 */
export const UNKNOWN_ACCOUNT_RETRY_MS = 60_000;

/** The account's calls, or a retryable failure naming the account and the setting to fix. */
export function accountCalls(directory: AccountDirectory, name: string | undefined): AccountCalls {
  const account = name ?? DEFAULT_ACCOUNT;
  const found = directory.find(account);
  if (found) return found;
  throw ApplicationFailure.create({
    type: UNKNOWN_ACCOUNT,
    message: `this worker has no shipping account "${account}" (it has: ${directory.names.join(', ') || 'none'}); add it to SHIPPING_ACCOUNTS`,
    nextRetryDelay: UNKNOWN_ACCOUNT_RETRY_MS,
  });
}

/** One client for the account `default` (tests, and workers built around one client). */
export function singleAccount(api: ShippingApiClient, pacing: CallPacing = UNPACED): AccountDirectory {
  const calls = { api, pacing };
  return { names: [DEFAULT_ACCOUNT], find: (name) => (name === DEFAULT_ACCOUNT ? calls : undefined) };
}
