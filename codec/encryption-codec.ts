/**
 * AES-256-GCM payload codec: every payload leaving this process is encrypted, so order data
 * (names, addresses, phones, e-mails) never reaches Temporal's database or Web UI readable.
 * The whole payload (its metadata and data) is encrypted; the stored payload carries only
 * `encoding: binary/encrypted` and the id of the key, so keys can rotate: decoding accepts
 * every configured key, encoding uses the active one. A payload without that encoding is
 * passed through, so histories written before encryption was switched on still replay.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { EncryptionKey, PayloadEncryptionSettings } from '../config/settings';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** A payload that cannot be decrypted: unknown key id, or data that fails authentication. */
export class PayloadDecryptionError extends Error {
  override readonly name = 'PayloadDecryptionError';
}

/** Told of each payload decoded that was not encrypted, with the workflow it belongs to when known. */
export type PlainPayloadListener = (workflowId: string | undefined) => void;

export class EncryptionCodec implements PayloadCodec {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly active: EncryptionKey;

  constructor(
    settings: PayloadEncryptionSettings,
    private readonly onPlainPayload?: PlainPayloadListener,
  ) {
    this.keys = new Map(settings.keys.map((k) => [k.id, k.key]));
    const key = this.keys.get(settings.activeKeyId);
    if (!key) throw new Error(`active key id "${settings.activeKeyId}" is not among the configured keys`);
    this.active = { id: settings.activeKeyId, key };
  }

  get activeKeyId(): string {
    return this.active.id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encrypt(payload));
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (isEncrypted(payload)) return this.decrypt(payload);
      this.onPlainPayload?.(context?.workflowId);
      return payload;
    });
  }

  private encrypt(payload: Payload): Payload {
    const { id, key } = this.active;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, key, iv);
    // The key id is authenticated too: a payload relabelled with another key id does not decrypt.
    cipher.setAAD(utf8.encode(id));
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return { metadata: { encoding: utf8.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8.encode(id) }, data };
  }

  private decrypt(payload: Payload): Payload {
    const idBytes = payload.metadata?.[KEY_ID_METADATA];
    const id = idBytes ? fromUtf8.decode(idBytes) : undefined;
    const key = id === undefined ? undefined : this.keys.get(id);
    if (!key) {
      throw new PayloadDecryptionError(
        id === undefined
          ? `encrypted payload without the ${KEY_ID_METADATA} metadata`
          : `payload encrypted with key "${id}", which is not configured (known: ${[...this.keys.keys()].join(', ')}); add it to PAYLOAD_ENCRYPTION_KEYS`,
      );
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadDecryptionError(`encrypted payload (key "${id}") is truncated`);
    const decipher = createDecipheriv(CIPHER, key, data.subarray(0, IV_BYTES));
    decipher.setAAD(utf8.encode(id));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(
        `payload encrypted with key "${id}" failed authentication (wrong key material for that id, or altered data)`,
      );
    }
    const decoded = temporal.api.common.v1.Payload.decode(plain);
    return { metadata: decoded.metadata, data: decoded.data };
  }
}

export function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  return encoding !== undefined && encoding !== null && fromUtf8.decode(encoding) === ENCRYPTED_ENCODING;
}

/**
 * The codec of a client told to send in clear (PAYLOAD_ENCRYPTION=off): payloads leave as they
 * are, and an encrypted one read back fails naming the setting that is missing, instead of the
 * payload converter's "Unknown encoding: binary/encrypted".
 */
export class KeylessCodec implements PayloadCodec {
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads;
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    const encrypted = payloads.find(isEncrypted);
    if (encrypted) {
      const id = encrypted.metadata?.[KEY_ID_METADATA];
      throw new PayloadDecryptionError(
        `this shipment's data is encrypted${id ? ` (key "${fromUtf8.decode(id)}")` : ''} and no key is set: ` +
          "set PAYLOAD_ENCRYPTION_KEYS_FILE (or PAYLOAD_ENCRYPTION_KEYS) to the worker's keys, instead of PAYLOAD_ENCRYPTION=off / --no-encryption",
      );
    }
    return payloads;
  }
}
