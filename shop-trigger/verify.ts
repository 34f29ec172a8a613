/**
 * The platforms' webhook signature: base64(HMAC-SHA256(raw body bytes, secret)), sent by Shopify
 * in X-Shopify-Hmac-Sha256 and by WooCommerce in X-WC-Webhook-Signature. Checked on the bytes as
 * received, before anything parses them: re-serialised JSON would not hash the same.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Base64 of a SHA-256 digest: 32 bytes are always 44 characters, the last one '='. */
const DIGEST_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

/**
 * The 32 bytes a header spells, or null. Strict where Buffer.from(…, 'base64') is lenient (it
 * skips stray characters and accepts URL-safe ones): only the canonical spelling decodes.
 */
function digestOf(header: string): Buffer | null {
  if (!DIGEST_BASE64.test(header)) return null;
  const bytes = Buffer.from(header, 'base64');
  // The last character also carries 2 padding bits; non-zero ones would decode the same bytes.
  return bytes.length === 32 && bytes.toString('base64') === header ? bytes : null;
}

/**
 * True when `header` is the signature of `rawBody` under one of `secrets`. A missing header, one
 * that is not strict base64 of 32 bytes, or an empty list of secrets is a mismatch, never a throw.
 */
export function verifySignature(rawBody: Buffer, header: string | undefined, secrets: readonly string[]): boolean {
  if (header === undefined) return false;
  const given = digestOf(header);
  if (given === null) return false;
  let matched = false;
  for (const secret of secrets) {
    // An empty key is one anyone can sign with: a configuration slip must not open the door.
    if (secret === '') continue;
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    // Constant time on equal lengths, and every secret is tried, so timing says nothing.
    if (timingSafeEqual(expected, given)) matched = true;
  }
  return matched;
}
