/**
 * Everything one running fake holds, handed to every route: its settings, accounts, labels,
 * faults and traffic. Built once from the start options, which are checked here.
 */
import type { IncomingMessage } from 'node:http';
import { header } from '../local-http';
import { defaultAccount, DEFAULTS } from './defaults';
import { FaultInjector } from './fault-injector';
import { LabelStore } from './label-store';
import { Traffic } from './traffic';
import type { AnyFakeAccount, FakeCredentials, FakeShippingApiOptions } from './types';

export class FakeState {
  readonly accounts: AnyFakeAccount[];
  readonly trackingStepMs: number;
  /** Set: tracking advances by polls, not time (see FakeShippingApiOptions). */
  readonly trackingStepPolls: number | undefined;
  /** GET /tracking calls per label id, for the poll-counted model. */
  readonly trackingPolls = new Map<string, number>();
  readonly rejectPostalCodes: ReadonlySet<string>;
  readonly labels = new LabelStore();
  readonly faults: FaultInjector;
  readonly traffic: Traffic;

  constructor(options: FakeShippingApiOptions) {
    // Copies: a rotation replaces an account's credentials here, not in the caller's object.
    this.accounts = (options.accounts ?? [defaultAccount().account]).map((a) => ({ ...a }));
    if (this.accounts.length === 0) throw new Error('startFakeShippingApi: at least one account is needed');
    this.accounts.forEach(checkAccount);
    const names = this.accounts.map((a) => a.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice !== undefined) throw new Error(`startFakeShippingApi: account name "${twice}" is used twice`);
    this.trackingStepMs = options.trackingStepMs ?? DEFAULTS.trackingStepMs;
    if (!Number.isFinite(this.trackingStepMs) || this.trackingStepMs < 0) {
      throw new Error('startFakeShippingApi: trackingStepMs must be >= 0');
    }
    this.trackingStepPolls = options.trackingStepPolls;
    if (this.trackingStepPolls !== undefined && !(Number.isInteger(this.trackingStepPolls) && this.trackingStepPolls >= 1)) {
      throw new Error('startFakeShippingApi: trackingStepPolls must be an integer >= 1');
    }
    this.traffic = new Traffic(options.requestLogSize ?? 100_000);
    this.rejectPostalCodes = new Set(options.rejectPostalCodes ?? DEFAULTS.rejectPostalCodes);
    this.faults = new FaultInjector(options.seed ?? DEFAULTS.seed);
    if (options.faults) this.faults.set(options.faults);
  }

  /**
   * The account whose credentials the request carries, or null (a 401). A `bearer` account
   * answers only to its Authorization header, a `headers` account only to its two headers.
   */
  authenticate(req: IncomingMessage): AnyFakeAccount | null {
    const bearer = /^Bearer (\S+)$/.exec(header(req, 'authorization') ?? '')?.[1];
    if (bearer) return this.accounts.find((a) => a.auth === 'bearer' && a.accessToken === bearer) ?? null;
    const key = header(req, 'x-rr-apikey');
    const token = header(req, 'x-rr-apitoken');
    if (!key || !token) return null;
    return this.accounts.find((a) => a.auth !== 'bearer' && a.apiKey === key && a.apiToken === token) ?? null;
  }

  /** New credentials for `name`, of its scheme; the old ones are refused from now on. */
  rotateCredentials(name: string, credentials: FakeCredentials): AnyFakeAccount {
    const at = this.accounts.findIndex((a) => a.name === name);
    if (at < 0) throw new Error(`no account "${name}"`);
    const account = this.accounts[at]!;
    const rotated = { ...account, ...credentials };
    if ('accessToken' in credentials !== (account.auth === 'bearer')) {
      throw new Error(`account "${name}" takes ${account.auth === 'bearer' ? 'accessToken' : 'apiKey and apiToken'}`);
    }
    checkAccount(rotated);
    this.accounts[at] = rotated;
    return rotated;
  }
}

function checkAccount(a: AnyFakeAccount): void {
  const ok =
    a.auth === 'bearer'
      ? Boolean(a.accessToken) && Boolean(a.shipperAccountId)
      : Boolean((a as { apiKey?: string }).apiKey) && Boolean((a as { apiToken?: string }).apiToken);
  if (!a.name || !ok) {
    throw new Error(
      `startFakeShippingApi: account "${a.name}" needs ${a.auth === 'bearer' ? 'accessToken and shipperAccountId' : 'apiKey and apiToken'}`,
    );
  }
}
