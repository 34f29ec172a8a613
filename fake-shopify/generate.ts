/**
 * Bulk orders for benches: deterministic from a seed (mulberry32), spread over a creation
 * window, with addresses in seven EU countries, 1–3 lines from a fixed catalogue (sku, grams,
 * price), a few shipping methods, and a share split over both locations. Seeds are built
 * already valid (no zod per order), so 5,000 orders take a fraction of a second.
 */
import { z } from 'zod';
import { mulberry32 } from '../fake-shipping-api/faults';
import { isoSeconds } from './model';
import type { ParsedSeed } from './seed';

const IsoDate = z
  .string()
  .refine((s) => /^\d{4}-\d{2}-\d{2}/.test(s) && !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 date-time')
  .transform((s) => Date.parse(s));
const Rate = z.number().min(0).max(1);

export const GenerateOptionsSchema = z
  .strictObject({
    count: z.number().int().min(1).max(20_000),
    /** Same seed, same orders (ids follow what the store already holds). Default 1. */
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .optional(),
    /** Creation window; default the 30 days up to now (inside the 60-day visibility window). */
    createdFrom: IsoDate.optional(),
    createdTo: IsoDate.optional(),
    /** Share split over both locations (two FOs); default 0.05. */
    splitRate: Rate.optional(),
    /** Share whose FOs are PICK_UP (no label needed); default 0. */
    pickUpRate: Rate.optional(),
    /** Share whose FOs are ON_HOLD; default 0. */
    onHoldRate: Rate.optional(),
  })
  .refine((o) => o.createdFrom === undefined || o.createdTo === undefined || o.createdFrom <= o.createdTo, {
    message: 'createdFrom must not be after createdTo',
    path: ['createdFrom'],
  });
export type GenerateOptions = z.input<typeof GenerateOptionsSchema>;
type Parsed = z.output<typeof GenerateOptionsSchema>;

interface Country {
  code: string;
  phone: string;
  cities: Array<[city: string, zip: string, province: string | null]>;
  streets: string[];
  first: string[];
  last: string[];
}

const COUNTRIES: Country[] = [
  {
    code: 'DE',
    phone: '+49',
    cities: [
      ['Berlin', '10115', null],
      ['Hamburg', '20095', null],
      ['München', '80331', null],
      ['Köln', '50667', null],
      ['Leipzig', '04109', null],
    ],
    streets: ['Hauptstraße', 'Bahnhofstraße', 'Gartenweg', 'Lindenallee', 'Schillerstraße'],
    first: ['Anna', 'Jonas', 'Lena', 'Lukas', 'Marie', 'Felix'],
    last: ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Becker'],
  },
  {
    code: 'AT',
    phone: '+43',
    cities: [
      ['Wien', '1010', null],
      ['Graz', '8010', null],
      ['Salzburg', '5020', null],
      ['Linz', '4020', null],
    ],
    streets: ['Mariahilfer Straße', 'Landstraße', 'Herrengasse', 'Getreidegasse'],
    first: ['Sophie', 'Tobias', 'Hannah', 'David'],
    last: ['Gruber', 'Huber', 'Bauer', 'Wagner'],
  },
  {
    code: 'FR',
    phone: '+33',
    cities: [
      ['Paris', '75011', null],
      ['Lyon', '69002', null],
      ['Marseille', '13001', null],
      ['Toulouse', '31000', null],
    ],
    streets: ['rue de la République', 'avenue Victor Hugo', 'boulevard Voltaire', 'rue des Lilas'],
    first: ['Camille', 'Louis', 'Léa', 'Hugo', 'Chloé'],
    last: ['Martin', 'Bernard', 'Dubois', 'Lefèvre', 'Moreau'],
  },
  {
    code: 'NL',
    phone: '+31',
    cities: [
      ['Amsterdam', '1012 AB', null],
      ['Rotterdam', '3011 AA', null],
      ['Utrecht', '3511 AX', null],
    ],
    streets: ['Kerkstraat', 'Dorpsstraat', 'Molenweg', 'Stationsplein'],
    first: ['Daan', 'Emma', 'Sem', 'Julia'],
    last: ['de Jong', 'Jansen', 'de Vries', 'van Dijk'],
  },
  {
    code: 'BE',
    phone: '+32',
    cities: [
      ['Bruxelles', '1000', null],
      ['Antwerpen', '2000', null],
      ['Gent', '9000', null],
    ],
    streets: ['Rue Neuve', 'Meir', 'Veldstraat', 'Avenue Louise'],
    first: ['Lucas', 'Olivia', 'Arthur', 'Louise'],
    last: ['Peeters', 'Janssens', 'Maes', 'Dubois'],
  },
  {
    code: 'IT',
    phone: '+39',
    cities: [
      ['Milano', '20121', 'MI'],
      ['Roma', '00184', 'RM'],
      ['Torino', '10121', 'TO'],
      ['Napoli', '80133', 'NA'],
    ],
    streets: ['Via Roma', 'Corso Vittorio Emanuele', 'Via Garibaldi', 'Piazza Navona'],
    first: ['Giulia', 'Marco', 'Francesca', 'Luca'],
    last: ['Rossi', 'Russo', 'Ferrari', 'Esposito'],
  },
  {
    code: 'ES',
    phone: '+34',
    cities: [
      ['Madrid', '28013', 'M'],
      ['Barcelona', '08002', 'B'],
      ['Valencia', '46002', 'V'],
      ['Sevilla', '41001', 'SE'],
    ],
    streets: ['Calle Mayor', 'Gran Vía', 'Avenida de la Constitución', 'Calle de Alcalá'],
    first: ['Lucía', 'Hugo', 'Martina', 'Pablo'],
    last: ['García', 'Fernández', 'López', 'Martínez'],
  },
];

/** A fixed catalogue, so a sku always has the same title, weight and price. */
const CATALOGUE = Array.from({ length: 40 }, (_, i) => ({
  sku: `GEN-${String(i + 1).padStart(4, '0')}`,
  title: `${['Trail', 'City', 'Summit', 'Coast', 'Forest'][i % 5]} ${['Jacket', 'Backpack', 'Bottle', 'Cap', 'Boots', 'Tent', 'Lamp', 'Socks'][i % 8]}`,
  grams: 80 + ((i * 373) % 2900),
  price: (4.9 + ((i * 37) % 180)).toFixed(2),
}));

const SHIPPING = [
  { weight: 0.7, line: { title: 'Standard', code: 'standard', price: '4.90' } },
  { weight: 0.25, line: { title: 'Express', code: 'express', price: '9.90' } },
  { weight: 0.05, line: { title: 'Free shipping', code: 'free', price: '0.00' } },
];

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const ascii = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();

function address(random: Random): NonNullable<ParsedSeed['shippingAddress']> {
  const c = pick(random, COUNTRIES);
  const [city, zip, provinceCode] = pick(random, c.cities);
  const firstName = pick(random, c.first);
  const lastName = pick(random, c.last);
  const r = random();
  return {
    name: `${firstName} ${lastName}`,
    firstName,
    lastName,
    company: r < 0.1 ? `${lastName} GmbH` : null,
    address1: `${pick(random, c.streets)} ${1 + Math.floor(random() * 120)}`,
    address2: r > 0.85 ? `Apt ${1 + Math.floor(random() * 30)}` : null,
    city,
    provinceCode,
    zip,
    countryCodeV2: c.code,
    phone: `${c.phone} ${String(100_000_000 + Math.floor(random() * 899_999_999))}`,
  };
}

/** 1–3 lines (60/30/10 %); an order split over two locations needs two at least. */
function lines(random: Random, split: boolean): ParsedSeed['lineItems'] {
  const r = random();
  const count = Math.max(split ? 2 : 1, r < 0.6 ? 1 : r < 0.9 ? 2 : 3);
  const start = Math.floor(random() * CATALOGUE.length);
  return Array.from({ length: count }, (_, k) => {
    const product = CATALOGUE[(start + k * 7) % CATALOGUE.length]!;
    const q = random();
    return { ...product, quantity: q < 0.75 ? 1 : q < 0.95 ? 2 : 3 };
  });
}

function shippingLine(random: Random): ParsedSeed['shippingLine'] {
  let r = random();
  for (const { weight, line } of SHIPPING) {
    if (r < weight) return { ...line };
    r -= weight;
  }
  return { ...SHIPPING[0]!.line };
}

/** Order i of `count`: created inside its own slice of the window, so creation follows the ids. */
function seedAt(o: Parsed, random: Random, i: number, from: number, to: number): ParsedSeed {
  const shippingAddress = address(random);
  const r = random();
  const split = random() < (o.splitRate ?? 0.05);
  return {
    email: `${ascii(shippingAddress.firstName!)}.${ascii(shippingAddress.lastName!)}${1 + Math.floor(random() * 9999)}@example.com`,
    lineItems: lines(random, split),
    shippingAddress,
    shippingLine: shippingLine(random),
    splitLocations: split,
    deliveryMethod: r < (o.pickUpRate ?? 0) ? 'PICK_UP' : 'SHIPPING',
    fulfillmentOrderStatus: random() < (o.onHoldRate ?? 0) ? 'ON_HOLD' : 'OPEN',
    createdAt: isoSeconds(from + ((to - from) * (i + random())) / o.count),
  };
}

/** The seeds of a generate request, already valid; `now` supplies the default window. */
export function generatedSeeds(o: Parsed, now: number): ParsedSeed[] {
  const random = mulberry32(o.seed ?? 1);
  const to = o.createdTo ?? Math.max(now, o.createdFrom ?? now);
  const from = o.createdFrom ?? to - 30 * 86_400_000;
  return Array.from({ length: o.count }, (_, i) => seedAt(o, random, i, from, to));
}
