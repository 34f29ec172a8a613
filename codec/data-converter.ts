/**
 * The one place that turns settings into Temporal's DataConverter, for the worker, the import,
 * every CLI command and the tests alike: with encryption keys configured, the AES-256-GCM codec
 * and encoded failure messages; without, undefined (the SDK's plain JSON, as before).
 */
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { loadPayloadEncryptionSettings, type PayloadEncryptionSettings } from '../config/settings';
import { EncryptionCodec } from './encryption-codec';

/** Without extension: resolves to the .ts file under tsx and to the .js file in dist/. */
const FAILURE_CONVERTER_PATH = path.join(__dirname, 'failure-converter');

export function dataConverterFor(encryption: PayloadEncryptionSettings | undefined): DataConverter | undefined {
  if (!encryption) return undefined;
  return { payloadCodecs: [new EncryptionCodec(encryption)], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** Reads PAYLOAD_ENCRYPTION_KEYS(_FILE) / PAYLOAD_ENCRYPTION_KEY_ID; throws ConfigError naming the setting. */
export function dataConverterFromEnv(env: Record<string, string | undefined> = process.env): DataConverter | undefined {
  return dataConverterFor(loadPayloadEncryptionSettings(env));
}
