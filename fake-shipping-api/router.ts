/**
 * Which endpoint a method and path name. Wrong paths and wrong methods are answered here,
 * before authentication, as the spec's 404 and 405.
 */
import { methodNotAllowed, standard, type Answer } from './answers';
import type { EndpointKey } from './faults';

export type Route = { kind: 'api'; key: EndpointKey; id?: string } | { kind: 'status'; answer: Answer };

const API_PATHS = ['labels', 'orders', 'tracking', 'couriers', 'products'];

/** The stats key a request that matched no endpoint is counted under. */
export function unmatchedKey(method: string, segments: string[]): string {
  return API_PATHS.includes(segments[0] ?? '') ? `${method} /${segments[0]}` : `${method} (unmatched)`;
}

export function route(method: string, segments: string[]): Route {
  const [first, second, ...rest] = segments;
  const wrongMethod = (allow: string): Route => ({ kind: 'status', answer: methodNotAllowed(method, allow) });
  if (rest.length === 0) {
    if (first === 'labels' && second === undefined) return method === 'POST' ? { kind: 'api', key: 'POST /labels' } : wrongMethod('POST');
    if ((first === 'couriers' || first === 'products') && second === undefined) {
      return method === 'GET' ? { kind: 'api', key: `GET /${first}` } : wrongMethod('GET');
    }
    if ((first === 'labels' || first === 'orders' || first === 'tracking') && second !== undefined) {
      return method === 'GET' ? { kind: 'api', key: `GET /${first}`, id: second } : wrongMethod('GET');
    }
  }
  return { kind: 'status', answer: standard(404, 'Resource not found') };
}
