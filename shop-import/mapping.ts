/**
 * A platform order → the import record of its shipment ({shop, orderId, platformOrderId,
 * labelRequest}), by the shop's mapping settings. Pure: the same order and settings always make
 * the same record, so a re-read order maps to the same shipment. What cannot be mapped is
 * returned as problems naming the order's field; the record is then validated by the import
 * pipeline like a file's record.
 */
import type { FieldProblem, LabelRequestWithoutKey } from '../shipping-api/contract';
import { ORDER_LIMITS } from '../domain/platform-order-checks';
import { convertWeight, type PlatformAddress, type PlatformLine, type PlatformOrder, type PlatformParcel } from '../domain/platform-order';
import type { ImportMapping } from '../config/shop-import';

export interface MappedRecord {
  shop: string;
  orderId: string;
  platformOrderId: string;
  /** Of an order shipping as several parcels: the first parcel's (the workflow's summary shows it). */
  labelRequest: LabelRequestWithoutKey;
  /** An order whose open fulfillment orders are at several locations: one label request each. */
  parcels?: Array<{ location: string; name: string; labelRequest: LabelRequestWithoutKey }>;
}

export type Mapped = { ok: true; record: MappedRecord } | { ok: false; problems: FieldProblem[] };

type Party = NonNullable<LabelRequestWithoutKey['shipment']['shipTo']>;
type Parcel = NonNullable<LabelRequestWithoutKey['shipment']['parcels']>[number];

export function mapOrder(shop: string, order: PlatformOrder, mapping: ImportMapping): Mapped {
  const parcels = order.parcels ?? [];
  return parcels.length > 1 && !order.problem ? mapParcels(shop, order, parcels, mapping) : mapOne(shop, order, mapping);
}

/**
 * Each location's parcel mapped as an order of its own (its ship-from, its lines); a problem
 * names the parcel's field (`parcels[1].lines[0].weight`). WooCommerce orders have no parcels.
 */
function mapParcels(shop: string, order: PlatformOrder, parcels: PlatformParcel[], mapping: ImportMapping): Mapped {
  const problems: FieldProblem[] = [];
  const mapped: MappedRecord[] = [];
  parcels.forEach((parcel, i) => {
    const one = mapOne(shop, { ...order, shipFrom: parcel.shipFrom, lines: parcel.lines, parcels: [parcel] }, mapping);
    if (!one.ok) problems.push(...one.problems.map((p) => ({ ...p, field: `parcels[${i}].${p.field}` })));
    else mapped.push(one.record);
  });
  if (problems.length > 0) return { ok: false, problems };
  // The first parcel's record stands for the order (its summary); each parcel's request goes with it.
  const each = parcels.map((parcel, i) => ({ location: parcel.location!, name: parcel.name, labelRequest: mapped[i]!.labelRequest }));
  return { ok: true, record: { ...mapped[0]!, parcels: each } };
}

function mapOne(shop: string, order: PlatformOrder, mapping: ImportMapping): Mapped {
  const problems: FieldProblem[] = [];
  if (order.problem) problems.push(order.problem);
  const service = serviceOf(order, mapping, problems);
  const shipFrom = shipFromOf(order, mapping, problems);
  if (!order.shipTo) problems.push({ field: 'shipTo', message: 'the order has no shipping address' });
  else if (!order.shipTo.countryCode) problems.push({ field: 'shipTo.countryCode', message: 'the shipping address has no country' });
  const parcel = parcelOf(order, mapping, problems);
  if (problems.length > 0 || !service || !shipFrom || !order.shipTo) return { ok: false, problems };

  const shipTo: Party = {
    contact: definedOnly({
      firstName: order.shipTo.firstName,
      lastName: order.shipTo.lastName,
      phone: order.shipTo.phone,
      email: order.email,
    }),
    address: addressOf(order.shipTo),
  };
  const crossBorder = shipFrom.address?.countryCode !== shipTo.address?.countryCode;
  const labelRequest: LabelRequestWithoutKey = {
    courier: service.courier,
    service: { productCode: service.productCode },
    shipment: { shipFrom, shipTo, parcels: [parcel] },
    label: mapping.label,
    units: mapping.units,
    order: {
      customerOrderNumber: valueOf(order, mapping.customerOrderNumber),
      ...(mapping.platformOrderNumber ? { orderNumbers: { platformOrderNumber: valueOf(order, mapping.platformOrderNumber) } } : {}),
    },
    ...(mapping.customs && (crossBorder || mapping.customsWhen === 'always') ? { customs: mapping.customs } : {}),
  };
  return {
    ok: true,
    record: {
      shop,
      orderId: orderIdOf(order, mapping),
      platformOrderId: order.platformOrderId,
      labelRequest,
    },
  };
}

/** The shipment's orderId of a platform order: the mapping's choice of value, after its prefix. */
export function orderIdOf(order: PlatformOrder, mapping: ImportMapping): string {
  return `${mapping.orderIdPrefix}${valueOf(order, mapping.orderId)}`;
}

function valueOf(order: PlatformOrder, which: 'name' | 'number' | 'id'): string {
  return which === 'name' ? order.name : which === 'number' ? order.number : order.platformOrderId;
}

/** By the method's title, then its code, case-insensitive; else the default service. */
function serviceOf(order: PlatformOrder, mapping: ImportMapping, problems: FieldProblem[]) {
  const wanted = [order.shippingMethod?.title, order.shippingMethod?.code]
    .filter((v): v is string => Boolean(v))
    .map((v) => v.toLowerCase());
  for (const [method, service] of Object.entries(mapping.shippingMethods)) {
    if (wanted.includes(method.toLowerCase())) return service;
  }
  if (mapping.defaultService) return mapping.defaultService;
  const named = order.shippingMethod ? `"${order.shippingMethod.title ?? order.shippingMethod.code}"` : '(none)';
  problems.push({
    field: 'shippingMethod',
    message: `no courier for shipping method ${named}: add it to import.mapping.shippingMethods, or set import.mapping.defaultService`,
  });
  return undefined;
}

function shipFromOf(order: PlatformOrder, mapping: ImportMapping, problems: FieldProblem[]): Party | undefined {
  const address = mapping.shipFrom?.address ?? (order.shipFrom ? addressOf(order.shipFrom) : undefined);
  if (!address) {
    problems.push({ field: 'shipFrom', message: 'no ship-from address: set import.mapping.shipFrom.address' });
    return undefined;
  }
  return { ...(mapping.shipFrom?.contact ? { contact: mapping.shipFrom.contact } : {}), address };
}

/** One parcel with every line; its weight is the items' plus packaging, in the label's unit. */
function parcelOf(order: PlatformOrder, mapping: ImportMapping, problems: FieldProblem[]): Parcel {
  if (order.lines.length === 0) problems.push({ field: 'lines', message: 'nothing to ship: no line with a remaining quantity' });
  let total = mapping.packagingWeight;
  const items = order.lines.map((line, i) => {
    const unitWeight = line.unitWeight ? convertWeight(line.unitWeight.value, line.unitWeight.unit, mapping.units.weight) : undefined;
    if (unitWeight === undefined) problems.push({ field: `lines[${i}].weight`, message: `line "${line.sku ?? line.title}" has no weight` });
    problems.push(...lineProblems(line, i));
    total += (unitWeight ?? 0) * line.quantity;
    return definedOnly({
      descriptionEn: line.title.slice(0, 200),
      quantity: line.quantity,
      unitPrice: line.unitPrice === null ? undefined : { amount: line.unitPrice, currency: order.currency },
      unitWeight,
    });
  });
  return {
    weight: Math.round(total * 1000) / 1000,
    ...(mapping.parcelDimension ? { dimension: mapping.parcelDimension } : {}),
    items,
  };
}

/** What no label can carry: no items or fractions of one, a negative price, a unit heavier than a pallet. */
function lineProblems(line: PlatformLine, i: number): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!Number.isInteger(line.quantity) || line.quantity < 1 || line.quantity > ORDER_LIMITS.quantity)
    problems.push({
      field: `lines[${i}].quantity`,
      message: `${line.quantity} is not a number of items from 1 to ${ORDER_LIMITS.quantity}`,
    });
  if (line.unitPrice !== null && !(line.unitPrice >= 0 && line.unitPrice <= ORDER_LIMITS.price))
    problems.push({ field: `lines[${i}].unitPrice`, message: `${line.unitPrice} is not a price from 0 to ${ORDER_LIMITS.price}` });
  const kg = line.unitWeight ? convertWeight(line.unitWeight.value, line.unitWeight.unit, 'kg') : 0;
  if (!(kg >= 0 && kg <= ORDER_LIMITS.unitWeightKg))
    problems.push({ field: `lines[${i}].weight`, message: `${kg} kg a unit is beyond ${ORDER_LIMITS.unitWeightKg} kg` });
  return problems;
}

function addressOf(a: PlatformAddress): NonNullable<Party['address']> {
  return definedOnly({
    streetLines: a.streetLines.length > 0 ? a.streetLines : undefined,
    city: a.city,
    state: a.state,
    postalCode: a.postalCode,
    countryCode: a.countryCode,
  });
}

/** Leaves out null, undefined and empty-string fields: the label request omits what the order lacks. */
function definedOnly<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined && v !== '')) as {
    [K in keyof T]?: Exclude<T[K], null>;
  };
}
