/**
 * Defaults and fixed limits of the fake Shopify store. Limits are Shopify's published ones where
 * they exist (cost cap, page size, input arrays); the others are the fake's own and documented.
 */
export const DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  accessToken: 'shpat_fake_dev_token',
  clientId: 'fake-client-id',
  clientSecret: 'fake-client-secret',
  /** Client-credentials tokens live about a day (notes section 1). */
  tokenLifetimeSeconds: 86_399,
  /** The Standard plan: 100 points a second; the bucket size is read from maximumAvailable. */
  bucket: { maximumAvailable: 2000, restoreRate: 100 },
  throttleAs: 'graphql-200' as const,
  /** Without read_all_orders an app sees the last 60 days. */
  orderVisibilityDays: 60,
  shopName: 'Fake Shopify store',
  seed: 1,
  /** X-Shopify-API-Version of webhook deliveries unless the subscription names one. */
  apiVersion: '2026-10',
  /**
   * Webhook delivery: Shopify's 5 s timeout and 8 retries; a 60 s backoff base doubles to about
   * 4¼ h in all (Shopify: "8 times over 4 hours"). Tests and benches pass a base in ms.
   */
  webhooks: { backoffBaseMs: 60_000, maxRetries: 8, deleteAfterFailures: 8, timeoutMs: 5_000, queueLimit: 50_000, concurrency: 8 },
} as const;

export const LIMITS = {
  maxBodyBytes: 1024 * 1024,
  maxQueryCost: 1000,
  maxPageSize: 250,
  maxInputArray: 250,
  /** The fake's own guard against pathological nesting; real queries stay far below. */
  maxDepth: 15,
  /** graphql-js parser guard, so a 1 MB body of tokens cannot stall the event loop. */
  maxTokens: 50_000,
  /** A failNext 'slow' entry waits this long unless it names its own delayMs. */
  slowMs: 30_000,
} as const;

export const SHOP = {
  ianaTimezone: 'Europe/Berlin',
  currencyCode: 'EUR',
  myshopifyDomain: 'fake-shop.myshopify.com',
  email: 'owner@fake-shop.example',
} as const;

export interface LocationInfo {
  id: string;
  name: string;
  address1: string;
  city: string;
  zip: string;
  countryCode: string;
  phone: string | null;
}

/** Two locations seeds place lines at, so the "one location per fulfillmentCreate" rule can be exercised; a third that lines are moved to. */
export const LOCATIONS: readonly LocationInfo[] = [
  {
    id: 'gid://shopify/Location/1',
    name: 'Main warehouse',
    address1: 'Lagerstraße 1',
    city: 'Hamburg',
    zip: '20095',
    countryCode: 'DE',
    phone: null,
  },
  {
    id: 'gid://shopify/Location/2',
    name: 'Second warehouse',
    address1: 'Industriestraße 5',
    city: 'München',
    zip: '80331',
    countryCode: 'DE',
    phone: null,
  },
  // No seed places lines here: a merchant moves them here (fulfillmentOrderMove).
  {
    id: 'gid://shopify/Location/3',
    name: 'Third warehouse',
    address1: 'Hafenweg 9',
    city: 'Bremen',
    zip: '28195',
    countryCode: 'DE',
    phone: null,
  },
];

export const LOCATION_IDS = ['gid://shopify/Location/1', 'gid://shopify/Location/2'] as const;

export const DEFAULT_ADDRESS = {
  name: 'Erika Mustermann',
  firstName: 'Erika',
  lastName: 'Mustermann',
  company: null,
  address1: 'Heidestraße 17',
  address2: null,
  city: 'Köln',
  provinceCode: null,
  zip: '51147',
  countryCodeV2: 'DE',
  phone: '+49 221 1234567',
} as const;
