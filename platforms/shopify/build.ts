/** A validated `shopify` connector entry → what the worker keeps (credentials hidden). */
import { hideSecret, secretList, SettingError } from '../connection/secrets';
import { MAX_SHOPIFY_PAGE_SIZE } from '../../config/shop-import';
import type { ShopifyConnector, ShopifyConnectorConfig } from './settings';

/**
 * Courier codes of the shipping API → Shopify's tracking company names (exact case: Shopify then
 * builds the tracking link itself). A courier missing here is sent by its code, as an "Other" carrier.
 */
const CARRIERS: Readonly<Record<string, string>> = {
  'dhl-express': 'DHL Express',
  ups: 'UPS',
  fedex: 'FedEx',
  usps: 'USPS',
  postnl: 'PostNL',
  'dpd-de': 'DPD',
  dpd: 'DPD',
  gls: 'GLS',
  'royal-mail': 'Royal Mail',
};

export function buildShopifyConnector(
  shop: string,
  config: ShopifyConnectorConfig,
  secret: (field: string) => string | null,
  isLoopback: (hostname: string) => boolean,
): ShopifyConnector {
  const admin = config.adminUrl ? new URL(config.adminUrl) : null;
  // The access token (or the client secret) travels in every request, as WooCommerce's key pair does.
  if (admin?.protocol === 'http:' && !isLoopback(admin.hostname))
    throw new SettingError(
      'adminUrl',
      'must be https:// (the access token or client secret travels with every request); http:// only to loopback',
    );
  const accessToken = secret('accessToken');
  const clientSecret = secret('clientSecret');
  if (accessToken !== null && (config.clientId !== undefined || clientSecret !== null))
    throw new SettingError('accessToken', 'set either accessToken or clientId with clientSecret, not both');
  if (accessToken === null && (config.clientId === undefined || clientSecret === null)) {
    const field = config.clientId === undefined ? (clientSecret === null ? 'accessToken' : 'clientId') : 'clientSecret';
    throw new SettingError(
      field,
      'is required: give accessToken (or accessTokenFile), or clientId with clientSecret (or clientSecretFile)',
    );
  }
  const carriers: Record<string, { company: string; trackingUrl?: string }> = {};
  for (const [code, company] of Object.entries(CARRIERS)) carriers[code] = { company };
  for (const [code, entry] of Object.entries(config.carriers)) carriers[code] = typeof entry === 'string' ? { company: entry } : entry;
  const connector = {
    type: 'shopify',
    shop,
    storeDomain: config.storeDomain.toLowerCase(),
    apiVersion: config.apiVersion,
    adminOrigin: admin ? admin.origin : `https://${config.storeDomain.toLowerCase()}`,
    timeoutMs: config.timeout,
    notifyCustomer: config.notifyCustomer,
    carriers,
    eventStatuses: { ...config.eventStatuses },
    onLabelRejected: config.onLabelRejected,
    import: config.import ?? null,
  } as ShopifyConnector;
  // 117 requested points an order: a ninth would take the page query past Shopify's 1,000-point cap.
  if (config.import?.pageSize !== undefined && config.import.pageSize > MAX_SHOPIFY_PAGE_SIZE)
    throw new SettingError(
      'import',
      `pageSize is at most ${MAX_SHOPIFY_PAGE_SIZE} on Shopify (each order adds about 117 points to a query capped at 1,000)`,
    );
  // Shopify signs an app's webhooks with its client secret, unless webhookSecret names the key(s).
  const webhookSecrets = secretList(secret('webhookSecret'));
  hideSecret(
    connector,
    'webhookSecrets',
    Object.freeze(webhookSecrets.length > 0 ? webhookSecrets : clientSecret === null ? [] : [clientSecret]),
  );
  return hideSecret(
    connector,
    'credentials',
    Object.freeze(
      accessToken !== null
        ? { kind: 'token', accessToken }
        : { kind: 'client_credentials', clientId: config.clientId!, clientSecret: clientSecret! },
    ),
  );
}
