/**
 * The CSV form of an order import: columns flattened from the import record
 * `{ shop, orderId, labelRequest }`, one row per item (or per parcel, or one per order when
 * it has neither). Consecutive rows with the same shop and order_id are one order; rows of one
 * order are split into parcels by parcel_no. See docs/import-and-cli.md for the column list.
 *
 * The conversion is deliberately dumb: cells are placed at their field path, numeric columns
 * become numbers only when they look like one, and everything else is left to the contract
 * schemas, so a bad cell is reported with the same dotted field path as in a JSON import.
 */
import type { FieldProblem } from '../shipping-api/contract';
import { dottedPath } from '../shipping-api/contract';
import type { CsvRow } from './csv';
import { RECORD_LIMITS } from './limits';

type Level = 'order' | 'parcel' | 'item';
type Kind = 'string' | 'number' | 'list' | 'options';

interface Column {
  level: Level;
  kind: Kind;
  /** Field path inside the record (order level), the parcel (parcel level) or the item (item level). */
  path: ReadonlyArray<string | number>;
}

const LR = 'labelRequest';
const party = (prefix: 'ship_to' | 'ship_from', key: 'shipTo' | 'shipFrom'): Record<string, Column> => {
  const at = (...rest: Array<string | number>): Column => ({ level: 'order', kind: 'string', path: [LR, 'shipment', key, ...rest] });
  return {
    [`${prefix}_first_name`]: at('contact', 'firstName'),
    [`${prefix}_last_name`]: at('contact', 'lastName'),
    [`${prefix}_phone`]: at('contact', 'phone'),
    [`${prefix}_email`]: at('contact', 'email'),
    [`${prefix}_street1`]: at('address', 'streetLines', 0),
    [`${prefix}_street2`]: at('address', 'streetLines', 1),
    [`${prefix}_street3`]: at('address', 'streetLines', 2),
    [`${prefix}_city`]: at('address', 'city'),
    [`${prefix}_state`]: at('address', 'state'),
    [`${prefix}_postal_code`]: at('address', 'postalCode'),
    [`${prefix}_country_code`]: at('address', 'countryCode'),
  };
};
const order = (kind: Kind, ...path: Array<string | number>): Column => ({ level: 'order', kind, path });

/**
 * Every column the CSV import understands. Any other header is an error (a typo must not drop
 * data). Prototype-less and read with own-property checks, so a `constructor` or `__proto__`
 * header is an unknown column, not Object's.
 */
export const CSV_COLUMNS: Readonly<Record<string, Column>> = Object.assign(Object.create(null) as Record<string, Column>, {
  shop: order('string', 'shop'),
  order_id: order('string', 'orderId'),
  /** The order's id on Shopify or WooCommerce, for a shop with a platform connector. */
  platform_order_id: order('string', 'platformOrderId'),
  courier: order('string', LR, 'courier'),
  product_code: order('string', LR, 'service', 'productCode'),
  ...party('ship_to', 'shipTo'),
  ...party('ship_from', 'shipFrom'),
  label_format: order('string', LR, 'label', 'format'),
  weight_unit: order('string', LR, 'units', 'weight'),
  dimension_unit: order('string', LR, 'units', 'dimension'),
  customer_order_number: order('string', LR, 'order', 'customerOrderNumber'),
  platform_order_number: order('string', LR, 'order', 'orderNumbers', 'platformOrderNumber'),
  /** `|`-separated list. */
  reference_numbers: order('list', LR, 'order', 'orderNumbers', 'referenceNumbers'),
  customs_tax_number: order('string', LR, 'customs', 'taxNumber'),
  customs_ioss: order('string', LR, 'customs', 'ioss'),
  customs_vat: order('string', LR, 'customs', 'vat'),
  customs_eori: order('string', LR, 'customs', 'eori'),
  /** `CODE=value|CODE=value`. */
  service_options: order('options', LR, 'serviceOptions'),
  /** Key of labelRequest.courierOptions; the two columns below go under it. */
  courier_options_integration: order('string', LR, 'courierOptions'),
  courier_options_source_code: order('string', LR, 'courierOptions', '*', 'sourceCode'),
  courier_options_sensitive_type: order('string', LR, 'courierOptions', '*', 'sensitiveType'),

  parcel_no: { level: 'parcel', kind: 'string', path: [] },
  parcel_weight: { level: 'parcel', kind: 'number', path: ['weight'] },
  parcel_length: { level: 'parcel', kind: 'number', path: ['dimension', 'length'] },
  parcel_width: { level: 'parcel', kind: 'number', path: ['dimension', 'width'] },
  parcel_height: { level: 'parcel', kind: 'number', path: ['dimension', 'height'] },

  item_description_en: { level: 'item', kind: 'string', path: ['descriptionEn'] },
  item_description_local: { level: 'item', kind: 'string', path: ['descriptionLocal'] },
  item_quantity: { level: 'item', kind: 'number', path: ['quantity'] },
  item_unit_price_amount: { level: 'item', kind: 'number', path: ['unitPrice', 'amount'] },
  item_unit_price_currency: { level: 'item', kind: 'string', path: ['unitPrice', 'currency'] },
  item_unit_weight: { level: 'item', kind: 'number', path: ['unitWeight'] },
});

/** Keys that reach an object's prototype (or would be dropped by the schema's copy): never taken from a cell. */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** A new object without a prototype, so no key written into it reaches Object.prototype. */
const bare = (): Record<string | number, unknown> => Object.create(null) as Record<string | number, unknown>;

export class CsvHeaderError extends Error {
  override readonly name = 'CsvHeaderError';
}

/** Checks the header row; throws CsvHeaderError naming unknown, repeated or missing columns. */
export function checkHeader(row: CsvRow): string[] {
  const names = row.fields.map((f) => f.trim());
  const problems: string[] = [];
  const unknown = names.filter((n) => !Object.hasOwn(CSV_COLUMNS, n));
  if (unknown.length > 0) problems.push(`unknown column(s): ${unknown.map((n) => `"${n}"`).join(', ')}`);
  const repeated = names.filter((n, i) => names.indexOf(n) !== i);
  if (repeated.length > 0) problems.push(`repeated column(s): ${[...new Set(repeated)].join(', ')}`);
  for (const required of ['shop', 'order_id']) {
    if (!names.includes(required)) problems.push(`missing column: ${required}`);
  }
  if (row.error) problems.push(row.error);
  if (problems.length > 0) {
    throw new CsvHeaderError(
      `CSV header (line ${row.line}): ${problems.join('; ')}. Known columns: ${Object.keys(CSV_COLUMNS).join(', ')}`,
    );
  }
  return names;
}

export interface CsvOrder {
  /** Line of the order's first row. */
  line: number;
  rows: CsvRow[];
  /** The import record built from the rows; validated later like any other record. */
  value: Record<string, unknown>;
  /** Problems found while building it (malformed rows, conflicting cells). */
  problems: FieldProblem[];
}

/**
 * Groups rows into orders as they stream by: a row whose shop or order_id differs from the
 * previous row's starts a new order. Memory holds one order's rows at a time.
 */
export class CsvOrderGrouper {
  private current: CsvRow[] = [];
  /** Characters of the current order's rows, and rows not kept because the order passed RECORD_LIMITS.maxChars. */
  private chars = 0;
  private dropped = 0;
  private readonly shopAt: number;
  private readonly orderAt: number;

  constructor(private readonly header: string[]) {
    this.shopAt = header.indexOf('shop');
    this.orderAt = header.indexOf('order_id');
  }

  push(row: CsvRow): CsvOrder[] {
    const first = this.current[0];
    if (first && !this.sameOrder(first, row)) {
      const done = this.build(this.current);
      this.start(row);
      return [done];
    }
    if (first && this.chars + row.raw.length > RECORD_LIMITS.maxChars) this.dropped++;
    else {
      this.current.push(row);
      this.chars += row.raw.length;
    }
    return [];
  }

  end(): CsvOrder[] {
    if (this.current.length === 0) return [];
    const done = this.build(this.current);
    this.start();
    return [done];
  }

  private start(row?: CsvRow): void {
    this.current = row ? [row] : [];
    this.chars = row?.raw.length ?? 0;
    this.dropped = 0;
  }

  private sameOrder(a: CsvRow, b: CsvRow): boolean {
    const key = (r: CsvRow) => [r.fields[this.shopAt]?.trim() ?? '', r.fields[this.orderAt]?.trim() ?? ''];
    const [s1, o1] = key(a);
    const [s2, o2] = key(b);
    return s1 !== '' && o1 !== '' && s1 === s2 && o1 === o2;
  }

  private build(rows: CsvRow[]): CsvOrder {
    const order: CsvOrder = { line: rows[0]!.line, rows, ...rowsToRecord(this.header, rows) };
    if (this.dropped > 0) {
      const message = `the order's rows pass ${RECORD_LIMITS.maxChars} characters, the most one record may have; ${this.dropped} later row(s) not kept`;
      order.problems.unshift({ field: '(size)', message });
    }
    return order;
  }
}

/** Builds one import record from the rows of one order. Exported for unit tests. */
export function rowsToRecord(header: string[], rows: CsvRow[]): { value: Record<string, unknown>; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const value = bare();
  const labelRequest = Object.assign(bare(), { service: bare(), shipment: bare() });
  value.labelRequest = labelRequest;

  for (const row of rows) {
    if (row.error) problems.push({ field: '(csv)', message: `line ${row.line}: ${row.error}` });
    if (row.fields.length !== header.length) {
      problems.push({
        field: '(csv)',
        message: `line ${row.line} has ${row.fields.length} cells, the header has ${header.length} columns`,
      });
    }
  }

  // Order-level cells: the first non-empty value of each column; a different value later is a conflict.
  const orderCells = new Map<string, { value: string; line: number }>();
  for (const row of rows) {
    header.forEach((name, i) => {
      const column = CSV_COLUMNS[name];
      const cell = row.fields[i]?.trim() ?? '';
      if (!column || column.level !== 'order' || cell === '') return;
      const seen = orderCells.get(name);
      if (!seen) orderCells.set(name, { value: cell, line: row.line });
      else if (seen.value !== cell) {
        problems.push({
          field: dottedPath(column.path.filter((s) => s !== '*')),
          message: `column ${name} differs between rows of this order (line ${seen.line}: "${seen.value}", line ${row.line}: "${cell}")`,
        });
      }
    });
  }

  let integration = orderCells.get('courier_options_integration')?.value;
  if (integration !== undefined && PROTOTYPE_KEYS.has(integration)) {
    problems.push({
      field: `${LR}.courierOptions`,
      message: `courier_options_integration "${integration}" cannot be an integration code (it names a JavaScript object property)`,
    });
    integration = undefined;
    orderCells.delete('courier_options_integration');
  }
  for (const [name, { value: cell }] of orderCells) {
    const column = CSV_COLUMNS[name]!;
    if (name === 'courier_options_integration') continue;
    if (column.path.includes('*')) {
      if (integration === undefined) {
        problems.push({
          field: `${LR}.courierOptions`,
          message: `column ${name} needs courier_options_integration (the courier integration code the options are keyed by)`,
        });
        continue;
      }
      setPath(
        value,
        column.path.map((s) => (s === '*' ? integration : s)),
        cell,
      );
    } else if (column.kind === 'list') {
      setPath(
        value,
        column.path,
        cell
          .split('|')
          .map((s) => s.trim())
          .filter(Boolean),
      );
    } else if (column.kind === 'options') {
      setPath(value, column.path, parseOptions(cell, column.path, problems));
    } else {
      setPath(value, column.path, column.kind === 'number' ? toNumber(cell) : cell);
    }
  }
  if (integration !== undefined && !Object.hasOwn(labelRequest, 'courierOptions'))
    setPath(value, [LR, 'courierOptions', integration], bare());

  // Street lines: street1..3 in order, without gaps left by empty columns.
  for (const key of ['shipTo', 'shipFrom']) {
    const party = (labelRequest.shipment as Record<string, { address?: { streetLines?: unknown } } | undefined>)[key];
    const address = party?.address;
    if (address && Array.isArray(address.streetLines)) address.streetLines = address.streetLines.filter((s: unknown) => s !== undefined);
  }

  const parcels = buildParcels(header, rows, problems);
  if (parcels.length > 0) (labelRequest.shipment as Record<string, unknown>).parcels = parcels;
  // shop and orderId first, as in the JSON forms (the rejects file shows this record).
  const { labelRequest: _built, ...identity } = value;
  return { value: Object.assign(bare(), identity, { labelRequest }), problems };
}

function buildParcels(header: string[], rows: CsvRow[], problems: FieldProblem[]): Array<Record<string, unknown>> {
  const parcels: Array<{ no: string; parcel: Record<string, unknown>; cells: Map<string, { value: string; line: number }> }> = [];
  const noAt = header.indexOf('parcel_no');
  for (const row of rows) {
    const no = (noAt >= 0 ? row.fields[noAt]?.trim() : '') || '1';
    const cellsOf = (level: Level) =>
      header.flatMap((name, i) => {
        const column = CSV_COLUMNS[name];
        const cell = row.fields[i]?.trim() ?? '';
        return column && column.level === level && cell !== '' && name !== 'parcel_no' ? [{ name, column, cell }] : [];
      });
    const parcelCells = cellsOf('parcel');
    const itemCells = cellsOf('item');
    if (parcelCells.length === 0 && itemCells.length === 0 && (noAt < 0 || row.fields[noAt]?.trim() === '')) continue;

    let entry = parcels.find((p) => p.no === no);
    if (!entry) {
      entry = { no, parcel: bare(), cells: new Map() };
      parcels.push(entry);
    }
    const index = parcels.indexOf(entry);
    for (const { name, column, cell } of parcelCells) {
      const seen = entry.cells.get(name);
      if (!seen) {
        entry.cells.set(name, { value: cell, line: row.line });
        setPath(entry.parcel, column.path, toNumber(cell));
      } else if (seen.value !== cell) {
        problems.push({
          field: dottedPath([LR, 'shipment', 'parcels', index, ...column.path]),
          message: `column ${name} differs between rows of parcel ${no} (line ${seen.line}: "${seen.value}", line ${row.line}: "${cell}")`,
        });
      }
    }
    if (itemCells.length > 0) {
      const item = bare();
      for (const { column, cell } of itemCells) setPath(item, column.path, column.kind === 'number' ? toNumber(cell) : cell);
      const items = (entry.parcel.items ??= []) as unknown[];
      items.push(item);
    }
  }
  return parcels.map((p) => p.parcel);
}

function parseOptions(
  cell: string,
  path: ReadonlyArray<string | number>,
  problems: FieldProblem[],
): Array<{ code: string; value: string }> {
  return cell
    .split('|')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry, i) => {
      const eq = entry.indexOf('=');
      if (eq < 0) {
        problems.push({ field: dottedPath([...path, i]), message: `service_options entry "${entry}" is not CODE=value` });
        return { code: entry, value: '' };
      }
      return { code: entry.slice(0, eq).trim(), value: entry.slice(eq + 1).trim() };
    });
}

/** A number when the cell looks like one; otherwise the text, so the schema names the field. */
function toNumber(cell: string): number | string {
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(cell) ? Number(cell) : cell;
}

/** Writes `value` at `path`, creating prototype-less objects (and arrays) on the way; only own properties are followed. */
function setPath(target: Record<string, unknown>, path: ReadonlyArray<string | number>, value: unknown): void {
  let node: Record<string | number, unknown> = target;
  path.forEach((segment, i) => {
    if (i === path.length - 1) {
      node[segment] = value;
      return;
    }
    if (!Object.hasOwn(node, segment) || node[segment] === undefined) node[segment] = typeof path[i + 1] === 'number' ? [] : bare();
    node = node[segment] as Record<string | number, unknown>;
  });
}
