/** Pure unit tests: the RFC 4180 parser and the CSV → import record mapping (no server). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CsvParser, parseCsv, type CsvRow } from '../order-import/csv';
import { checkHeader, CsvHeaderError, CsvOrderGrouper, rowsToRecord } from '../order-import/csv-orders';
import { validateRecord } from '../order-import/record';

const fields = (rows: CsvRow[]) => rows.map((r) => r.fields);

/** Feeds the text in pieces of `size` characters. */
function parseInChunks(text: string, size: number): CsvRow[] {
  const parser = new CsvParser();
  const rows: CsvRow[] = [];
  for (let i = 0; i < text.length; i += size) rows.push(...parser.push(text.slice(i, i + size)));
  return [...rows, ...parser.end()];
}

describe('CSV parser (RFC 4180)', () => {
  it('splits plain rows and numbers their lines', () => {
    const rows = parseCsv('a,b,c\n1,2,3\n');
    expect(fields(rows)).toEqual([
      ['a', 'b', 'c'],
      ['1', '2', '3'],
    ]);
    expect(rows.map((r) => r.line)).toEqual([1, 2]);
    expect(rows[1]!.raw).toBe('1,2,3');
  });

  it('handles quotes, escaped quotes, commas and line breaks inside quotes', () => {
    const text = 'name,note\r\n"Mug, blue","He said ""hi"""\r\n"two\r\nlines","x"\r\nlast,"a\nb"\r\n';
    const rows = parseCsv(text);
    expect(fields(rows)).toEqual([
      ['name', 'note'],
      ['Mug, blue', 'He said "hi"'],
      ['two\r\nlines', 'x'],
      ['last', 'a\nb'],
    ]);
    // A row after a multi-line field starts on the right physical line.
    expect(rows.map((r) => r.line)).toEqual([1, 2, 3, 5]);
    expect(rows[2]!.raw).toBe('"two\r\nlines","x"');
  });

  it('gives the same rows whatever the chunk size (quotes and CRLF split across chunks)', () => {
    const text = 'a,"b ""q"", c"\r\n"multi\nline",2\r\n,,\r\n"",x\n';
    const whole = parseCsv(text);
    for (const size of [1, 2, 3, 5, 7]) expect(parseInChunks(text, size)).toEqual(whole);
    expect(fields(whole)).toEqual([
      ['a', 'b "q", c'],
      ['multi\nline', '2'],
      ['', '', ''],
      ['', 'x'],
    ]);
  });

  it('skips empty lines, strips a BOM, keeps empty fields and reads a last row without line break', () => {
    const rows = parseCsv('\uFEFFa,b\n\n1,\n\n,2');
    expect(fields(rows)).toEqual([
      ['a', 'b'],
      ['1', ''],
      ['', '2'],
    ]);
    expect(rows.map((r) => r.line)).toEqual([1, 3, 5]);
  });

  it('reports an unterminated quote and text after a closing quote as errors of that row', () => {
    const rows = parseCsv('a,b\n"x"y,1\n2,"open\nstill open');
    expect(rows[0]!.error).toBeUndefined();
    expect(rows[1]!.error).toMatch(/after a closing quote on line 2/);
    expect(rows[1]!.fields).toEqual(['xy', '1']);
    expect(rows[2]!.error).toMatch(/opened on line 3 is never closed/);
  });
});

const HEADER =
  'shop,order_id,courier,product_code,ship_to_city,ship_to_postal_code,ship_to_country_code,reference_numbers,service_options,' +
  'courier_options_integration,courier_options_source_code,parcel_no,parcel_weight,parcel_length,parcel_width,parcel_height,' +
  'item_description_en,item_quantity,item_unit_price_amount,item_unit_price_currency';

function ordersOf(csv: string) {
  const [header, ...rows] = parseCsv(csv);
  const grouper = new CsvOrderGrouper(checkHeader(header!));
  return [...rows.flatMap((r) => grouper.push(r)), ...grouper.end()];
}

describe('CSV orders', () => {
  it('rejects unknown, repeated and missing columns by name', () => {
    expect(() => checkHeader(parseCsv('shop,order_id,ship_to_postcode\n')[0]!)).toThrow(/unknown column\(s\): "ship_to_postcode"/);
    expect(() => checkHeader(parseCsv('shop,shop,order_id\n')[0]!)).toThrow(/repeated column\(s\): shop/);
    expect(() => checkHeader(parseCsv('shop,courier\n')[0]!)).toThrow(CsvHeaderError);
    expect(() => checkHeader(parseCsv('shop,courier\n')[0]!)).toThrow(/missing column: order_id/);
  });

  it('groups consecutive rows of one shop+order_id into one order, split into parcels by parcel_no', () => {
    const csv = [
      HEADER,
      's1,o1,dhl-express,EXPRESS_WORLDWIDE,Zürich,8001,CH,REF-1|REF-2,INSURANCE=100 EUR|SIGNATURE=yes,fake-integration,WEB,1,2.5,40,30,20,"Mug, blue",2,14.9,EUR',
      's1,o1,,,,,,,,,,1,,,,,Plate,1,20,EUR',
      's1,o1,,,,,,,,,,2,1.25,10,10,10,"Poster ""Night""",1,9.5,CHF',
      's1,o2,ups,UPS_STANDARD,Lyon,69002,FR,,,,,,,,,,,,,',
    ].join('\n');
    const orders = ordersOf(csv);
    expect(orders).toHaveLength(2);
    const [first, second] = orders;
    expect(first!.line).toBe(2);
    expect(first!.rows.map((r) => r.line)).toEqual([2, 3, 4]);
    expect(first!.problems).toEqual([]);
    expect(first!.value).toEqual({
      shop: 's1',
      orderId: 'o1',
      labelRequest: {
        courier: 'dhl-express',
        service: { productCode: 'EXPRESS_WORLDWIDE' },
        shipment: {
          shipTo: { address: { city: 'Zürich', postalCode: '8001', countryCode: 'CH' } },
          parcels: [
            {
              weight: 2.5,
              dimension: { length: 40, width: 30, height: 20 },
              items: [
                { descriptionEn: 'Mug, blue', quantity: 2, unitPrice: { amount: 14.9, currency: 'EUR' } },
                { descriptionEn: 'Plate', quantity: 1, unitPrice: { amount: 20, currency: 'EUR' } },
              ],
            },
            {
              weight: 1.25,
              dimension: { length: 10, width: 10, height: 10 },
              items: [{ descriptionEn: 'Poster "Night"', quantity: 1, unitPrice: { amount: 9.5, currency: 'CHF' } }],
            },
          ],
        },
        order: { orderNumbers: { referenceNumbers: ['REF-1', 'REF-2'] } },
        serviceOptions: [
          { code: 'INSURANCE', value: '100 EUR' },
          { code: 'SIGNATURE', value: 'yes' },
        ],
        courierOptions: { 'fake-integration': { sourceCode: 'WEB' } },
      },
    });
    expect(validateRecord(first!.value).ok).toBe(true);
    // An order with neither parcel nor item cells has no parcels at all.
    expect(second!.value).toMatchObject({ orderId: 'o2', labelRequest: { shipment: { shipTo: { address: { city: 'Lyon' } } } } });
    expect((second!.value.labelRequest as { shipment: object }).shipment).not.toHaveProperty('parcels');
    expect(validateRecord(second!.value).ok).toBe(true);
  });

  it('leaves non-numeric numbers to the schema, which names the field', () => {
    const [order] = ordersOf([HEADER, 's1,o1,ups,UPS_STANDARD,Lyon,69002,FR,,,,,1,1.5kg,,,,Mug,two,3,EUR'].join('\n'));
    const result = validateRecord(order!.value);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => p.field).sort()).toEqual([
      'labelRequest.shipment.parcels[0].items[0].quantity',
      'labelRequest.shipment.parcels[0].weight',
    ]);
  });

  it('reports conflicting order-level cells, options without integration and short rows', () => {
    const csv = [
      HEADER,
      's1,o1,ups,UPS_STANDARD,Lyon,69002,FR,,,,WEB,1,1,,,,Mug,1,3,EUR',
      's1,o1,ups,UPS_EXPRESS,,,,,,,,1,2,,,,Cup,1,3,EUR',
      's1,o1,ups',
    ].join('\n');
    const [order] = ordersOf(csv);
    const messages = order!.problems.map((p) => `${p.field}: ${p.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^labelRequest\.service\.productCode: column product_code differs between rows of this order \(line 2: "UPS_STANDARD", line 3: "UPS_EXPRESS"\)/,
        ),
        expect.stringMatching(/^labelRequest\.courierOptions: column courier_options_source_code needs courier_options_integration/),
        expect.stringMatching(/^labelRequest\.shipment\.parcels\[0\]\.weight: column parcel_weight differs between rows of parcel 1/),
        expect.stringMatching(/^\(csv\): line 4 has 3 cells, the header has 20 columns/),
      ]),
    );
  });

  it('refuses __proto__ as an integration code without touching Object.prototype; later orders are unaffected', async () => {
    const header = 'shop,order_id,courier,product_code,courier_options_integration,courier_options_source_code';
    const csv = [
      header,
      's,o1,ups,UPS_STANDARD,__proto__,POLLUTED',
      's,o2,ups,UPS_STANDARD,fake-integration,SRC',
      's,o3,ups,UPS_STANDARD,,',
    ].join('\n');
    const orders = ordersOf(csv);
    expect(Object.prototype).not.toHaveProperty('sourceCode');
    expect(({} as Record<string, unknown>).sourceCode).toBeUndefined();
    expect(orders[0]!.problems).toEqual([
      {
        field: 'labelRequest.courierOptions',
        message: expect.stringMatching(/courier_options_integration "__proto__" cannot be an integration code/),
      },
      {
        field: 'labelRequest.courierOptions',
        message: expect.stringMatching(/column courier_options_source_code needs courier_options_integration/),
      },
    ]);
    const [, second, third] = orders.map((o) => validateRecord(o.value));
    expect(second).toMatchObject({ ok: true, value: { labelRequest: { courierOptions: { 'fake-integration': { sourceCode: 'SRC' } } } } });
    expect(third!.ok).toBe(true);
    for (const key of ['constructor', 'prototype']) {
      const [order] = ordersOf([header, `s,o1,ups,UPS_STANDARD,${key},X`].join('\n'));
      expect(order!.problems[0]!.message).toMatch(new RegExp(`"${key}" cannot be an integration code`));
    }
  });

  it('refuses constructor, __proto__ and other Object property names as columns (their data was dropped silently)', () => {
    for (const column of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(() => checkHeader(parseCsv(`shop,order_id,${column}\n`)[0]!)).toThrow(new RegExp(`unknown column\\(s\\): "${column}"`));
    }
  });

  it('a missing product code is reported at labelRequest.service.productCode', () => {
    const { value } = rowsToRecord(['shop', 'order_id', 'courier', 'product_code'], parseCsv('s,o,ups,\n'));
    const result = validateRecord(value);
    expect(result.ok ? [] : result.problems.map((p) => p.field)).toEqual(['labelRequest.service.productCode']);
  });

  it('examples/orders.csv: 14 orders, 13 valid by schema (one more fails preflight), multi-row orders grouped', () => {
    const text = readFileSync(path.join(__dirname, '..', 'examples', 'orders.csv'), 'utf8');
    const orders = ordersOf(text);
    expect(orders).toHaveLength(14);
    const invalid = orders.filter((o) => o.problems.length > 0 || !validateRecord(o.value).ok);
    expect(invalid.map((o) => o.value.orderId)).toEqual(['AB-30104']);
    const vt3003 = orders.find((o) => o.value.orderId === 'VT-3003')!;
    expect(vt3003.rows).toHaveLength(3);
    const parcels = (vt3003.value.labelRequest as { shipment: { parcels: Array<{ items: unknown[] }> } }).shipment.parcels;
    expect(parcels.map((p) => p.items.length)).toEqual([2, 1]);
  });
});
