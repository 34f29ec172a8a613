/**
 * Shop connector configuration: SHOP_CONNECTORS (inline JSON) or SHOP_CONNECTORS_FILE, errors
 * that name the setting and JSON path without echoing secrets, and connectors that do not leak
 * their secrets when logged.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../config/settings';
import { loadShopConnectors, type ShopifyConnector, type WebhookConnector, type WooCommerceConnector } from '../platforms/connectors';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const next = `whsec_${randomBytes(32).toString('base64')}`;
const dir = mkdtempSync(path.join(tmpdir(), 'shop-connectors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function problems(env: Record<string, string>): string {
  try {
    loadShopConnectors(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('loadShopConnectors', () => {
  it('reads inline JSON: per-shop webhook with defaults, deliveryWindow default 7d, null for other shops', () => {
    const c = loadShopConnectors({
      SHOP_CONNECTORS: JSON.stringify({
        acme: { type: 'webhook', url: 'https://acme.example/hooks', secrets: [secret, next] },
        'demo shop': { type: 'webhook', url: 'http://127.0.0.1:8090/webhooks/demo', secrets: [secret], timeout: '2s' },
      }),
    });
    expect(c.deliveryWindowMs).toBe(7 * 86_400_000);
    expect(c.shops).toEqual(['acme', 'demo shop']);
    const acme = c.connectorFor('acme') as WebhookConnector;
    expect(acme).toMatchObject({ type: 'webhook', shop: 'acme', url: 'https://acme.example/hooks', timeoutMs: 15_000 });
    expect(acme.secrets).toEqual([secret, next]);
    expect(c.connectorFor('demo shop')!.timeoutMs).toBe(2_000);
    expect(c.connectorFor('other')).toBeNull();
    expect(c.connectorFor('deliveryWindow')).toBeNull();
    expect(c.connectorFor('toString')).toBeNull();
  });

  it('reads a file named by SHOP_CONNECTORS_FILE, with a deliveryWindow', () => {
    const file = path.join(dir, 'shops.json');
    writeFileSync(
      file,
      JSON.stringify({
        deliveryWindow: '36h',
        maxBackoff: '90s',
        acme: { type: 'webhook', url: 'https://acme.example/h', secrets: [secret] },
      }),
    );
    const c = loadShopConnectors({ SHOP_CONNECTORS_FILE: file });
    expect(c.deliveryWindowMs).toBe(36 * 3_600_000);
    expect(c.maxBackoffMs).toBe(90_000);
    expect(c.connectorFor('maxBackoff')).toBeNull();
    expect((c.connectorFor('acme') as WebhookConnector).url).toBe('https://acme.example/h');
  });

  it('neither variable (or empty ones): no shop has a connector', () => {
    for (const env of [{}, { SHOP_CONNECTORS: '', SHOP_CONNECTORS_FILE: '' }]) {
      const c = loadShopConnectors(env);
      expect(c.shops).toEqual([]);
      expect(c.connectorFor('acme')).toBeNull();
      expect(c.deliveryWindowMs).toBe(7 * 86_400_000);
      expect(c.maxBackoffMs).toBe(5 * 60_000);
    }
  });

  it('names the setting and JSON path of every problem', () => {
    const text = problems({
      SHOP_CONNECTORS: JSON.stringify({
        deliveryWindow: 'a week',
        maxBackoff: 'soonish',
        acme: { type: 'webhook', url: 'ftp://acme.example', secrets: ['whsec_tooshort', 'plain-text-secret'], timeout: '0s' },
        beta: { type: 'email', url: 'https://b.example', secrets: [secret] },
        gamma: { type: 'webhook', url: 'https://user:pw@g.example/', secret: secret },
        'my shop': { type: 'webhook', url: 'https://m.example', secrets: [] },
      }),
    });
    expect(text).toContain('SHOP_CONNECTORS.deliveryWindow: must be a positive duration');
    expect(text).toContain('SHOP_CONNECTORS.maxBackoff: must be a positive duration');
    expect(text).toContain('SHOP_CONNECTORS.acme.url: must be an http(s) URL');
    expect(text).toContain('SHOP_CONNECTORS.acme.secrets[0]: must look like whsec_<base64>');
    expect(text).toContain('SHOP_CONNECTORS.acme.secrets[1]: must look like whsec_<base64>');
    expect(text).toContain('SHOP_CONNECTORS.acme.timeout: must be a positive duration');
    expect(text).toContain('SHOP_CONNECTORS.beta.type: is not a connector type: use "webhook", "shopify", "woocommerce"');
    expect(text).toContain('SHOP_CONNECTORS.gamma.url: must not carry credentials');
    expect(text).toContain('SHOP_CONNECTORS.gamma.secret: unknown field');
    expect(text).toContain('SHOP_CONNECTORS.gamma.secrets: is required');
    expect(text).toContain('SHOP_CONNECTORS["my shop"].secrets: needs at least one secret');
    for (const leaked of ['tooshort', 'plain-text-secret', secret.slice(6), 'pw@']) expect(text).not.toContain(leaked);
  });

  it('invalid JSON, an unreadable file, or both variables set', () => {
    // V8 quotes the text around a JSON syntax error; the secret next to it must not be echoed.
    const broken = problems({ SHOP_CONNECTORS: `{"acme": {"secrets": ["${secret}"] ` });
    expect(broken).toMatch(/SHOP_CONNECTORS: is not valid JSON/);
    expect(broken).not.toContain(secret.slice(6, 20));
    const missing = path.join(dir, 'missing.json');
    expect(problems({ SHOP_CONNECTORS_FILE: missing })).toContain(`SHOP_CONNECTORS_FILE: cannot read ${missing}: ENOENT`);
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ acme: { type: 'webhook', url: 'https://a.example', secrets: ['nope'] } }));
    expect(problems({ SHOP_CONNECTORS_FILE: file })).toContain(
      `SHOP_CONNECTORS_FILE.acme.secrets[0]: must look like whsec_<base64> (${file})`,
    );
    expect(problems({ SHOP_CONNECTORS: '{}', SHOP_CONNECTORS_FILE: file })).toContain('not both');
    expect(problems({ SHOP_CONNECTORS: '[]' })).toContain('SHOP_CONNECTORS: must be a JSON object');
  });

  it('a connector printed, logged or spread shows no secret', () => {
    const c = loadShopConnectors({
      SHOP_CONNECTORS: JSON.stringify({ acme: { type: 'webhook', url: 'https://a.example', secrets: [secret] } }),
    });
    const acme = c.connectorFor('acme') as WebhookConnector;
    for (const text of [JSON.stringify(acme), inspect(acme), JSON.stringify({ ...acme }), JSON.stringify(c)]) {
      expect(text).not.toContain(secret.slice(6));
    }
    expect(acme.secrets).toEqual([secret]);
    expect(Object.isFrozen(acme)).toBe(true);
  });

  it('reads shopify and woocommerce connectors: defaults, credentials inline or from a file, none of them printable', () => {
    const tokenFile = path.join(dir, 'shopify-token');
    writeFileSync(tokenFile, 'shpat_from_file_0123456789\n');
    const c = loadShopConnectors({
      SHOP_CONNECTORS: JSON.stringify({
        acme: { type: 'shopify', storeDomain: 'Acme.myshopify.com', accessTokenFile: tokenFile },
        app: {
          type: 'shopify',
          storeDomain: 'app.myshopify.com',
          clientId: 'client-1',
          clientSecret: 'shpss_inline_secret_value',
          carriers: { 'my-courier': 'Other Co' },
        },
        wine: {
          type: 'woocommerce',
          url: 'https://wine.example/shop/',
          consumerKey: 'ck_inline_key',
          consumerSecret: 'cs_inline_secret',
          auth: 'query-string',
        },
      }),
    });
    const acme = c.connectorFor('acme') as ShopifyConnector;
    expect(acme).toMatchObject({
      type: 'shopify',
      storeDomain: 'acme.myshopify.com',
      apiVersion: '2026-10',
      adminOrigin: 'https://acme.myshopify.com',
      notifyCustomer: false,
    });
    expect(acme.credentials).toEqual({ kind: 'token', accessToken: 'shpat_from_file_0123456789' });
    expect(acme.carriers['dhl-express']).toEqual({ company: 'DHL Express' });
    const app = c.connectorFor('app') as ShopifyConnector;
    expect(app.credentials).toEqual({ kind: 'client_credentials', clientId: 'client-1', clientSecret: 'shpss_inline_secret_value' });
    expect(app.carriers['my-courier']).toEqual({ company: 'Other Co' });
    const wine = c.connectorFor('wine') as WooCommerceConnector;
    expect(wine).toMatchObject({
      type: 'woocommerce',
      siteUrl: 'https://wine.example/shop',
      auth: 'query-string',
      deliveredStatus: 'completed',
      rejectedStatus: 'on-hold',
      customerNotes: false,
    });
    expect(wine.credentials).toEqual({ consumerKey: 'ck_inline_key', consumerSecret: 'cs_inline_secret' });
    for (const text of [JSON.stringify(c.connectorFor('acme')), inspect(app), JSON.stringify({ ...wine })]) {
      for (const hidden of ['shpat_from_file', 'shpss_inline', 'ck_inline', 'cs_inline']) expect(text).not.toContain(hidden);
    }
  });

  it('names each wrong platform setting with its JSON path and never echoes a credential', () => {
    const text = problems({
      SHOP_CONNECTORS: JSON.stringify({
        a: { type: 'shopify', storeDomain: 'acme.example.com', apiVersion: '2026-11', accessToken: 'shpat_secret_value' },
        b: { type: 'shopify', storeDomain: 'b.myshopify.com' },
        c: {
          type: 'shopify',
          storeDomain: 'c.myshopify.com',
          accessToken: 'shpat_secret_value',
          clientId: 'x',
          clientSecret: 'shpss_secret_value',
        },
        d: { type: 'woocommerce', url: 'http://shop.example', consumerKey: 'ck_secret_value', consumerSecret: 'cs_secret_value' },
        e: { type: 'woocommerce', url: 'https://e.example', consumerKey: 'ck_secret_value', consumerSecretFile: path.join(dir, 'missing') },
        f: {
          type: 'woocommerce',
          url: 'https://f.example',
          consumerKey: 'ck secret',
          consumerSecret: 'cs_secret_value',
          deliveredStatus: 'Done!',
        },
      }),
    });
    expect(text).toContain("SHOP_CONNECTORS.a.storeDomain: must be the store's myshopify.com domain");
    expect(text).toContain('SHOP_CONNECTORS.a.apiVersion: must be a quarterly Admin API version such as 2026-10');
    expect(text).toContain(
      'SHOP_CONNECTORS.b.accessToken: is required: give accessToken (or accessTokenFile), or clientId with clientSecret',
    );
    expect(text).toContain('SHOP_CONNECTORS.c.accessToken: set either accessToken or clientId with clientSecret, not both');
    expect(text).toContain('SHOP_CONNECTORS.d.url: must be https://');
    expect(text).toMatch(/SHOP_CONNECTORS\.e\.consumerSecretFile: cannot read .*missing: ENOENT/);
    expect(text).toContain('SHOP_CONNECTORS.f.consumerKey: must not contain whitespace');
    expect(text).toContain('SHOP_CONNECTORS.f.deliveredStatus: must be an order status slug');
    expect(text).not.toMatch(/secret_value|ck secret/);
  });

  it('without reading secret files (the import asks only for connector types), a missing file is no error', () => {
    const c = loadShopConnectors(
      {
        SHOP_CONNECTORS: JSON.stringify({
          e: { type: 'woocommerce', url: 'https://e.example', consumerKeyFile: '/nonexistent/k', consumerSecretFile: '/nonexistent/s' },
        }),
      },
      { readSecretFiles: false },
    );
    expect(c.connectorFor('e')?.type).toBe('woocommerce');
  });
});
