/**
 * Everything one running fake holds, handed to every route: its settings (checked here, once,
 * from the start options), the store, the faults and the traffic counters.
 */
import { checkTimeZone } from './clock';
import { DEFAULTS } from './defaults';
import { WooFaultInjector } from './fault-injector';
import type { ActionContext } from './order-actions';
import type { JsonContext } from './order-json';
import { WooStore } from './store';
import { WooTraffic } from './stats';
import type { FakeWooCommerceOptions } from './types';

export class WooState {
  readonly consumerKey: string;
  readonly consumerSecret: string;
  readonly timezone: string;
  readonly hpos: boolean;
  readonly stripAuthorization: boolean;
  readonly storeName: string;
  shipmentTracking: boolean;
  /** Set once the server listens (links in answers need it). */
  baseUrl = '';
  readonly store: WooStore;
  readonly faults: WooFaultInjector;
  readonly traffic = new WooTraffic();

  constructor(options: FakeWooCommerceOptions) {
    this.consumerKey = options.consumerKey ?? DEFAULTS.consumerKey;
    this.consumerSecret = options.consumerSecret ?? DEFAULTS.consumerSecret;
    if (this.consumerKey === '' || this.consumerSecret === '')
      throw new Error('fake WooCommerce: consumerKey and consumerSecret must not be empty');
    this.timezone = options.timezone ?? DEFAULTS.timezone;
    checkTimeZone(this.timezone);
    this.hpos = options.hpos ?? false;
    this.stripAuthorization = options.stripAuthorization ?? false;
    this.storeName = options.storeName ?? DEFAULTS.storeName;
    this.shipmentTracking = options.shipmentTracking ?? true;
    this.store = new WooStore(options.now ?? Date.now);
    this.faults = new WooFaultInjector(options.seed ?? DEFAULTS.seed);
    if (options.faults) this.faults.set(options.faults);
  }

  json(): JsonContext {
    return { apiRoot: `${this.baseUrl}/wp-json`, timezone: this.timezone };
  }

  actions(): ActionContext {
    return { store: this.store, apiUserName: DEFAULTS.apiUserName, shipmentTracking: this.shipmentTracking };
  }
}
