/**
 * UTF-8 decoding of an import that keeps invalid bytes visible. TextDecoder replaces them with
 * U+FFFD, so `A\xff` and `A\xfe` became the same order id; a fatal decoder would stop the whole
 * import without saying where. Here each invalid byte becomes INVALID_UTF8, an unpaired
 * surrogate that no valid UTF-8 can decode to, and the record readers reject the line holding it.
 */
import { isUtf8 } from 'node:buffer';

/** Stands for one byte that is not part of valid UTF-8. */
export const INVALID_UTF8 = '\uDFFF';

/** Length of the valid UTF-8 sequence starting at `i`: 0 when invalid, -1 when cut off by the end of `buf`. */
function sequenceLength(buf: Uint8Array, i: number): number {
  const b = buf[i]!;
  if (b < 0x80) return 1;
  let length: number;
  let low = 0x80;
  let high = 0xbf; // allowed range of the second byte (overlong forms and surrogates excluded)
  if (b >= 0xc2 && b <= 0xdf) length = 2;
  else if (b >= 0xe0 && b <= 0xef) {
    length = 3;
    if (b === 0xe0) low = 0xa0;
    if (b === 0xed) high = 0x9f;
  } else if (b >= 0xf0 && b <= 0xf4) {
    length = 4;
    if (b === 0xf0) low = 0x90;
    if (b === 0xf4) high = 0x8f;
  } else return 0;
  for (let k = 1; k < length; k++) {
    if (i + k >= buf.length) return -1;
    const c = buf[i + k]!;
    if (k === 1 ? c < low || c > high : c < 0x80 || c > 0xbf) return 0;
  }
  return length;
}

/** Decodes a stream of bytes; a sequence split between two chunks is decoded whole. */
export async function* decodeUtf8(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of chunks) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const buf = carry.length > 0 ? Buffer.concat([carry, bytes]) : bytes;
    const end = completeLength(buf);
    carry = Buffer.from(buf.subarray(end));
    const text = decodeComplete(buf.subarray(0, end));
    if (text !== '') yield text;
  }
  if (carry.length > 0) yield decodeComplete(carry, true);
}

/** Bytes of `buf` up to a possibly incomplete sequence at its end (at most 3 bytes kept back). */
function completeLength(buf: Buffer): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const b = buf[buf.length - back]!;
    if (b < 0x80) return buf.length;
    if (b >= 0xc0) return sequenceLength(buf, buf.length - back) === -1 ? buf.length - back : buf.length;
  }
  return buf.length;
}

function decodeComplete(buf: Buffer, atEnd = false): string {
  if (isUtf8(buf)) return buf.toString('utf8');
  let out = '';
  let start = 0;
  let i = 0;
  while (i < buf.length) {
    const length = sequenceLength(buf, i);
    if (length > 0) {
      i += length;
      continue;
    }
    // Invalid, or cut off by the end of the input (only possible at the end: see completeLength).
    if (length === -1 && !atEnd) break;
    out += buf.toString('utf8', start, i) + INVALID_UTF8;
    i += 1;
    start = i;
  }
  return out + buf.toString('utf8', start, i);
}
