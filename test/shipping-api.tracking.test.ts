/**
 * Tracking progression of the fake, read through the client: 404 -> Pending -> InfoReceived ->
 * InTransit -> terminal tag chosen by the EXCEPTION / CANCEL / STALL markers. Waits by polling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShippingApiClient } from '../shipping-api/client';
import type { LabelRequest, TrackingRecord } from '../shipping-api/contract';
import { ShippingApiError } from '../shipping-api/errors';
import { startFakeShippingApi, type FakeAccount, type FakeShippingApi } from '../fake-shipping-api/server';
import { sampleLabelRequest } from './helpers/api';
import { waitFor } from './helpers/wait';

// Long enough that a poll (every 10 ms) cannot skip a stage even on a busy machine.
const STEP_MS = 250;
const account: FakeAccount = { name: 'main', apiKey: 'key-main', apiToken: 'token-main' };

let api: FakeShippingApi;
let client: ShippingApiClient;

beforeAll(async () => {
  api = await startFakeShippingApi({ accounts: [account], trackingStepMs: STEP_MS });
  client = new ShippingApiClient({ baseUrl: api.baseUrl, apiKey: account.apiKey, apiToken: account.apiToken });
});

afterAll(async () => {
  await client.close();
  await api.close();
});

type Observation = { state: string; tracking: TrackingRecord | null };

/** Polls the tracking of a label until `until` holds; returns the first observation of each distinct state. */
async function observe(id: string, until: (obs: Observation[]) => boolean, timeoutMs = 5_000): Promise<Observation[]> {
  const seen: Observation[] = [];
  await waitFor(
    async () => {
      let obs: Observation;
      try {
        const tracking = await client.getTracking(id);
        obs = { state: tracking.tag, tracking };
      } catch (e) {
        if (!(e instanceof ShippingApiError) || e.kind !== 'not_found') throw e;
        obs = { state: '404', tracking: null };
      }
      if (seen.at(-1)?.state !== obs.state) seen.push(obs);
      return until(seen) ? true : undefined;
    },
    { timeoutMs, intervalMs: 10, what: `tracking of ${id}` },
  );
  return seen;
}

const withMarkers = (numbers: NonNullable<LabelRequest['order']>): LabelRequest => sampleLabelRequest({ order: numbers });
const terminal = (obs: Observation[]) => ['Delivered', 'Exception', 'Cancelled'].includes(obs.at(-1)!.state);

describe('tracking progression', () => {
  it('walks 404 -> Pending -> InfoReceived -> InTransit -> Delivered, with the order following', async () => {
    const label = await client.createLabel(sampleLabelRequest());
    expect(label.courierTrackingNumber).toBeNull();
    expect((await client.getOrder(label.id)).order.status).toBe('created');

    const seen = await observe(label.id, terminal);
    expect(seen.map((o) => o.state)).toEqual(['404', 'Pending', 'InfoReceived', 'InTransit', 'Delivered']);
    const [, pending, info, transit, delivered] = seen.map((o) => o.tracking!);

    expect(pending).toMatchObject({
      id: label.id,
      tag: 'Pending',
      subtag: 'Pending_001',
      trackingNumber: null,
      checkpoints: [],
      slug: 'dhl-express',
    });
    expect(info!.trackingNumber).toMatch(/^\d{10}$/);
    expect(info!.checkpoints).toHaveLength(1);
    expect(info!.checkpoints[0]).toMatchObject({ tag: 'InfoReceived', city: 'Hamburg', countryRegion: 'DE' });
    expect(transit!.checkpoints.map((c) => c.tag)).toEqual(['InfoReceived', 'InTransit']);
    expect(delivered).toMatchObject({ tag: 'Delivered', subtag: 'Delivered_001', trackingNumber: info!.trackingNumber });
    expect(delivered!.checkpoints.map((c) => c.tag)).toEqual(['InfoReceived', 'InTransit', 'Delivered']);
    expect(delivered!.checkpoints[2]).toMatchObject({ city: 'Amsterdam', countryRegion: 'NL', location: 'Amsterdam, NL' });

    // Checkpoints are chronological, with an explicit UTC offset, and every field is a string.
    const times = delivered!.checkpoints.map((c) => Date.parse(c.checkpointTime));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    for (const c of delivered!.checkpoints) {
      expect(c.checkpointTime).toMatch(/[+-]\d{2}:\d{2}$/);
      for (const value of Object.values(c)) expect(typeof value).toBe('string');
    }

    // The order carries the tracking number and the final ladder step.
    const detail = await client.getOrder(label.id);
    expect(detail.order).toMatchObject({
      status: 'delivered',
      courierTrackingNumber: info!.trackingNumber,
      exceptionState: null,
      exceptionStateAt: null,
    });
    expect(detail.carrierDetails.orderNumbers.trackingNumber).toBe(info!.trackingNumber);
    expect(await client.getLabel(label.id)).toMatchObject({ courierTrackingNumber: info!.trackingNumber });
  });

  it('markers choose the terminal tag: EXCEPTION, CANCEL (case-insensitive, any order number field)', async () => {
    const exception = await client.createLabel(withMarkers({ customerOrderNumber: `so-exception-${Date.now()}` }));
    const cancelled = await client.createLabel(
      withMarkers({ customerOrderNumber: `SO-${Date.now()}-c`, orderNumbers: { referenceNumbers: ['a', 'please-Cancel-me'] } }),
    );
    const byPlatform = await client.createLabel(
      withMarkers({ customerOrderNumber: `SO-${Date.now()}-p`, orderNumbers: { platformOrderNumber: '#EXCEPTION-1' } }),
    );

    const [seenException, seenCancelled, seenPlatform] = await Promise.all([
      observe(exception.id, terminal),
      observe(cancelled.id, terminal),
      observe(byPlatform.id, terminal),
    ]);
    expect(seenException.map((o) => o.state)).toEqual(['404', 'Pending', 'InfoReceived', 'InTransit', 'Exception']);
    expect(seenException.at(-1)!.tracking).toMatchObject({ subtag: 'Exception_007' });
    expect(seenException.at(-1)!.tracking!.checkpoints.map((c) => c.tag)).toEqual(['InfoReceived', 'InTransit', 'Exception']);
    expect(seenCancelled.at(-1)!.tracking).toMatchObject({ tag: 'Cancelled', subtag: 'Cancelled_001' });
    expect(seenCancelled.at(-1)!.tracking!.checkpoints).toHaveLength(3);
    expect(seenPlatform.at(-1)!.state).toBe('Exception');

    const exceptionOrder = (await client.getOrder(exception.id)).order;
    expect(exceptionOrder).toMatchObject({ status: 'shipping_to_destination', exceptionState: 'carrier_hold' });
    expect(exceptionOrder.exceptionStateAt).not.toBeNull();
    expect(exceptionOrder.exceptionReason).toMatch(/address/i);
    expect((await client.getOrder(cancelled.id)).order).toMatchObject({ status: 'failed', exceptionState: 'trashed' });
  });

  it('STALL never reaches a terminal tag: InTransit forever', async () => {
    const stalled = await client.createLabel(withMarkers({ customerOrderNumber: `SO-stall-${Date.now()}` }));
    const seen = await observe(stalled.id, (obs) => obs.at(-1)!.state === 'InTransit');
    expect(seen.map((o) => o.state)).toEqual(['404', 'Pending', 'InfoReceived', 'InTransit']);
    // Well past the point where other labels are terminal (>= 4 steps), still InTransit.
    await waitFor(async () =>
      Date.now() - Date.parse((await client.getOrder(stalled.id)).order.createdAt) > 6 * STEP_MS ? true : undefined,
    );
    const later = await client.getTracking(stalled.id);
    expect(later).toMatchObject({ tag: 'InTransit' });
    expect(later.checkpoints).toHaveLength(2);
    expect((await client.getOrder(stalled.id)).order.status).toBe('in_transit_last_mile');
  });
});
