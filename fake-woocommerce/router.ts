/**
 * Which route a method and path under /wp-json name, as WordPress matches its registered
 * routes (case-insensitive, a trailing slash allowed, ids numeric). A path or method no route
 * takes is rest_no_route (404), also for every route of an extension that is not installed.
 */

export const ROUTE_KEYS = [
  'GET orders',
  'GET order',
  'PUT order',
  'GET notes',
  'POST notes',
  'GET note',
  'DELETE note',
  'GET shipment-trackings',
  'POST shipment-trackings',
  'GET shipment-tracking',
  'DELETE shipment-tracking',
  'GET providers',
  'GET product',
] as const;
export type RouteKey = (typeof ROUTE_KEYS)[number];

/** Routes that change the store (commit-then-drop applies to these). */
export const WRITE_ROUTES: ReadonlySet<RouteKey> = new Set([
  'PUT order',
  'POST notes',
  'DELETE note',
  'POST shipment-trackings',
  'DELETE shipment-tracking',
]);

export interface Matched {
  key: RouteKey;
  /** The order id, or the product id for 'GET product'. */
  id?: number;
  /** Note id or tracking id. */
  itemId?: string;
  /** Route of the Shipment Tracking extension (absent when it is not installed). */
  extension: boolean;
}

const EDIT_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const isId = (s: string | undefined): s is string => s !== undefined && /^\d+$/.test(s);

function wcV3(method: string, rest: string[]): Matched | null {
  const [resource, id, sub, itemId, ...more] = rest;
  if (more.length > 0 || (id !== undefined && !isId(id))) return null;
  const base = { id: id === undefined ? undefined : Number(id), extension: false };
  if (resource === 'orders' && id === undefined) return method === 'GET' ? { ...base, key: 'GET orders' } : null;
  if (resource === 'orders' && sub === undefined) {
    if (method === 'GET') return { ...base, key: 'GET order' };
    return EDIT_METHODS.has(method) ? { ...base, key: 'PUT order' } : null;
  }
  if (resource === 'orders' && sub === 'notes' && itemId === undefined) {
    if (method === 'GET') return { ...base, key: 'GET notes' };
    return method === 'POST' ? { ...base, key: 'POST notes' } : null;
  }
  if (resource === 'orders' && sub === 'notes' && isId(itemId)) {
    if (method === 'GET') return { ...base, key: 'GET note', itemId };
    return method === 'DELETE' ? { ...base, key: 'DELETE note', itemId } : null;
  }
  if (resource === 'products' && id !== undefined && sub === undefined) return method === 'GET' ? { ...base, key: 'GET product' } : null;
  return null;
}

function shipmentTracking(method: string, rest: string[], rawItemId: string | undefined): Matched | null {
  const providers: Matched = { key: 'GET providers', extension: true };
  if (rest.length === 2 && rest[0] === 'shipment-trackings' && rest[1] === 'providers') return method === 'GET' ? providers : null;
  const [orders, id, trackings, itemId, ...more] = rest;
  if (orders !== 'orders' || !isId(id) || trackings !== 'shipment-trackings' || more.length > 0) return null;
  const base = { id: Number(id), extension: true };
  if (itemId === undefined) {
    if (method === 'GET') return { ...base, key: 'GET shipment-trackings' };
    return method === 'POST' ? { ...base, key: 'POST shipment-trackings' } : null;
  }
  // The extension's deprecated per-order copy of the providers route.
  if (itemId === 'providers') return method === 'GET' ? providers : null;
  if (!/^[a-f0-9]{0,32}$/.test(itemId)) return null;
  // The route's pattern is case-insensitive, the id comparison behind it is not.
  const tracking = { ...base, itemId: rawItemId ?? itemId };
  if (method === 'GET') return { ...tracking, key: 'GET shipment-tracking' };
  return method === 'DELETE' ? { ...tracking, key: 'DELETE shipment-tracking' } : null;
}

/** `segments` are the path after /wp-json, already decoded. */
export function matchRoute(method: string, segments: string[]): Matched | null {
  const lower = segments.map((s) => s.toLowerCase());
  const [vendor, version, ...rest] = lower;
  if (vendor === 'wc' && version === 'v3') return wcV3(method, rest);
  if (vendor === 'wc-shipment-tracking' && version === 'v3') return shipmentTracking(method, rest, segments[5]);
  return null;
}
