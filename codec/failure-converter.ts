/**
 * Loaded by path (DataConverter.failureConverterPath) when payload encryption is on: failure
 * messages and stack traces go into an encoded payload, which the codec then encrypts. Activity
 * failures quote the shipping API's error text verbatim (validation messages, the carrier's
 * wording), which may repeat an address or phone number.
 *
 * One kind stays in clear: a tracking poll without news (activities/shipping-api.ts, TrackingUnchanged)
 * is a retry of the pending awaitTrackingChange, not an error, and its text holds only the poll's
 * count and time, the tag and the tracking number. In clear, the Web UI's pending activity shows
 * "poll #4 at …: InTransit …, no change" instead of "Encoded failure" next to its attempt count.
 */
import { ApplicationFailure, DefaultFailureConverter, type PayloadConverter, type ProtoFailure } from '@temporalio/common';

/** Failure types whose text carries no order data (test/payload-codec.test.ts ties them to the activities'). */
export const CLEAR_FAILURE_TYPES: ReadonlySet<string> = new Set(['TrackingUnchanged']);

class ShipmentFailureConverter extends DefaultFailureConverter {
  private readonly clear = new DefaultFailureConverter();

  constructor() {
    super({ encodeCommonAttributes: true });
  }

  override errorToFailure(err: unknown, payloadConverter: PayloadConverter): ProtoFailure {
    if (err instanceof ApplicationFailure && CLEAR_FAILURE_TYPES.has(err.type ?? ''))
      return this.clear.errorToFailure(err, payloadConverter);
    return super.errorToFailure(err, payloadConverter);
  }
}

export const failureConverter = new ShipmentFailureConverter();
