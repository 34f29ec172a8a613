/**
 * The one place that turns settings into Temporal's DataConverter, for the worker, the import,
 * every CLI command and the tests alike: with encryption keys configured, the AES-256-GCM codec
 * and encoded failure messages; without, undefined (the SDK's plain JSON, as before).
 */
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { loadClientPayloadEncryption, type PayloadEncryptionSettings } from '../config/settings';
import { EncryptionCodec, KeylessCodec, type PlainPayloadListener } from './encryption-codec';

/** Without extension: resolves to the .ts file under tsx and to the .js file in dist/. */
const FAILURE_CONVERTER_PATH = path.join(__dirname, 'failure-converter');

export function dataConverterFor(
  encryption: PayloadEncryptionSettings | undefined,
  onPlainPayload?: PlainPayloadListener,
): DataConverter | undefined {
  if (!encryption) return undefined;
  return { payloadCodecs: [new EncryptionCodec(encryption, onPlainPayload)], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/**
 * A client's (the import's, every CLI command's): the keys, or in clear only when told to
 * (PAYLOAD_ENCRYPTION=off); neither throws ConfigError naming the setting to export.
 */
export function clientDataConverter(env: Record<string, string | undefined> = process.env): DataConverter {
  const encryption = loadClientPayloadEncryption(env);
  return encryption === 'off' ? { payloadCodecs: [new KeylessCodec()] } : dataConverterFor(encryption)!;
}
