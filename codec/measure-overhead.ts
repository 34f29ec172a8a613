/**
 * `npx tsx codec/measure-overhead.ts [--runs n]`: what encryption adds per payload, for the
 * docs (production.md, "Encrypted payloads"): stored size (the protobuf Payload the server keeps) and the codec's time to encrypt
 * and decrypt one payload (median of n runs, after a warm-up). Uses a throwaway random key.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { EncryptionCodec } from './encryption-codec';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5000' }, help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  process.stdout.write(
    'Usage: npx tsx codec/measure-overhead.ts [--runs n]\nPrints stored size and codec time per payload, plain vs encrypted.\n',
  );
  process.exit(0);
}
const runs = Number(values.runs);
const codec = new EncryptionCodec({ keys: [{ id: 'key-2026-01', key: randomBytes(32) }], activeKeyId: 'key-2026-01' });
const sampleOrder: unknown = JSON.parse(readFileSync(path.join(__dirname, '..', 'examples', 'orders.ndjson'), 'utf8').split('\n')[0]!);
const cases: Array<[string, unknown]> = [
  ['small value ("delivered")', 'delivered'],
  ['a shipment input (examples/orders.ndjson, first order)', sampleOrder],
];

const size = (p: Payload) => temporal.api.common.v1.Payload.encode(p).finish().length;
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeEach(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 500; i++) await fn(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return median(samples);
}

void (async () => {
  for (const [name, value] of cases) {
    const plain = defaultPayloadConverter.toPayload(value);
    const [encrypted] = await codec.encode([plain]);
    const encodeUs = await timeEach(() => codec.encode([plain]));
    const decodeUs = await timeEach(() => codec.decode([encrypted!]));
    console.log(
      `${name}: stored ${size(plain)} B plain -> ${size(encrypted!)} B encrypted (+${size(encrypted!) - size(plain)} B); ` +
        `median encode ${encodeUs.toFixed(1)} µs, decode ${decodeUs.toFixed(1)} µs per payload (${runs} runs)`,
    );
  }
})();
