/**
 * Loaded by path (DataConverter.failureConverterPath) when payload encryption is on: failure
 * messages and stack traces go into an encoded payload, which the codec then encrypts. Activity
 * failures quote the shipping API's error text verbatim (validation messages, the carrier's
 * wording), which may repeat an address or phone number.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
