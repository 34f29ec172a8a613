import type { ShippingApiClient } from './client';
import type { TrackingRecord } from './contract';
import { ShippingApiError } from './errors';

/** GET /tracking; null while the courier has not registered the parcel (404), which is normal (the pollers' too). */
export async function trackingOrNull(api: ShippingApiClient, labelId: string, signal: AbortSignal): Promise<TrackingRecord | null> {
  try {
    return await api.getTracking(labelId, { signal });
  } catch (err) {
    if (err instanceof ShippingApiError && err.kind === 'not_found') return null;
    throw err;
  }
}
