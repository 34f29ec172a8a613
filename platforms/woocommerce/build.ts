/** A validated `woocommerce` connector entry → what the worker keeps (key pair hidden). */
import { hideSecret, secretList, SettingError } from '../connection/secrets';
import type { WooCommerceConnector, WooCommerceConnectorConfig, WooProvider } from './settings';

/**
 * Courier codes of the shipping API → Shipment Tracking provider names (as its /providers route
 * lists them; names it does not list are sent as custom providers). A courier missing here is
 * written as a custom provider named by its code.
 */
const PROVIDERS: Readonly<Record<string, string>> = {
  'dhl-express': 'DHL',
  ups: 'UPS',
  fedex: 'Fedex',
  usps: 'USPS',
  postnl: 'PostNL',
  'dpd-de': 'DPD.de',
  'royal-mail': 'Royal Mail',
};

export function buildWooCommerceConnector(
  shop: string,
  config: WooCommerceConnectorConfig,
  secret: (field: string) => string | null,
  isLoopback: (hostname: string) => boolean,
): { connector: WooCommerceConnector; warnings: string[] } {
  const site = new URL(config.url);
  // The key pair travels in every request: Basic auth or the query string over plain http is readable on the way.
  if (site.protocol === 'http:' && !isLoopback(site.hostname))
    throw new SettingError('url', 'must be https:// (the consumer key and secret travel with every request); http:// only to loopback');
  const consumerKey = secret('consumerKey');
  const consumerSecret = secret('consumerSecret');
  if (consumerKey === null) throw new SettingError('consumerKey', 'is required (or consumerKeyFile)');
  if (consumerSecret === null) throw new SettingError('consumerSecret', 'is required (or consumerSecretFile)');
  const providers: Record<string, WooProvider> = {};
  for (const [code, name] of Object.entries(PROVIDERS)) providers[code] = { kind: 'provider', name };
  for (const [code, entry] of Object.entries(config.providers))
    providers[code] =
      typeof entry === 'string' ? { kind: 'provider', name: entry } : { kind: 'custom', name: entry.custom, link: entry.link ?? null };
  const connector = {
    type: 'woocommerce',
    shop,
    siteUrl: `${site.origin}${site.pathname.replace(/\/+$/, '')}`,
    auth: config.auth,
    timeoutMs: config.timeout,
    providers,
    customerNotes: config.customerNotes,
    deliveredStatus: config.deliveredStatus,
    rejectedStatus: config.rejectedStatus,
    import: config.import ?? null,
  } as WooCommerceConnector;
  hideSecret(connector, 'webhookSecrets', Object.freeze(secretList(secret('webhookSecret'))));
  if (config.import && config.import.mapping.shipFrom?.address === undefined)
    throw new SettingError('import', 'mapping.shipFrom.address is required: WooCommerce orders carry no store address');
  hideSecret(connector, 'credentials', Object.freeze({ consumerKey, consumerSecret }));
  return { connector, warnings: [] };
}
