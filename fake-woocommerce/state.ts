/**
 * Everything one running fake holds, handed to every route: its settings (checked here, once,
 * from the start options), the store, the faults and the traffic counters.
 */
import { mulberry32 } from '../fake-shipping-api/faults';
import { checkTimeZone } from './clock';
import { DEFAULTS } from './defaults';
import { WooFaultInjector } from './fault-injector';
import type { ActionContext } from './order-actions';
import type { JsonContext } from './order-json';
import { RetryAfterWatch } from './retry-after-watch';
import { WooStore } from './store';
import { WooTraffic } from './stats';
import type { FakeWooCommerceOptions } from './types';
import { webhookSettings, WooWebhooks } from './webhooks';

/** Start options reach here from plain JavaScript too: refuse an unknown value by name. */
function oneOf(name: string, value: string | undefined, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value))
    throw new Error(`fake WooCommerce: ${name} must be one of ${allowed.join(', ')} (got "${value}")`);
}

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
  /** Calls that come before a Retry-After the store gave has ended. */
  readonly retryAfterWatch = new RetryAfterWatch();
  readonly webhooks: WooWebhooks;
  /** Draws the order of tied list rows when listTies is 'random'; null for 'id'. */
  readonly tieRandom: (() => number) | null;

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
    oneOf('modifiedOnSave', options.modifiedOnSave, ['always', 'post-fields']);
    oneOf('trackingSave', options.trackingSave, ['save', 'save-meta-data']);
    oneOf('listTies', options.listTies, ['id', 'random']);
    this.store = new WooStore(options.now ?? Date.now, options.modifiedOnSave, options.trackingSave);
    const seed = options.seed ?? DEFAULTS.seed;
    this.faults = new WooFaultInjector(seed);
    if (options.faults) this.faults.set(options.faults);
    this.tieRandom = (options.listTies ?? 'id') === 'random' ? mulberry32(seed ^ 0x71e5) : null;
    this.webhooks = new WooWebhooks(
      {
        store: this.store,
        traffic: this.traffic,
        json: () => this.json(),
        sourceUrl: () => `${this.baseUrl}/`,
        faults: () => this.faults.webhookFaults(),
      },
      webhookSettings(options.webhooks),
      seed,
    );
  }

  json(): JsonContext {
    return { apiRoot: `${this.baseUrl}/wp-json`, timezone: this.timezone };
  }

  actions(): ActionContext {
    return { store: this.store, apiUserName: DEFAULTS.apiUserName, shipmentTracking: this.shipmentTracking };
  }
}
