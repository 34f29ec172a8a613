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
import type { FakeAccount, FakeShippingApiOptions } from './types';

export class FakeState {
  readonly accounts: FakeAccount[];
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
    this.accounts = options.accounts ?? [defaultAccount().account];
    if (this.accounts.length === 0) throw new Error('startFakeShippingApi: at least one account is needed');
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

  /** The account whose key and token the request carries, or null (a 401). */
  authenticate(req: IncomingMessage): FakeAccount | null {
    const key = header(req, 'x-rr-apikey');
    const token = header(req, 'x-rr-apitoken');
    if (!key || !token) return null;
    return this.accounts.find((a) => a.apiKey === key && a.apiToken === token) ?? null;
  }
}
