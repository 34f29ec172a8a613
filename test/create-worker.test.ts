/** The worker's activity factories are merged with a check, not a spread that lets a name clash pass. */
import { describe, expect, it } from 'vitest';
import { createActivities } from '../activities/shipping-api';
import { createShopDeliveryActivities } from '../activities/shop-delivery';
import { ShippingApiClient } from '../shipping-api/client';
import { loadShopConnectors } from '../platforms/connectors';
import { DEFAULT_TRACKING_POLICY } from '../domain/shipment';
import { mergeActivities } from '../worker/create-worker';

describe('mergeActivities', () => {
  it('refuses two factories that define the same activity, naming it', () => {
    const a = { createLabel: async () => 1, readOrder: async () => 2 };
    const b = { createLabel: async () => 3, deliverShopEvents: async () => 4 };
    expect(() => mergeActivities(a, b)).toThrow('activity names defined twice: createLabel');
  });

  it("merges the worker's real factories, which share no name", async () => {
    const api = new ShippingApiClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiToken: 't' });
    const connectors = loadShopConnectors({});
    const shipment = createActivities(api, DEFAULT_TRACKING_POLICY, { shopConnectors: connectors });
    const delivery = createShopDeliveryActivities(connectors);
    const merged = mergeActivities(shipment, delivery);
    expect(Object.keys(merged).sort()).toEqual([...Object.keys(shipment), ...Object.keys(delivery)].sort());
    await api.close();
  });
});
