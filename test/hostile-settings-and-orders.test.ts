/**
 * Hostile stores' smaller points (issue 28, findings 8 to 10) that need no server: connector
 * settings refused or accepted, webhook keys for rotation, what the mapping refuses, the
 * scrubbing of secrets from a store's text, and a shared token fetch that one caller's
 * cancellation does not end for the others.
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/settings';
import { loadShopConnectors, type ShopifyConnector, type WooCommerceConnector } from '../platforms/connectors';
import { scrubSecrets } from '../platforms/connection/secrets';
import { ShopifyToken } from '../platforms/shopify/token';
import { mapOrder } from '../shop-import/mapping';
import type { PlatformOrder } from '../domain/platform-order';
import { ImportMapping } from '../config/shop-import';

const MAPPING = { defaultService: { courier: 'dhl-express', productCode: 'ECONOMY_SELECT' } };

function load(shops: Record<string, unknown>) {
  return loadShopConnectors({ SHOP_CONNECTORS: JSON.stringify(shops) });
}

function problem(shops: Record<string, unknown>): string {
  try {
    load(shops);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const shopify = (extra: Record<string, unknown> = {}) => ({
  type: 'shopify',
  storeDomain: 'acme.myshopify.com',
  accessToken: 'shpat_abcdef',
  ...extra,
});
const woo = (extra: Record<string, unknown> = {}) => ({
  type: 'woocommerce',
  url: 'https://wine.example',
  consumerKey: 'ck_abcdef',
  consumerSecret: 'cs_abcdef',
  ...extra,
});

describe('connector settings a hostile or careless configuration gives', () => {
  it('Shopify adminUrl over http:// to another host is refused like WooCommerce; loopback stays allowed', () => {
    expect(problem({ acme: shopify({ adminUrl: 'http://shop-proxy.example' }) })).toMatch(
      /SHOP_CONNECTORS\.acme\.adminUrl: must be https:\/\/ .*http:\/\/ only to loopback/,
    );
    expect((load({ acme: shopify({ adminUrl: 'http://127.0.0.1:4020' }) }).connectorFor('acme') as ShopifyConnector).adminOrigin).toBe(
      'http://127.0.0.1:4020',
    );
  });

  it('webhookSecret takes a list for a rotation, on both platforms (Shopify keeps the client secret when none is given)', () => {
    const c = load({
      acme: shopify({ webhookSecret: ['old-key-1234', 'new-key-5678'] }),
      wine: woo({ webhookSecret: ['old-key-1234', 'new-key-5678'] }),
      app: shopify({ accessToken: undefined, clientId: 'id', clientSecret: 'client-secret-1' }),
    });
    expect((c.connectorFor('acme') as ShopifyConnector).webhookSecrets).toEqual(['old-key-1234', 'new-key-5678']);
    expect((c.connectorFor('wine') as WooCommerceConnector).webhookSecrets).toEqual(['old-key-1234', 'new-key-5678']);
    expect((c.connectorFor('app') as ShopifyConnector).webhookSecrets).toEqual(['client-secret-1']);
    expect(problem({ wine: woo({ webhookSecret: [] }) })).toMatch(/SHOP_CONNECTORS\.wine\.webhookSecret: /);
  });

  it('a shop id of 300 characters, an orderIdPrefix with NUL and a budgetShare of 1e-300 are refused; an overlap of 0s is accepted', () => {
    expect(problem({ ['s'.repeat(300)]: shopify() })).toMatch(/a shop id must be 1 to 100 characters/);
    const imported = (extra: Record<string, unknown>) => shopify({ import: { mapping: MAPPING, ...extra } });
    expect(problem({ acme: imported({ mapping: { ...MAPPING, orderIdPrefix: 'A\u0000' } }) })).toMatch(
      /import\.mapping\.orderIdPrefix: must not contain control characters/,
    );
    expect(problem({ acme: imported({ budgetShare: 1e-300 }) })).toMatch(/import\.budgetShare/);
    const zero = load({ acme: imported({ overlap: '0s' }) }).connectorFor('acme') as ShopifyConnector;
    expect(zero.import?.overlap).toBe(0);
    expect(problem({ acme: imported({ every: '0s' }) })).toMatch(/import\.every: must be a positive duration/);
  });
});

describe('what the mapping refuses', () => {
  const base: PlatformOrder = {
    platformOrderId: '1',
    name: '#1',
    number: '1',
    modifiedAt: '2026-11-25T10:00:00Z',
    shippingMethod: { title: 'Standard', code: null },
    currency: 'EUR',
    email: null,
    shipTo: {
      firstName: 'A',
      lastName: 'B',
      company: null,
      streetLines: ['x'],
      city: 'Wien',
      state: null,
      postalCode: '1010',
      countryCode: 'AT',
      phone: null,
    },
    shipFrom: {
      firstName: null,
      lastName: null,
      company: 'W',
      streetLines: ['y'],
      city: 'Porto',
      state: null,
      postalCode: '4050',
      countryCode: 'PT',
      phone: null,
    },
    lines: [],
    skip: null,
    problem: null,
    merchant: { status: 'open', platformStatus: 'PAID', lines: [] },
  };
  const line = (patch: Partial<PlatformOrder['lines'][number]>) => ({
    sku: 'S',
    title: 'T',
    quantity: 1,
    unitPrice: 10,
    unitWeight: { value: 1, unit: 'kg' as const },
    ...patch,
  });

  it.each([
    ['a negative quantity', { quantity: -3 }, 'lines[0].quantity'],
    ['a zero quantity', { quantity: 0 }, 'lines[0].quantity'],
    ['a weight of 1e15 kg', { unitWeight: { value: 1e15, unit: 'kg' as const } }, 'lines[0].weight'],
    ['a negative price', { unitPrice: -5 }, 'lines[0].unitPrice'],
  ])('%s is a problem naming the line', (_what, patch, field) => {
    const mapped = mapOrder('acme', { ...base, lines: [line(patch)] }, ImportMapping.parse(MAPPING));
    expect(mapped.ok).toBe(false);
    expect(!mapped.ok && mapped.problems.map((p) => p.field)).toContain(field);
  });

  it('a sane line maps', () => {
    expect(mapOrder('acme', { ...base, lines: [line({})] }, ImportMapping.parse(MAPPING)).ok).toBe(true);
  });
});

describe('scrubSecrets', () => {
  it('removes the known secrets (raw and URL-encoded) and every credential parameter, whoever sent it', () => {
    const text =
      'GET /wp-json/wc/v3/orders?consumer_key=ck_live_123&consumer_secret=cs%2Flive blocked; body {"client_secret":"other-secret","grant_type":"client_credentials"} token=shpat_known+1 access_token=zzz';
    const out = scrubSecrets(text, ['shpat_known+1', 'cs/live']);
    expect(out).not.toMatch(/ck_live_123|cs%2Flive|other-secret|shpat_known|zzz/);
    expect(out).toContain('consumer_key=[redacted]');
    expect(out).toContain('"client_secret":"[redacted]"');
    expect(out).toContain('grant_type');
  });
});

describe('a shared client-credentials token fetch', () => {
  it("one caller's cancellation ends its own wait, not the fetch the other caller waits for", async () => {
    const server = createServer((req, res) => {
      setTimeout(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'tok', expires_in: 3600 })),
        300,
      );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const connector = {
        adminOrigin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        timeoutMs: 5_000,
        credentials: { kind: 'client_credentials', clientId: 'id', clientSecret: 'secret' },
      } as unknown as ShopifyConnector;
      const token = new ShopifyToken(connector);
      const first = new AbortController();
      const cancelled = token.get(first.signal);
      const second = token.get(new AbortController().signal);
      first.abort(new Error('first caller cancelled'));
      await expect(cancelled).rejects.toThrow('first caller cancelled');
      await expect(second).resolves.toBe('tok');
    } finally {
      server.close();
    }
  });
});
