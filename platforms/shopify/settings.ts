/**
 * The `shopify` connector's configuration: one store, its pinned Admin API version, its
 * credentials (a static access token, or an app's client id and secret for the client
 * credentials grant) and what merchants set differently. Validated by platforms/connectors.ts,
 * which reads the file and names each problem with its JSON path.
 */
import { z } from 'zod';
import { duration, HTTP_TIMEOUT_BOUNDS } from '../../config/settings';
import { SecretFile, SecretText, WebhookSecretSetting } from '../connection/secrets';
import { ShopImportSettings } from '../../config/shop-import';
import { FULFILLMENT_EVENT_STATUSES } from './event-status';

/** The latest stable Admin API version (2026-10); pin it and bump it each quarter. */
export const DEFAULT_SHOPIFY_API_VERSION = '2026-10';

const CourierCode = z.string().min(1).max(100);

/** A courier's name as Shopify knows it ("DHL Express"), optionally with a tracking link template. */
const Carrier = z.union([
  z.string().min(1).max(100),
  z.strictObject({
    company: z.string().min(1).max(100),
    trackingUrl: z
      .string()
      .max(500)
      .refine((t) => t.includes('{number}') && /^https:\/\//.test(t), 'must be an https:// URL containing {number}')
      .optional(),
  }),
]);

export const ShopifyConnectorConfig = z.strictObject({
  type: z.literal('shopify'),
  storeDomain: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}\.myshopify\.com$/i, "must be the store's myshopify.com domain, e.g. acme.myshopify.com"),
  apiVersion: z
    .string()
    .regex(/^20\d\d-(01|04|07|10)$/, 'must be a quarterly Admin API version such as 2026-10')
    .default(DEFAULT_SHOPIFY_API_VERSION),
  accessToken: SecretText.optional(),
  accessTokenFile: SecretFile.optional(),
  clientId: z.string().min(1).max(200).optional(),
  clientSecret: SecretText.optional(),
  clientSecretFile: SecretFile.optional(),
  /** Where the Admin API answers when not at https://<storeDomain> (a proxy, or the local fake). */
  adminUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .refine(
      (t) => new URL(t).pathname === '/' && !new URL(t).username,
      'must be an origin (scheme, host, port) without a path or credentials',
    )
    .optional(),
  timeout: duration('15s', HTTP_TIMEOUT_BOUNDS),
  notifyCustomer: z.boolean().default(false),
  /** Courier code of a label → Shopify tracking company; extends the built-in table. */
  carriers: z.record(CourierCode, Carrier).default({}),
  /** Tracking tag or subtag → fulfillment event status (null: no event); extends the built-in table. */
  eventStatuses: z.record(z.string().min(1).max(100), z.enum(FULFILLMENT_EVENT_STATUSES).nullable()).default({}),
  /** How a rejected label shows on the order. */
  onLabelRejected: z
    .strictObject({
      tag: z.string().min(1).max(40).nullable().default('label-rejected'),
      note: z.boolean().default(true),
    })
    .default({ tag: 'label-rejected', note: true }),
  /** The key Shopify signs webhooks with when it is not clientSecret (a legacy custom app's API secret key). */
  webhookSecret: WebhookSecretSetting.optional(),
  webhookSecretFile: SecretFile.optional(),
  /** Pull the store's orders that need a label (shop-import/); absent: orders come by file import only. */
  import: ShopImportSettings.optional(),
});
export type ShopifyConnectorConfig = z.infer<typeof ShopifyConnectorConfig>;

/** What a worker keeps of a shopify connector; the credential is not enumerable. */
export interface ShopifyConnector {
  type: 'shopify';
  shop: string;
  storeDomain: string;
  apiVersion: string;
  /** The origin the calls go to: https://<storeDomain>, or adminUrl. */
  adminOrigin: string;
  timeoutMs: number;
  notifyCustomer: boolean;
  carriers: Readonly<Record<string, { company: string; trackingUrl?: string }>>;
  eventStatuses: Readonly<Record<string, string | null>>;
  onLabelRejected: { tag: string | null; note: boolean };
  import: ShopImportSettings | null;
  /** Keys of the shop's platform webhooks (shop-trigger/); not enumerable. */
  readonly webhookSecrets: readonly string[];
  readonly credentials: { kind: 'token'; accessToken: string } | { kind: 'client_credentials'; clientId: string; clientSecret: string };
}
