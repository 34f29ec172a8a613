/**
 * WooCommerce's REST authentication with a consumer key and secret. The real store accepts
 * HTTP Basic (`ck:cs`) and the `consumer_key`/`consumer_secret` query string only over HTTPS
 * (plain HTTP needs OAuth 1.0a signatures); this fake on loopback HTTP accepts both as if it
 * were HTTPS. A wrong key or secret fails every request to a wc/ or wc-… route at once; no
 * credentials at all leaves the request anonymous, and each route's permission check then
 * refuses it with its own 401 (public routes such as the providers list still answer).
 */
import type { IncomingMessage } from 'node:http';
import { header } from '../local-http';
import { wpError, type Reply } from './replies';
import type { RouteKey } from './router';
import type { WooState } from './state';

export type Auth = { kind: 'user' } | { kind: 'anonymous' } | { kind: 'refused'; reply: Reply };

function basicCredentials(req: IncomingMessage): { key: string; secret: string } | null {
  const value = header(req, 'authorization');
  const m = value === undefined ? null : /^Basic\s+(\S+)\s*$/i.exec(value);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const key = colon < 0 ? decoded : decoded.slice(0, colon);
  // PHP_AUTH_USER must not be empty for WooCommerce to try it.
  return key === '' ? null : { key, secret: colon < 0 ? '' : decoded.slice(colon + 1) };
}

function queryCredentials(url: URL): { key: string; secret: string } | null {
  const key = url.searchParams.get('consumer_key');
  const secret = url.searchParams.get('consumer_secret');
  return key && secret ? { key, secret } : null;
}

export function authenticate(state: WooState, req: IncomingMessage, url: URL): Auth {
  // A host that strips Authorization leaves PHP without PHP_AUTH_USER: as if none was sent.
  const credentials = (state.stripAuthorization ? null : basicCredentials(req)) ?? queryCredentials(url);
  if (credentials === null) return { kind: 'anonymous' };
  if (credentials.key !== state.consumerKey) {
    return { kind: 'refused', reply: wpError(401, 'woocommerce_rest_authentication_error', 'Consumer key is invalid.') };
  }
  if (credentials.secret !== state.consumerSecret) {
    return { kind: 'refused', reply: wpError(401, 'woocommerce_rest_authentication_error', 'Consumer secret is invalid.') };
  }
  return { kind: 'user' };
}

const LIST = ['woocommerce_rest_cannot_view', 'Sorry, you cannot list resources.'] as const;
const VIEW = ['woocommerce_rest_cannot_view', 'Sorry, you cannot view this resource.'] as const;
const CREATE = ['woocommerce_rest_cannot_create', 'Sorry, you are not allowed to create resources.'] as const;

/** Each route's permission callback refusing an anonymous request; null for a public route. */
const REFUSALS: Record<RouteKey, readonly [string, string] | null> = {
  'GET orders': LIST,
  'GET order': VIEW,
  'PUT order': ['woocommerce_rest_cannot_edit', 'Sorry, you are not allowed to edit this resource.'],
  'GET notes': LIST,
  'POST notes': CREATE,
  'GET note': VIEW,
  'DELETE note': ['woocommerce_rest_cannot_delete', 'Sorry, you are not allowed to delete this resource.'],
  'GET shipment-trackings': LIST,
  'POST shipment-trackings': CREATE,
  'GET shipment-tracking': VIEW,
  'DELETE shipment-tracking': ['woocommerce_rest_cannot_delete', 'Sorry, you are not allowed to delete this resource.'],
  'GET providers': null,
  'GET product': VIEW,
};

export function permissionRefusal(route: RouteKey): Reply | null {
  const refusal = REFUSALS[route];
  return refusal === null ? null : wpError(401, refusal[0], refusal[1]);
}
