/**
 * Pure unit tests of the import without a server: reading NDJSON / JSON arrays, record
 * validation, the pipeline (duplicates, preflight, concurrency, streaming) with fake start and
 * catalog functions, and the import command in-process (flags, rejects file, exit codes).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../fake-shipping-api/catalog';
import { CliError, EXIT } from '../client/cli-support';
import { importCommand } from '../client/import/main';
import { importRecords } from '../order-import/engine';
import { validateLabelRequest, validateRecord } from '../order-import/record';
import { InputError, readRecords, sniffFormat, type InputFormat, type SourceRecord } from '../order-import/source';
import { AccountPreflights, Preflight, type Catalog } from '../order-import/preflight';
import type { StartResult } from '../order-import/start-shipment';
import type { ShipmentInput } from '../domain/shipment';
import { captureIo } from './helpers/cli';

const EXAMPLES = path.join(__dirname, '..', 'examples');

async function* chunksOf(text: string, size = text.length || 1): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

async function collect(text: string, format: InputFormat, size?: number): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  for await (const r of readRecords(chunksOf(text, size), format)) out.push(r);
  return out;
}

const valid = (shop: string, orderId: string, courier = 'ups', productCode = 'UPS_STANDARD') => ({
  shop,
  orderId,
  labelRequest: { courier, service: { productCode }, shipment: { shipTo: { address: { countryCode: 'DE', postalCode: '10115' } } } },
});

/** The fake API's catalog, without a server; counts calls. */
function fakeCatalog(): Catalog & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async listCouriers() {
      calls.push('couriers');
      return CATALOG.map((c) => c.courier);
    },
    async listProducts(courier: string) {
      calls.push(`products:${courier}`);
      await new Promise((r) => setTimeout(r, 5));
      return CATALOG.find((c) => c.courier.code === courier)?.products ?? [];
    },
  };
}

describe('reading records', () => {
  it('NDJSON: one record per line with its line number; blank lines skipped; bad JSON reported on its line', async () => {
    const text = `${JSON.stringify(valid('s', '1'))}\r\n\n{"shop": "s", "orderId": \n${JSON.stringify(valid('s', '3'))}`;
    const records = await collect(text, 'ndjson', 4);
    expect(records.map((r) => r.line)).toEqual([1, 3, 4]);
    expect(records[0]!.value).toEqual(valid('s', '1'));
    expect(records[1]!.value).toBeUndefined();
    expect(records[1]!.raw).toBe('{"shop": "s", "orderId": ');
    expect(records[1]!.problems[0]).toMatchObject({ field: '(json)', message: expect.stringMatching(/^not valid JSON/) });
  });

  it('JSON array: elements with index and line, split across chunks; a broken element is only that record', async () => {
    const text = `[\n  ${JSON.stringify(valid('s', '1'))},\n  {"shop": "s", "orderId": "x]", "labelRequest": {"note": "a,\\"b\\"}"}},\n  {"shop": "s" "orderId": "2"},\n  ${JSON.stringify(valid('s', '3'))}\n]\n`;
    for (const size of [1, 3, 64, text.length]) {
      const records = await collect(text, 'json', size);
      expect(records.map((r) => [r.index, r.line])).toEqual([
        [0, 2],
        [1, 3],
        [2, 4],
        [3, 5],
      ]);
      expect((records[1]!.value as { orderId: string }).orderId).toBe('x]');
      expect(records[2]!.value).toBeUndefined();
      expect(records[2]!.problems[0]!.field).toBe('(json)');
      expect(records[3]!.value).toEqual(valid('s', '3'));
    }
  });

  it('JSON: a document that is not an array is a usage error; a truncated array reports its last element', async () => {
    // The reader throws InputError; the import command makes it its usage exit (import-input-edges).
    await expect(collect('{"shop": "s"}', 'json')).rejects.toThrow(InputError);
    await expect(collect('{"shop": "s"}', 'json')).rejects.toThrow(/not a JSON array/);
    const truncated = await collect(`[${JSON.stringify(valid('s', '1'))}, {"shop": "s"`, 'json');
    expect(truncated).toHaveLength(2);
    expect(truncated[1]!.problems.map((p) => p.message).join(' ')).toMatch(/ends before the array is closed/);
    expect(await collect('  [ ]  ', 'json')).toEqual([]);
  });

  it('guesses the format from the first character', async () => {
    const guess = async (text: string) => {
      const { format, chunks } = await sniffFormat(chunksOf(text, 2));
      let back = '';
      for await (const c of chunks) back += c;
      expect(back).toBe(text); // nothing lost by peeking
      return format;
    };
    expect(await guess('\n  [{"a":1}]')).toBe('json');
    expect(await guess('{"a":1}\n{"a":2}')).toBe('ndjson');
    expect(await guess('shop,order_id\n')).toBe('csv');
  });
});

describe('record validation', () => {
  const problemsOf = (value: unknown) => {
    const r = validateRecord(value);
    return r.ok ? [] : r.problems;
  };

  it('accepts a valid record', () => {
    expect(validateRecord(valid('s', '1'))).toEqual({ ok: true, value: valid('s', '1') });
  });

  it('a shop with a platform connector needs platformOrderId; the id must be digits or a Shopify order gid', () => {
    const platformOf = (shop: string) => (shop === 'shopify-shop' ? 'shopify' : null);
    const missing = validateRecord(valid('shopify-shop', '1'), platformOf);
    expect(missing.ok ? [] : missing.problems).toEqual([
      {
        field: 'platformOrderId',
        message: "is required: shop shopify-shop writes to shopify (its connector), which needs the order's id there",
      },
    ]);
    const gid = validateRecord({ ...valid('shopify-shop', '1'), platformOrderId: 'gid://shopify/Order/5501' }, platformOf);
    // One order, one id: the GraphQL form is kept as the legacy id the pulls read.
    expect(gid.ok && gid.value.platformOrderId).toBe('5501');
    expect(validateRecord(valid('webhook-shop', '1'), platformOf).ok).toBe(true);
    const bad = validateRecord({ ...valid('shopify-shop', '1'), platformOrderId: '#1001' }, platformOf);
    expect(bad.ok ? [] : bad.problems.map((p) => p.field)).toEqual(['platformOrderId']);
    const wooOf = (shop: string) => (shop === 'woo-shop' ? 'woocommerce' : null);
    const wrongPlatform = validateRecord({ ...valid('woo-shop', '1'), platformOrderId: 'gid://shopify/Order/5501' }, wooOf);
    expect(wrongPlatform.ok ? [] : wrongPlatform.problems).toEqual([
      { field: 'platformOrderId', message: 'is a Shopify order id: shop woo-shop writes to woocommerce, whose order ids are digits' },
    ]);
  });

  it('names the field of each problem with a dotted path', () => {
    const bad = valid('s', '1') as Record<string, any>;
    delete bad.labelRequest.service.productCode;
    bad.labelRequest.shipment.shipTo.address.countryCode = 'Germany';
    bad.labelRequest.shipment.parcels = [{ weight: '2kg', items: [{ quantity: 1.5 }] }];
    expect(
      problemsOf(bad)
        .map((p) => p.field)
        .sort(),
    ).toEqual([
      'labelRequest.service.productCode',
      'labelRequest.shipment.parcels[0].items[0].quantity',
      'labelRequest.shipment.parcels[0].weight',
      'labelRequest.shipment.shipTo.address.countryCode',
    ]);
  });

  it('rejects an idempotencyKey from the file, naming the field once, plus any other problem', () => {
    const withKey = { ...valid('s', '1'), labelRequest: { ...valid('s', '1').labelRequest, idempotencyKey: 'k-1', courier: '' } };
    const problems = problemsOf(withKey);
    expect(problems[0]).toEqual({ field: 'labelRequest.idempotencyKey', message: expect.stringMatching(/must not be supplied/) });
    expect(problems.map((p) => p.field)).toEqual(['labelRequest.idempotencyKey', 'labelRequest.courier']);
    expect(validateLabelRequest({ ...valid('s', '1').labelRequest, idempotencyKey: 'k' })).toMatchObject({
      ok: false,
      problems: [{ field: 'idempotencyKey' }],
    });
  });

  it('rejects unknown fields, a tracking override, missing identity and non-objects', () => {
    expect(problemsOf({ ...valid('s', '1'), tracking: { pollIntervalMs: 1 } })).toEqual([{ field: 'tracking', message: 'unknown field' }]);
    expect(
      problemsOf({
        ...valid('s', '1'),
        labelRequest: { ...valid('s', '1').labelRequest, shipment: { shipTo: { address: { postcode: '1' } } } },
      }),
    ).toEqual([{ field: 'labelRequest.shipment.shipTo.address.postcode', message: 'unknown field' }]);
    expect(problemsOf({ labelRequest: valid('s', '1').labelRequest }).map((p) => p.field)).toEqual(['shop', 'orderId']);
    expect(problemsOf([1, 2])).toEqual([{ field: '(root)', message: 'expected an object, got an array' }]);
  });
});

describe('import pipeline', () => {
  function recordsFrom(values: unknown[]): AsyncGenerator<SourceRecord> {
    return (async function* () {
      let line = 0;
      for (const value of values) {
        line++;
        yield { line, raw: JSON.stringify(value), value, problems: [] };
      }
    })();
  }

  it('counts started, already known, rejected (validation, duplicate, preflight) and failed', async () => {
    const catalog = fakeCatalog();
    const known = new Set(['shipment-s-2']);
    const started: string[] = [];
    const result = await importRecords({
      records: recordsFrom([
        valid('s', '1'),
        valid('s', '2'),
        valid('s', '1', 'dhl-express', 'EXPRESS_WORLDWIDE'), // duplicate of line 1
        valid('s', '4', 'fedex', 'X'),
        valid('s', '5', 'ups', 'UPS_GROUND'),
        { shop: 's', orderId: '6' },
        valid('s', '7'),
      ]),
      preflight: await Preflight.create(catalog),
      concurrency: 3,
      start: async (input: ShipmentInput): Promise<StartResult> => {
        const workflowId = `shipment-${input.shop}-${input.orderId}`;
        if (input.orderId === '7') throw new Error('deadline exceeded');
        if (known.has(workflowId)) return { status: 'already_known', workflowId };
        started.push(input.orderId);
        return { status: 'started', workflowId, runId: 'r' };
      },
    });
    expect(result.counts).toEqual({ records: 7, accepted: 3, started: 1, alreadyKnown: 1, rejected: 4, failed: 1 });
    expect(started).toEqual(['1']);
    expect(result.rejections.map((r) => [r.line, r.orderId, r.reasons.map((x) => x.field)])).toEqual([
      [3, '1', ['orderId']],
      [4, '4', ['labelRequest.courier']],
      [5, '5', ['labelRequest.service.productCode']],
      [6, '6', ['labelRequest']],
    ]);
    expect(result.rejections[0]!.reasons[0]!.message).toMatch(/duplicate: shop s order 1 already appears at line 1/);
    expect(result.rejections[2]!.reasons[0]!.message).toMatch(/courier "ups" has no product "UPS_GROUND"/);
    expect(result.failures).toEqual([{ line: 7, shop: 's', orderId: '7', workflowId: 'shipment-s-7', message: 'deadline exceeded' }]);
    // One courier list, one product list per courier used, despite concurrent records.
    expect(catalog.calls.sort()).toEqual(['couriers', 'products:ups']);
  });

  it('streams: never more than `concurrency` orders in flight, and reading waits for free slots', async () => {
    const total = 10_000;
    const concurrency = 16;
    let read = 0;
    let settled = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    let maxAhead = 0;
    const records = (async function* () {
      for (let i = 1; i <= total; i++) {
        read++;
        maxAhead = Math.max(maxAhead, read - settled);
        yield { line: i, raw: '', value: valid('shop', `o-${i}`), problems: [] } as SourceRecord;
      }
    })();
    const result = await importRecords({
      records,
      concurrency,
      start: async (input) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        settled++;
        return { status: 'started', workflowId: input.orderId, runId: 'r' };
      },
    });
    expect(result.counts.started).toBe(total);
    expect(maxInFlight).toBe(concurrency);
    // At most the slots plus the record being handed over are read ahead of the starts.
    expect(maxAhead).toBeLessThanOrEqual(concurrency + 1);
  });

  it('an account whose lists cannot be read fails only its own orders, tallied per account with the first reason', async () => {
    const held = { ...fakeCatalog(), listCouriers: () => Promise.reject(new Error('listCouriers: held (HTTP 429)')) };
    const noUpsProducts = {
      ...fakeCatalog(),
      listProducts: (courier: string) => Promise.reject(new Error(`listProducts ${courier}: (HTTP 503)`)),
    };
    const catalogs: Record<string, Catalog> = { a: held, b: noUpsProducts, c: fakeCatalog() };
    const shops = ['a-shop', 'b-shop', 'c-shop'];
    const result = await importRecords({
      records: recordsFrom(Array.from({ length: 9 }, (_, i) => valid(shops[i % 3]!, `o-${i}`))),
      preflight: new AccountPreflights(async (account) => catalogs[account]!),
      accountOf: (shop) => ({ account: shop.slice(0, 1) }),
      concurrency: 4,
      start: async (input) => ({ status: 'started', workflowId: input.orderId, runId: 'r' }),
    });
    expect(result.counts).toMatchObject({ records: 9, started: 3, failed: 6 });
    expect(result.notStarted.sort((x, y) => x.account.localeCompare(y.account))).toEqual([
      { account: 'a', orders: 3, reason: 'cannot read GET /couriers: listCouriers: held (HTTP 429)' },
      { account: 'b', orders: 3, reason: 'cannot read GET /products?courier=ups: listProducts ups: (HTTP 503)' },
    ]);
    expect(result.failures[0]!.message).toBe('preflight of shipping account "a": cannot read GET /couriers: listCouriers: held (HTTP 429)');
  });

  it('dry run (no start function): valid records are counted as accepted only', async () => {
    const result = await importRecords({ records: recordsFrom([valid('s', '1'), valid('s', '2'), {}]), concurrency: 2 });
    expect(result.counts).toMatchObject({ records: 3, accepted: 2, started: 0, rejected: 1 });
  });
});

describe('import command (in-process, no Temporal)', () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'import-test-'));

  it('usage errors are exit 2 before anything is read', async () => {
    const cases: string[][] = [
      [],
      ['a.ndjson', 'b.ndjson'],
      ['--format', 'xml', 'a.ndjson'],
      ['--concurrency', '0', 'a.ndjson'],
      ['--bogus', 'a.ndjson'],
      [path.join(tmp, 'missing.ndjson')],
    ];
    for (const argv of cases) {
      const { io } = captureIo();
      await expect(importCommand(argv, io), argv.join(' ')).rejects.toMatchObject({ exitCode: EXIT.usage });
    }
  });

  it('without SHIPPING_API_* the preflight is a configuration error naming the variables and --skip-preflight', async () => {
    const { io } = captureIo();
    const err = (await importCommand(['--dry-run', path.join(EXAMPLES, 'orders.ndjson')], io).catch((e: unknown) => e)) as CliError;
    expect(err).toBeInstanceOf(CliError);
    expect(err.exitCode).toBe(EXIT.usage);
    expect(err.message).toMatch(/SHIPPING_API_BASE_URL: is required/);
    expect(err.message).toMatch(/--skip-preflight/);
  });

  it('with SHOP_CONNECTORS naming a platform shop, its records without platformOrderId are rejected with the field', async () => {
    const file = path.join(tmp, 'platform.ndjson');
    const record = valid('berlin-coffee', 'P-1') as Record<string, unknown>;
    writeFileSync(file, `${JSON.stringify(record)}\n${JSON.stringify({ ...record, orderId: 'P-2', platformOrderId: '1002' })}\n`);
    const env = {
      SHOP_CONNECTORS: JSON.stringify({
        'berlin-coffee': {
          type: 'woocommerce',
          url: 'https://coffee.example',
          consumerKeyFile: '/not/read',
          consumerSecretFile: '/not/read',
        },
      }),
    };
    const { io, stdout } = captureIo({ env });
    expect(await importCommand(['--dry-run', '--skip-preflight', '--json', file], io)).toBe(EXIT.rejected);
    const summary = JSON.parse(stdout());
    expect(summary.counts).toMatchObject({ records: 2, accepted: 1, rejected: 1 });
    expect(summary.rejections[0].reasons).toEqual([
      {
        field: 'platformOrderId',
        message: "is required: shop berlin-coffee writes to woocommerce (its connector), which needs the order's id there",
      },
    ]);
  });

  it('examples/orders.ndjson dry run: every broken record reported with line and field, and written to --rejects', async () => {
    const rejects = path.join(tmp, 'rejects.ndjson');
    const { io, stdout, stderr } = captureIo();
    const code = await importCommand(
      ['--dry-run', '--skip-preflight', '--json', '--rejects', rejects, path.join(EXAMPLES, 'orders.ndjson')],
      io,
    );
    expect(code).toBe(EXIT.rejected);
    expect(stderr()).toBe(''); // --json: nothing per record on stderr, no bar (not a TTY)
    const summary = JSON.parse(stdout());
    expect(summary.counts).toMatchObject({ records: 35, accepted: 31, rejected: 4, started: 0 });
    expect(summary.preflight).toBe('skipped');
    const byLine = summary.rejections.map((r: { line: number; orderId: string; reasons: Array<{ field: string }> }) => [
      r.line,
      r.orderId,
      r.reasons.map((x) => x.field),
    ]);
    expect(byLine).toEqual([
      [5, 'BC-10241', ['labelRequest.service.productCode']],
      [12, 'AB-20109', ['labelRequest.shipment.shipTo.address.countryCode']],
      [19, 'LC-5532', ['labelRequest.shipment.parcels[0].weight']],
      [27, 'NO-7008', ['labelRequest.idempotencyKey']],
    ]);
    const written = readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(written.map((w) => w.line).sort((a, b) => a - b)).toEqual([5, 12, 19, 27]);
    const sourceLines = readFileSync(path.join(EXAMPLES, 'orders.ndjson'), 'utf8').split('\n');
    for (const w of written) {
      expect(w.kind).toBe('rejected');
      expect(w.raw).toBe(sourceLines[w.line - 1]); // the original text, nothing lost
      expect(w.reasons.length).toBeGreaterThan(0);
    }
  });

  it('reads standard input with --format, and a JSON array reports indexes', async () => {
    const input = JSON.stringify(
      [valid('s', '1'), { ...valid('s', '2'), labelRequest: { ...valid('s', '2').labelRequest, idempotencyKey: 'x' } }, valid('s', '1')],
      null,
      2,
    );
    const { io, stdout } = captureIo({ stdin: input });
    const code = await importCommand(['--dry-run', '--skip-preflight', '--json', '-'], io);
    expect(code).toBe(EXIT.rejected);
    const summary = JSON.parse(stdout());
    expect(summary.format).toBe('json');
    expect(summary.rejections.map((r: { index: number; reasons: Array<{ field: string }> }) => [r.index, r.reasons[0]!.field])).toEqual([
      [1, 'labelRequest.idempotencyKey'],
      [2, 'orderId'],
    ]);
  });

  it("examples/outage-order.ndjson (the README's outage step) is one valid order the orders file does not hold", async () => {
    const { io, stdout } = captureIo();
    const file = path.join(EXAMPLES, 'outage-order.ndjson');
    expect(await importCommand(['--dry-run', '--skip-preflight', '--json', file], io)).toBe(EXIT.ok);
    expect(JSON.parse(stdout())).toMatchObject({ counts: { records: 1, accepted: 1, rejected: 0 } });
    const known = readFileSync(path.join(EXAMPLES, 'orders.ndjson'), 'utf8');
    expect(known).not.toContain('"orderId":"BC-10301"');
  });

  it('a clean file exits 0; human output has the counts; a TTY gets a progress bar', async () => {
    const file = path.join(tmp, 'clean.ndjson');
    writeFileSync(file, [valid('s', '1'), valid('s', '2')].map((v) => JSON.stringify(v)).join('\n'));
    const { io, stdout, stderr } = captureIo({ tty: true });
    expect(await importCommand(['--dry-run', '--skip-preflight', file], io)).toBe(EXIT.ok);
    expect(stdout()).toMatch(/records\s+2\n\s+valid\s+2/);
    expect(stderr()).toMatch(/\[#+\]\s+100% 2 records/);
    const plain = captureIo();
    await importCommand(['--dry-run', '--skip-preflight', file], plain.io);
    expect(plain.stderr()).toBe('');
  });
});
