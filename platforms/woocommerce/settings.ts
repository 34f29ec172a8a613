/**
 * The `woocommerce` connector's configuration: a site, its REST API key pair (HTTP Basic over
 * HTTPS, or the query string for hosts that strip Authorization) and what merchants set
 * differently. Validated by platforms/connectors.ts, which names each problem with its JSON path.
 */
import { z } from 'zod';
import { duration, HTTP_TIMEOUT_BOUNDS } from '../../config/settings';
import { ShopImportSettings } from '../../config/shop-import';
import { SecretFile, SecretText, WebhookSecretSetting } from '../connection/secrets';

/** Order statuses of WooCommerce core (a plugin may add more: any slug is accepted). */
const OrderStatus = z.string().regex(/^[a-z0-9_-]{1,20}$/, 'must be an order status slug such as completed or on-hold');

/** Courier code → a Shipment Tracking provider name, or a custom provider with its link (%1$s = number). */
const Provider = z.union([
  z.string().min(1).max(100),
  z.strictObject({
    custom: z.string().min(1).max(100),
    link: z
      .string()
      .max(500)
      .refine((t) => t.includes('%1$s') && /^https:\/\//.test(t), 'must be an https:// URL containing %1$s')
      .optional(),
  }),
]);

export const WooCommerceConnectorConfig = z.strictObject({
  type: z.literal('woocommerce'),
  /** The site root; the API is at <url>/wp-json/. */
  url: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .refine((t) => !new URL(t).username && !new URL(t).password, 'must not carry credentials (user:password@)'),
  consumerKey: SecretText.optional(),
  consumerKeyFile: SecretFile.optional(),
  consumerSecret: SecretText.optional(),
  consumerSecretFile: SecretFile.optional(),
  auth: z.enum(['basic', 'query-string'], { error: 'must be "basic" or "query-string"' }).default('basic'),
  timeout: duration('15s', HTTP_TIMEOUT_BOUNDS),
  /** Courier code of a label → Shipment Tracking provider; extends the built-in table. */
  providers: z.record(z.string().min(1).max(100), Provider).default({}),
  /** Tracking notes the customer sees (and is e-mailed about); private by default. */
  customerNotes: z.boolean().default(false),
  /** The status a delivered order gets (its e-mail includes the tracking); null leaves it. */
  deliveredStatus: OrderStatus.nullable().default('completed'),
  /** The status an order with a rejected label gets, beside the private note; null leaves it. */
  rejectedStatus: OrderStatus.nullable().default('on-hold'),
  /** The secret of the site's order webhooks (WooCommerce → Settings → Advanced → Webhooks). */
  webhookSecret: WebhookSecretSetting.optional(),
  webhookSecretFile: SecretFile.optional(),
  /** Pull the site's orders that need a label (shop-import/); absent: orders come by file import only. */
  import: ShopImportSettings.optional(),
});
export type WooCommerceConnectorConfig = z.infer<typeof WooCommerceConnectorConfig>;

export type WooProvider = { kind: 'provider'; name: string } | { kind: 'custom'; name: string; link: string | null };

/** What a worker keeps of a woocommerce connector; the key pair is not enumerable. */
export interface WooCommerceConnector {
  type: 'woocommerce';
  shop: string;
  /** The site root without a trailing slash. */
  siteUrl: string;
  auth: 'basic' | 'query-string';
  timeoutMs: number;
  providers: Readonly<Record<string, WooProvider>>;
  customerNotes: boolean;
  deliveredStatus: string | null;
  rejectedStatus: string | null;
  import: ShopImportSettings | null;
  /** Keys of the site's order webhooks (shop-trigger/); not enumerable. */
  readonly webhookSecrets: readonly string[];
  readonly credentials: { consumerKey: string; consumerSecret: string };
}
