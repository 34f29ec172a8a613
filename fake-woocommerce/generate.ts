/**
 * Bulk orders for an import bench: thousands of plausible EU orders from one seeded PRNG, so a
 * seed replays the same orders. Lines come from a small catalogue (an importer fetches each
 * product once and caches it), including one product without a weight, as real catalogues
 * have. Dates are spread before an end time, ids follow creation, and some orders were
 * modified a little after they were created (paid a minute later), so id and modified order
 * differ the way they do in a store.
 */
import { mulberry32 } from '../fake-shipping-api/faults';
import { gmtWall, parseGmtSeed } from './clock';
import type { ParsedGenerate } from './inputs';
import type { ParsedSeed } from './seed';
import type { WooStore } from './store';

interface Product {
  sku: string;
  name: string;
  price: string;
  weight: string;
  dimensions: { length: string; width: string; height: string };
  /** Relative share of lines. */
  share: number;
}

const dims = (length: string, width: string, height: string): Product['dimensions'] => ({ length, width, height });

const CATALOGUE: readonly Product[] = [
  { sku: 'GEN-MUG', name: 'Ceramic mug', price: '12.50', weight: '0.4', dimensions: dims('12', '9', '10'), share: 14 },
  { sku: 'GEN-TEE-M', name: 'T-shirt, size M', price: '19.00', weight: '0.2', dimensions: dims('30', '20', '2'), share: 16 },
  { sku: 'GEN-HOODIE-L', name: 'Hoodie, size L', price: '49.00', weight: '0.7', dimensions: dims('35', '28', '6'), share: 10 },
  { sku: 'GEN-POSTER-A2', name: 'Poster A2 (rolled)', price: '25.00', weight: '0.3', dimensions: dims('62', '8', '8'), share: 10 },
  { sku: 'GEN-BOOK', name: 'Cookbook, hardcover', price: '32.00', weight: '1.1', dimensions: dims('28', '22', '3'), share: 10 },
  { sku: 'GEN-LAMP', name: 'Desk lamp', price: '79.00', weight: '2.4', dimensions: dims('40', '25', '25'), share: 6 },
  { sku: 'GEN-CANDLES', name: 'Scented candles, set of 3', price: '24.00', weight: '1.5', dimensions: dims('20', '20', '10'), share: 12 },
  { sku: 'GEN-SOCKS', name: 'Socks, 3 pairs', price: '14.00', weight: '0.15', dimensions: dims('20', '12', '4'), share: 18 },
  // No weight or dimensions set: the importer must cope (WooCommerce answers "").
  { sku: 'GEN-STICKERS', name: 'Sticker sheet', price: '4.00', weight: '', dimensions: dims('', '', ''), share: 3 },
];

interface Place {
  country: string;
  city: string;
  postcode: string;
  state: string;
  street: string;
  phone: string;
}

const PLACES: readonly Place[] = [
  { country: 'DE', city: 'Berlin', postcode: '10115', state: '', street: 'Invalidenstraße', phone: '+49 30 ' },
  { country: 'DE', city: 'München', postcode: '80331', state: '', street: 'Sendlinger Straße', phone: '+49 89 ' },
  { country: 'DE', city: 'Hamburg', postcode: '20095', state: '', street: 'Mönckebergstraße', phone: '+49 40 ' },
  { country: 'FR', city: 'Paris', postcode: '75011', state: '', street: 'Rue de la Roquette', phone: '+33 1 ' },
  { country: 'FR', city: 'Lyon', postcode: '69002', state: '', street: 'Rue de la République', phone: '+33 4 ' },
  { country: 'NL', city: 'Amsterdam', postcode: '1012 AB', state: '', street: 'Damrak', phone: '+31 20 ' },
  { country: 'NL', city: 'Utrecht', postcode: '3511 LX', state: '', street: 'Oudegracht', phone: '+31 30 ' },
  { country: 'BE', city: 'Bruxelles', postcode: '1000', state: '', street: 'Rue Neuve', phone: '+32 2 ' },
  { country: 'AT', city: 'Wien', postcode: '1010', state: '', street: 'Kärntner Straße', phone: '+43 1 ' },
  { country: 'IT', city: 'Milano', postcode: '20121', state: 'MI', street: 'Via Dante', phone: '+39 02 ' },
  { country: 'IT', city: 'Roma', postcode: '00184', state: 'RM', street: 'Via Nazionale', phone: '+39 06 ' },
  { country: 'ES', city: 'Madrid', postcode: '28013', state: 'M', street: 'Calle de Preciados', phone: '+34 91 ' },
  { country: 'ES', city: 'Barcelona', postcode: '08002', state: 'B', street: 'Carrer de Ferran', phone: '+34 93 ' },
  { country: 'PL', city: 'Kraków', postcode: '31-008', state: '', street: 'ulica Floriańska', phone: '+48 12 ' },
  { country: 'SE', city: 'Stockholm', postcode: '111 22', state: '', street: 'Drottninggatan', phone: '+46 8 ' },
  { country: 'DK', city: 'København K', postcode: '1050', state: '', street: 'Strøget', phone: '+45 33 ' },
  { country: 'IE', city: 'Dublin', postcode: 'D02 X285', state: 'D', street: 'Grafton Street', phone: '+353 1 ' },
  { country: 'PT', city: 'Lisboa', postcode: '1100-148', state: '', street: 'Rua Augusta', phone: '+351 21 ' },
  { country: 'FI', city: 'Helsinki', postcode: '00100', state: '', street: 'Mannerheimintie', phone: '+358 9 ' },
  { country: 'CZ', city: 'Praha', postcode: '110 00', state: '', street: 'Národní', phone: '+420 2 ' },
];

const FIRST = [
  'Anna',
  'Lukas',
  'Sophie',
  'Jonas',
  'Zoë',
  'François',
  'Łukasz',
  'Marta',
  'José',
  'Ingrid',
  'Sean',
  'Giulia',
  'Mikko',
  'Eva',
];
const LAST = ['Müller', 'Schmidt', 'Dubois', 'de Vries', 'Janssens', 'Rossi', 'García', 'Nowak', 'Øster', 'Murphy', 'Silva', 'Virtanen'];
const COMPANIES = ['Atelier Nord GmbH', 'Studio Bleu SARL', 'Van Dijk B.V.'];
const NOTES = ['Bitte beim Nachbarn abgeben.', 'Please leave it at the back door.', 'Ne pas plier, merci !'];

/** flat_rate most of the time, free_shipping some, local_pickup about 5 % (no label needed). */
const METHODS = [
  { below: 0.05, methodId: 'local_pickup', methodTitle: 'Local pickup', total: '0.00' },
  { below: 0.3, methodId: 'free_shipping', methodTitle: 'Free shipping', total: '0.00' },
  { below: 1, methodId: 'flat_rate', methodTitle: 'Flat rate', total: '4.90' },
] as const;

export interface GeneratedOrders {
  count: number;
  firstId: number;
  lastId: number;
  /** The catalogue's product ids, for the importer's GET /products/{id}. */
  productIds: number[];
}

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const TOTAL_SHARE = CATALOGUE.reduce((sum, p) => sum + p.share, 0);

function pickProduct(random: Random): Product {
  let r = random() * TOTAL_SHARE;
  for (const p of CATALOGUE) if ((r -= p.share) < 0) return p;
  return CATALOGUE[0]!;
}

function lines(random: Random): ParsedSeed['lineItems'] {
  const r = random();
  const want = r < 0.6 ? 1 : r < 0.85 ? 2 : 3;
  const chosen = new Map<string, Product>();
  while (chosen.size < want) {
    const p = pickProduct(random);
    chosen.set(p.sku, p);
  }
  return [...chosen.values()].map(({ share: _share, ...p }) => {
    const q = random();
    return { ...p, quantity: q < 0.75 ? 1 : q < 0.93 ? 2 : 3 };
  });
}

const ascii = (s: string): string =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();

function address(random: Random, n: number): { billing: Record<string, string>; shipping: Record<string, string> } {
  const place = pick(random, PLACES);
  const first = pick(random, FIRST);
  const last = pick(random, LAST);
  const digits = String(Math.floor(random() * 9_000_000) + 1_000_000);
  const base = {
    first_name: first,
    last_name: last,
    company: random() < 0.1 ? pick(random, COMPANIES) : '',
    address_1: `${place.street} ${1 + Math.floor(random() * 180)}`,
    address_2: random() < 0.15 ? `${2 + Math.floor(random() * 5)}. OG` : '',
    city: place.city,
    state: place.state,
    postcode: place.postcode,
    country: place.country,
  };
  const billing = { ...base, email: `${ascii(first)}.${ascii(last)}.${n}@example.com`, phone: `${place.phone}${digits}` };
  // Classic checkout does not collect shipping.phone.
  return { billing, shipping: { ...base, phone: '' } };
}

/** Sorted creation times, one per order, within [end - spread, end]. */
function creationTimes(random: Random, count: number, end: number, spread: number): number[] {
  return Array.from({ length: count }, () => end - Math.floor(random() * (spread + 1))).sort((a, b) => a - b);
}

const KEY_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'];

function orderKey(random: Random): string {
  return `wc_order_${Array.from({ length: 13 }, () => pick(random, KEY_CHARS)).join('')}`;
}

export function generateOrders(store: WooStore, options: ParsedGenerate): GeneratedOrders {
  const random = mulberry32(options.seed);
  const end = options.endGmt === undefined ? store.nowSec() : parseGmtSeed(options.endGmt)!;
  const ids: number[] = [];
  for (const createdAt of creationTimes(random, options.count, end, options.spreadSeconds)) {
    const paidAfter = random() < 0.6 ? Math.floor(random() * 90) : 0;
    const r = random();
    const method = METHODS.find((m) => r < m.below)!;
    const seed: ParsedSeed = {
      status: options.status,
      lineItems: lines(random),
      ...address(random, ids.length + 1),
      dateCreatedGmt: gmtWall(createdAt),
      dateModifiedGmt: gmtWall(Math.max(createdAt, Math.min(end, createdAt + paidAfter))),
      currency: 'EUR',
      shippingTotal: method.total,
      shippingMethod: { methodId: method.methodId, methodTitle: method.methodTitle },
      customerNote: random() < 0.08 ? pick(random, NOTES) : undefined,
    };
    ids.push(store.createOrder(seed, orderKey(random)).id);
  }
  const productIds = [...store.products.values()].filter((p) => CATALOGUE.some((c) => c.sku === p.sku)).map((p) => p.id);
  return { count: ids.length, firstId: ids[0]!, lastId: ids[ids.length - 1]!, productIds: productIds.sort((a, b) => a - b) };
}
