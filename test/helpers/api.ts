/**
 * Helpers for tests that talk to the fake API: a valid label request, raw HTTP and capturing a
 * ShippingApiError.
 */
import type { LabelRequest } from '../../shipping-api/contract';
import { ShippingApiError } from '../../shipping-api/errors';

let sequence = 0;

/** A complete, valid label request for DHL Express; `overrides` replace top-level fields. */
export function sampleLabelRequest(overrides: Partial<LabelRequest> = {}): LabelRequest {
  sequence += 1;
  return {
    idempotencyKey: `test-${process.pid}-${Date.now()}-${sequence}`,
    courier: 'dhl-express',
    service: { productCode: 'EXPRESS_WORLDWIDE' },
    shipment: {
      shipFrom: {
        contact: { firstName: 'Lena', lastName: 'Schmidt', phone: '+49 30 1234567', email: 'shipping@shop.example' },
        address: { streetLines: ['Lagerstraße 5'], city: 'Hamburg', state: 'HH', postalCode: '20095', countryCode: 'DE' },
      },
      shipTo: {
        contact: { firstName: 'Jan', lastName: 'de Vries', phone: '+31 20 7654321', email: 'jan@example.nl' },
        address: { streetLines: ['Keizersgracht 12'], city: 'Amsterdam', state: 'NH', postalCode: '1015 CS', countryCode: 'NL' },
      },
      parcels: [
        {
          weight: 1.25,
          dimension: { length: 30, width: 20, height: 10 },
          items: [
            {
              descriptionEn: 'Ceramic mug',
              descriptionLocal: 'Keramiktasse',
              quantity: 2,
              unitPrice: { amount: 12.5, currency: 'EUR' },
              unitWeight: 0.4,
            },
          ],
        },
      ],
    },
    label: { format: 'PDF' },
    units: { weight: 'kg', dimension: 'cm' },
    order: {
      customerOrderNumber: `SO-${sequence}-${Date.now()}`,
      orderNumbers: { platformOrderNumber: `#${1000 + sequence}`, referenceNumbers: [`REF-${sequence}`] },
    },
    ...overrides,
  };
}

/** Awaits a promise that must reject with a ShippingApiError, and returns that error. */
export async function shippingError(promise: Promise<unknown>): Promise<ShippingApiError> {
  let value: unknown;
  try {
    value = await promise;
  } catch (e) {
    if (e instanceof ShippingApiError) return e;
    throw new Error(`expected a ShippingApiError, got ${String(e)}`, { cause: e });
  }
  throw new Error(`expected a ShippingApiError, but the call resolved with ${JSON.stringify(value)}`);
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/** A plain HTTP call (global fetch), for what the typed client cannot send or does not expose. */
export async function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  { headers = {}, body }: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<RawAnswer> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** The two authentication headers of an account. */
export function authHeaders(account: { apiKey: string; apiToken: string }): Record<string, string> {
  return { 'x-rr-apikey': account.apiKey, 'x-rr-apitoken': account.apiToken };
}

/** Tracking polls of the fake API answer 503 until the returned function is called: a parcel stays where it is. */
export function holdTrackingBack(api: { setFaults(patch: { serverErrorRate: number; endpoints: string[] | null }): unknown }): () => void {
  api.setFaults({ serverErrorRate: 1, endpoints: ['GET /tracking'] });
  return () => void api.setFaults({ serverErrorRate: 0, endpoints: null });
}
