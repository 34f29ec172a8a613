/**
 * A stored label and everything the fake derives from it as time passes: the label result,
 * the label document, the order detail and the tracking record. All shapes are the contract's.
 */
import type {
  CarrierDetails,
  Checkpoint,
  LabelErrorObject,
  LabelRequest,
  LabelResult,
  Order,
  OrderDetail,
  TrackingRecord,
} from '../shipping-api/contract';
import { findCourier, INTEGRATION_CODE, type Hub } from './catalog';

/** How a created label ends, from the markers in its order numbers. */
export type Ending = 'Delivered' | 'Exception' | 'Cancelled' | 'Stall';

export interface LabelRecord {
  id: string;
  account: string;
  idempotencyKey: string;
  /** Canonical JSON of the validated request, to detect replays with a different payload. */
  fingerprint: string;
  request: LabelRequest;
  status: 'created' | 'failed';
  courier: string;
  customerOrderNumber: string;
  courierOrderNumber: string | null;
  /** Drawn at creation, revealed once tracking reaches InfoReceived. */
  futureTrackingNumber: string | null;
  error: LabelErrorObject | null;
  createdAtMs: number;
  ending: Ending;
  /** The answer of the first creation, replayed verbatim for the same idempotency key. */
  originalResult: LabelResult;
}

/** Canonical JSON (sorted keys) so two equal payloads compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Deterministic ending: EXCEPTION wins over CANCEL, which wins over STALL; else Delivered. */
export function endingOf(request: LabelRequest): Ending {
  const order = request.order;
  const haystack = [order?.customerOrderNumber, order?.orderNumbers?.platformOrderNumber, ...(order?.orderNumbers?.referenceNumbers ?? [])]
    .filter((s): s is string => typeof s === 'string')
    .map((s) => s.toUpperCase());
  if (haystack.some((s) => s.includes('EXCEPTION'))) return 'Exception';
  if (haystack.some((s) => s.includes('CANCEL'))) return 'Cancelled';
  if (haystack.some((s) => s.includes('STALL'))) return 'Stall';
  return 'Delivered';
}

/**
 * Tracking stage reached at `now`: 0 = not registered yet, 1 = Pending, 2 = InfoReceived,
 * 3 = InTransit, 4 = terminal (a stalled label stays at 3).
 */
export function stageAt(record: LabelRecord, now: number, stepMs: number): 0 | 1 | 2 | 3 | 4 {
  const elapsed = Math.max(0, now - record.createdAtMs);
  const stage = stepMs <= 0 ? 4 : Math.min(4, Math.floor(elapsed / stepMs));
  if (stage === 4 && record.ending === 'Stall') return 3;
  return stage as 0 | 1 | 2 | 3 | 4;
}

export function trackingNumberAt(record: LabelRecord, now: number, stepMs: number): string | null {
  return record.status === 'created' && stageAt(record, now, stepMs) >= 2 ? record.futureTrackingNumber : null;
}

/** GET /labels/{id}: the label result as it stands now, plus createdAt. */
export function labelDocument(record: LabelRecord, now: number, stepMs: number): LabelResult & { createdAt: string } {
  return {
    id: record.id,
    status: record.status,
    courier: record.courier,
    customerOrderNumber: record.customerOrderNumber,
    courierOrderNumber: record.courierOrderNumber,
    courierTrackingNumber: trackingNumberAt(record, now, stepMs),
    error: record.error,
    createdAt: new Date(record.createdAtMs).toISOString(),
  };
}

// ---------------------------------------------------------------- order detail

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function maskName(first: string | undefined, last: string | undefined): string | null {
  const words = [first, last]
    .filter((p): p is string => typeof p === 'string')
    .flatMap((p) => p.split(/\s+/))
    .filter((w) => w !== '');
  if (words.length === 0) return null;
  return words.map((w) => w[0] + '*'.repeat(w.length - 1)).join(' ');
}

function orderStatusAt(record: LabelRecord, stage: number): Pick<Order, 'status' | 'exceptionState' | 'exceptionReason'> {
  const none = { exceptionState: null, exceptionReason: null };
  if (record.status === 'failed') return { status: 'failed', ...none };
  switch (stage) {
    case 0:
      return { status: 'created', ...none };
    case 1:
      return { status: 'fetched', ...none };
    case 2:
      return { status: 'first_mile_received', ...none };
    case 3:
      return { status: 'in_transit_last_mile', ...none };
    default:
      if (record.ending === 'Exception') {
        return {
          status: 'shipping_to_destination',
          exceptionState: 'carrier_hold',
          exceptionReason: 'Incorrect address: the carrier holds the parcel at the delivery depot',
        };
      }
      if (record.ending === 'Cancelled') {
        return { status: 'failed', exceptionState: 'trashed', exceptionReason: 'Shipment cancelled by the courier' };
      }
      return { status: 'delivered', ...none };
  }
}

export function orderDetail(record: LabelRecord, now: number, stepMs: number): OrderDetail {
  const req = record.request;
  const stage = stageAt(record, now, stepMs);
  const { status, exceptionState, exceptionReason } = orderStatusAt(record, stage);
  const trackingNumber = trackingNumberAt(record, now, stepMs);
  const shipTo = req.shipment.shipTo;
  const parcels = req.shipment.parcels;

  const order: Order = {
    id: record.id,
    status,
    exceptionState,
    exceptionStateAt: exceptionState === null ? null : new Date(record.createdAtMs + 4 * stepMs).toISOString(),
    exceptionReason,
    courier: record.courier,
    customerOrderNumber: record.customerOrderNumber,
    courierOrderNumber: record.courierOrderNumber,
    courierTrackingNumber: trackingNumber,
    serviceProductCode: req.service.productCode,
    shipToCountryCode: shipTo?.address?.countryCode ?? null,
    shipToPostalCode: shipTo?.address?.postalCode ?? null,
    shipFromCountryCode: req.shipment.shipFrom?.address?.countryCode ?? null,
    parcelMeasurements:
      parcels === undefined
        ? null
        : {
            weightUnit: req.units?.weight ?? null,
            dimensionUnit: req.units?.dimension ?? null,
            parcels: parcels.map((p, i) => ({
              parcelId: `${record.id.slice(0, 8)}-${i + 1}`,
              weight: p.weight ?? 0,
              dimension: p.dimension ?? null,
            })),
          },
    maskedRecipientName: maskName(shipTo?.contact?.firstName, shipTo?.contact?.lastName),
    error: record.error,
    createdAt: new Date(record.createdAtMs).toISOString(),
  };

  const customs = req.customs ?? {};
  const options = req.courierOptions?.[INTEGRATION_CODE] ?? Object.values(req.courierOptions ?? {})[0] ?? {};
  const opt = (name: string): string | null => str((options as Record<string, unknown>)[name]);
  const packageCount = (options as Record<string, unknown>).packageCount;

  const carrierDetails: CarrierDetails = {
    integration: INTEGRATION_CODE,
    orderNumbers: {
      platformOrderNumber: req.order?.orderNumbers?.platformOrderNumber ?? null,
      trackingNumber,
      referenceNumbers: req.order?.orderNumbers?.referenceNumbers ?? [],
    },
    customs: {
      taxNumber: str(customs.taxNumber),
      ioss: str(customs.ioss),
      vat: str(customs.vat),
      eori: str(customs.eori),
    },
    iossApplied: str(customs.ioss),
    serviceOptions: (req.serviceOptions ?? []).map((o) => ({ code: o.code, value: o.value, cost: null })),
    courierOptions: {
      sourceCode: opt('sourceCode'),
      platformAccountCode: opt('platformAccountCode'),
      sensitiveType: opt('sensitiveType'),
      signatureService: opt('signatureService'),
      houseNumber: opt('houseNumber'),
      packageCount: typeof packageCount === 'number' && Number.isInteger(packageCount) ? packageCount : null,
      senderUsci: opt('senderUsci'),
      platformName: opt('platformName'),
      platformState: opt('platformState'),
      platformAddress: opt('platformAddress'),
      platformPostalCode: opt('platformPostalCode'),
      platformPhone: opt('platformPhone'),
      platformEmail: opt('platformEmail'),
      platformSalesUrl: opt('platformSalesUrl'),
      cargoType: opt('cargoType'),
      paymentPlatform: opt('paymentPlatform'),
      paymentPlatformAccount: opt('paymentPlatformAccount'),
      paymentTransactionNumber: opt('paymentTransactionNumber'),
      labelUrl: opt('labelUrl'),
    },
  };
  return { order, carrierDetails };
}

// ---------------------------------------------------------------- tracking

const UTC_OFFSETS: Record<string, number> = {
  DE: 60,
  NL: 60,
  BE: 60,
  FR: 60,
  AT: 60,
  CH: 60,
  IT: 60,
  ES: 60,
  PL: 60,
  DK: 60,
  SE: 60,
  CZ: 60,
  GB: 0,
  IE: 0,
  PT: 0,
  US: -300,
  CA: -300,
  JP: 540,
  CN: 480,
  AU: 600,
};

/** ISO 8601 with the local UTC offset of the place, e.g. 2025-03-01T14:05:00.000+01:00. */
export function isoWithOffset(ms: number, offsetMinutes: number): string {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, -1);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

interface Place {
  city: string;
  state: string;
  countryRegion: string;
  offset: number;
}

function placeOf(address: { city?: string; state?: string; countryCode?: string } | undefined, hub: Hub): Place {
  const countryRegion = address?.countryCode ?? hub.countryRegion;
  return {
    city: address?.city ?? hub.city,
    state: address?.state ?? (address?.city ? '' : hub.state),
    countryRegion,
    offset: UTC_OFFSETS[countryRegion] ?? (address?.countryCode ? 0 : hub.utcOffsetMinutes),
  };
}

const TAGS = {
  pending: { tag: 'Pending', subtag: 'Pending_001', subtagMessage: 'Pending: the courier has not reported any movement yet' },
  info: { tag: 'InfoReceived', subtag: 'InfoReceived_001', subtagMessage: 'Info received: the carrier is about to pick up the shipment' },
  transit: { tag: 'InTransit', subtag: 'InTransit_003', subtagMessage: 'Arrived at a hub or sorting center' },
  Delivered: { tag: 'Delivered', subtag: 'Delivered_001', subtagMessage: 'Shipment delivered successfully' },
  Exception: { tag: 'Exception', subtag: 'Exception_007', subtagMessage: 'Delivery exception: incorrect address' },
  Cancelled: { tag: 'Cancelled', subtag: 'Cancelled_001', subtagMessage: 'Shipment cancelled' },
} as const;

const TERMINAL_MESSAGE = {
  Delivered: 'Delivered to the recipient',
  Exception: 'Delivery attempted: address incomplete or incorrect, parcel held at the depot',
  Cancelled: 'Shipment cancelled, the parcel will not be delivered',
} as const;

/** GET /tracking/{id}: null while the courier has not registered the shipment (stage 0). */
export function trackingRecord(record: LabelRecord, now: number, stepMs: number): TrackingRecord | null {
  const stage = stageAt(record, now, stepMs);
  if (stage === 0) return null;
  const entry = findCourier(record.courier);
  const hub: Hub = entry?.hub ?? { city: 'Hub', state: '', countryRegion: 'DE', utcOffsetMinutes: 60 };
  const slug = record.courier;
  const from = placeOf(record.request.shipment.shipFrom?.address, hub);
  const to = placeOf(record.request.shipment.shipTo?.address, hub);
  const hubPlace: Place = { city: hub.city, state: hub.state, countryRegion: hub.countryRegion, offset: hub.utcOffsetMinutes };

  const checkpoint = (k: number, place: Place, message: string, t: { tag: string; subtag: string; subtagMessage: string }): Checkpoint => ({
    checkpointTime: isoWithOffset(record.createdAtMs + k * stepMs, place.offset),
    city: place.city,
    state: place.state,
    countryRegion: place.countryRegion,
    location: `${place.city}, ${place.countryRegion}`,
    message,
    tag: t.tag,
    subtag: t.subtag,
    subtagMessage: t.subtagMessage,
    slug,
  });

  const checkpoints: Checkpoint[] = [];
  if (stage >= 2) checkpoints.push(checkpoint(2, from, 'Shipment information received by the carrier', TAGS.info));
  if (stage >= 3) checkpoints.push(checkpoint(3, hubPlace, `Arrived at the ${hub.city} sort facility`, TAGS.transit));
  const current =
    stage === 1
      ? TAGS.pending
      : stage === 2
        ? TAGS.info
        : stage === 3
          ? TAGS.transit
          : TAGS[record.ending as 'Delivered' | 'Exception' | 'Cancelled'];
  if (stage === 4) {
    const ending = record.ending as 'Delivered' | 'Exception' | 'Cancelled';
    checkpoints.push(checkpoint(4, to, TERMINAL_MESSAGE[ending], TAGS[ending]));
  }
  return {
    id: record.id,
    trackingNumber: trackingNumberAt(record, now, stepMs),
    tag: current.tag,
    subtag: current.subtag,
    subtagMessage: current.subtagMessage,
    slug,
    checkpoints,
  };
}
