/**
 * GET /tracking/{id}: the tracking record of a label, found by its id or by a customer order
 * number (the newest label of it). A failed label answers the spec's 422 tracking failure.
 */
import type { z } from 'zod';
import { COURIER_ERROR_CODE, type TrackingFailureBody } from '../../shipping-api/contract';
import { standard } from '../answers';
import { POLL_STAGE_MS } from '../defaults';
import { trackingRecord, type LabelRecord } from '../records';
import type { FakeState } from '../state';
import type { EndpointHandler } from './endpoint';

export const readTracking: EndpointHandler = ({ account, id }, fake) => {
  let record = fake.labels.get(id!);
  if (!record || record.account !== account.name) record = fake.labels.newestForOrder(account.name, id!) ?? record;
  if (!record) {
    const otherAccount = fake.accounts.some((a) => a.name !== account.name && fake.labels.hasOrder(a.name, id!));
    return otherAccount ? standard(403, 'Forbidden') : standard(404, 'Tracking not found');
  }
  if (record.account !== account.name) return standard(403, 'Forbidden');
  if (record.status === 'failed') {
    const body: z.infer<typeof TrackingFailureBody> = {
      error: 'Tracking unavailable: the label was not created',
      errorCode: record.error?.code ?? COURIER_ERROR_CODE,
      errorMessage: record.error?.message ?? 'The courier rejected the shipment',
    };
    return { status: 422, body };
  }
  const tracking = trackingNow(record, fake);
  return tracking === null ? standard(404, 'Tracking not found') : { status: 200, body: tracking };
};

/** The record by time, or (trackingStepPolls set) by how often this label was polled. */
function trackingNow(record: LabelRecord, fake: FakeState): ReturnType<typeof trackingRecord> {
  const stepPolls = fake.trackingStepPolls;
  if (stepPolls === undefined) return trackingRecord(record, Date.now(), fake.trackingStepMs);
  // Stage k after k × trackingStepPolls polls: replayed through the time-based model.
  const polls = fake.trackingPolls.get(record.id) ?? 0;
  fake.trackingPolls.set(record.id, polls + 1);
  const stage = Math.floor(polls / stepPolls);
  return trackingRecord(record, record.createdAtMs + stage * POLL_STAGE_MS, POLL_STAGE_MS);
}
