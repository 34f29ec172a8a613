/**
 * The comparison path of `npm run chaos`: a plain script that calls the shipping API the way the
 * common shipping SDKs do. For each order of the input file: POST /labels with a fresh random
 * idempotency key per attempt, retry a 5xx or a broken connection up to 3 times, take a 429 as a
 * failure, then GET the order the same way. It keeps no durable state: after a restart it starts
 * over from the top of the file. Prints one line per order; never prints credentials.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

export const PLAIN_SCRIPT_HELP = `Usage: npx tsx chaos/plain-script.ts --input <orders.ndjson> [options]

A deliberately plain shipping-label script, the comparison path of npm run chaos.
For each { shop, orderId, labelRequest } line: POST /labels with a new random idempotency
key per attempt (retry 5xx and network errors up to 3 times, a 429 is a failure), then
GET /orders/<label id> (same rules). No state survives a restart.

Options:
  --input <file>         NDJSON orders, as for npm run import (required)
  --concurrency <n>      Orders in flight at once (default 4)
  --timeout-ms <ms>      Per-request timeout (default 5000)
  -h, --help             Show this help

Environment: SHIPPING_API_BASE_URL, SHIPPING_API_KEY, SHIPPING_API_TOKEN.
Exit codes: 0 every order went through (some may have failed: see the lines), 2 usage error.
`;

interface OrderLine {
  shop: string;
  orderId: string;
  labelRequest: Record<string, unknown>;
}

type Call = { ok: true; status: number; body: unknown } | { ok: false; reason: string };

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      input: { type: 'string' },
      concurrency: { type: 'string', default: '4' },
      'timeout-ms': { type: 'string', default: '5000' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(PLAIN_SCRIPT_HELP);
    return 0;
  }
  const baseUrl = process.env.SHIPPING_API_BASE_URL;
  const apiKey = process.env.SHIPPING_API_KEY;
  const apiToken = process.env.SHIPPING_API_TOKEN;
  const concurrency = Number(values.concurrency);
  const timeoutMs = Number(values['timeout-ms']);
  if (!values.input || !baseUrl || !apiKey || !apiToken || !(concurrency >= 1) || !(timeoutMs >= 1)) {
    process.stderr.write('plain-script: --input, SHIPPING_API_BASE_URL, SHIPPING_API_KEY and SHIPPING_API_TOKEN are required\n');
    return 2;
  }
  const orders = readFileSync(values.input, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as OrderLine);
  const headers = { 'content-type': 'application/json', 'x-rr-apikey': apiKey, 'x-rr-apitoken': apiToken };

  async function call(method: string, path: string, body?: () => unknown): Promise<Call> {
    let last = '';
    for (let attempt = 0; attempt <= 3; attempt += 1) {
      try {
        const response = await fetch(baseUrl + path, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body()),
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await response.text();
        if (response.status >= 500) {
          last = `HTTP ${response.status}`;
          continue;
        }
        if (response.status >= 400) return { ok: false, reason: `HTTP ${response.status}` };
        return { ok: true, status: response.status, body: JSON.parse(text) };
      } catch (e) {
        last = (e as Error).name === 'TimeoutError' ? 'timeout' : 'network error';
      }
    }
    return { ok: false, reason: `${last} after 3 retries` };
  }

  let next = 0;
  async function lane(): Promise<void> {
    while (next < orders.length) {
      const order = orders[next++]!;
      // A new key per attempt: what an SDK does when the caller passes none.
      const label = await call('POST', '/labels', () => ({ ...order.labelRequest, idempotencyKey: randomUUID() }));
      if (!label.ok) {
        process.stdout.write(`order ${order.orderId}: label failed (${label.reason})\n`);
        continue;
      }
      const id = (label.body as { id?: unknown }).id;
      const read = await call('GET', `/orders/${encodeURIComponent(String(id))}`);
      process.stdout.write(`order ${order.orderId}: label ${String(id)}, details ${read.ok ? 'read' : `failed (${read.reason})`}\n`);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
  process.stdout.write(`done: ${orders.length} orders\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`plain-script: ${(e as Error).message}\n`);
    process.exit(1);
  },
);
