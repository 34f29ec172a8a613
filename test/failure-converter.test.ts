/**
 * The failure converter of encrypted payloads: every failure's text is encoded, except a tracking
 * poll without news, whose text holds no order data, so the Web UI shows it instead of
 * "Encoded failure" on a healthy pending poll.
 */
import { ApplicationFailure, ApplicationFailureCategory, defaultPayloadConverter } from '@temporalio/common';
import { expect, it } from 'vitest';
import { TRACKING_UNCHANGED } from '../workflow-definitions/activity-failures';
import { CLEAR_FAILURE_TYPES, failureConverter } from '../codec/failure-converter';

it("keeps a poll without news in clear, and encodes everything else (the courier's wording)", () => {
  expect(CLEAR_FAILURE_TYPES.has(TRACKING_UNCHANGED)).toBe(true);
  const poll = ApplicationFailure.create({
    type: TRACKING_UNCHANGED,
    message: 'poll #4 at 10:02:11: InTransit (InTransit_001), 2 checkpoint(s), tracking number 1Z999, no change; next poll in 20 s',
    category: ApplicationFailureCategory.BENIGN,
  });
  expect(failureConverter.errorToFailure(poll, defaultPayloadConverter).message).toMatch(/^poll #4 at .*no change; next poll in 20 s$/);

  const rejected = ApplicationFailure.create({ type: 'CourierError', message: 'The postal code 00000 of Bergmannstraße 9 is invalid' });
  const encoded = failureConverter.errorToFailure(rejected, defaultPayloadConverter);
  expect(encoded.message).toBe('Encoded failure');
  expect(JSON.stringify(encoded)).not.toContain('Bergmannstraße');
});
