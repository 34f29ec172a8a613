/**
 * One live connection per platform shop in a worker, made on first use: it holds what must
 * outlive an activity (a Shopify store's cost bucket and access token, whether a WooCommerce
 * site has the Shipment Tracking extension). Shops of one Shopify store share one bucket.
 */
import type { ShopifyConnector } from './shopify/settings';
import { ShopifyConnection } from './shopify/write-back';
import { ShopifyClient } from './shopify/client';
import type { WooCommerceConnector } from './woocommerce/settings';
import { WooCommerceConnection } from './woocommerce/write-back';
import { wooSecrets } from './woocommerce/client';
import { scrubResult, type PlatformConnection } from './connection/result';

export class PlatformConnections {
  private readonly shops = new Map<string, { connector: object; connection: PlatformConnection }>();
  private readonly stores = new Map<string, ShopifyClient>();

  constructor(private readonly now: () => number = Date.now) {}

  for(connector: ShopifyConnector | WooCommerceConnector): PlatformConnection {
    const known = this.shops.get(connector.shop);
    if (known?.connector === connector) return known.connection;
    const made = connector.type === 'shopify' ? this.shopify(connector) : new WooCommerceConnection(connector, undefined, this.now);
    // What a delivery reports is made of the store's answers (userErrors, notes): scrubbed like every excerpt.
    const secrets = () => (connector.type === 'shopify' ? this.shopifyClient(connector).knownSecrets() : wooSecrets(connector));
    const connection: PlatformConnection = { deliver: async (delivery) => scrubResult(await made.deliver(delivery), secrets()) };
    this.shops.set(connector.shop, { connector, connection });
    return connection;
  }

  private shopify(connector: ShopifyConnector): ShopifyConnection {
    return new ShopifyConnection(connector, this.shopifyClient(connector));
  }

  /** The store's client, with its one cost bucket: the import's reads and the write-back share it. */
  shopifyClient(connector: ShopifyConnector): ShopifyClient {
    const key = `${connector.adminOrigin} ${connector.storeDomain}`;
    let client = this.stores.get(key);
    if (!client) {
      client = new ShopifyClient(connector, this.now);
      this.stores.set(key, client);
    }
    return client;
  }
}
