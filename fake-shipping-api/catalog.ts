/**
 * The fake's static data: couriers, their products, number formats, hub locations and the
 * carrier wording of a rejection. Shapes come from the contract.
 */
import { randomInt } from 'node:crypto';
import type { Courier, Product } from '../shipping-api/contract';

/** The single carrier integration code (the spec does not show the real one). */
export const INTEGRATION_CODE = 'fake-integration';

export interface Hub {
  city: string;
  state: string;
  countryRegion: string;
  /** UTC offset of the hub's local time, in minutes (checkpoint times carry it). */
  utcOffsetMinutes: number;
}

interface CourierEntry {
  courier: Courier;
  products: Product[];
  orderNumber: () => string;
  trackingNumber: () => string;
  hub: Hub;
  /** Carrier wording of an address rejection, mentioning the postal code. */
  rejection: (postalCode: string, countryCode: string | null) => string;
}

const digits = (n: number): string => Array.from({ length: n }, () => String(randomInt(10))).join('');
const upperAlnum = (n: number): string => Array.from({ length: n }, () => '0123456789ABCDEFGHJKLMNPRSTUVWXYZ'[randomInt(33)]).join('');

export const CATALOG: readonly CourierEntry[] = [
  {
    courier: { code: 'dhl-express', name: 'DHL Express' },
    products: [
      { code: 'EXPRESS_WORLDWIDE', name: 'DHL Express Worldwide' },
      { code: 'EXPRESS_1200', name: 'DHL Express 12:00' },
      { code: 'ECONOMY_SELECT', name: 'DHL Economy Select' },
    ],
    orderNumber: () => `DHL${digits(9)}`,
    trackingNumber: () => digits(10),
    hub: { city: 'Leipzig', state: 'Saxony', countryRegion: 'DE', utcOffsetMinutes: 60 },
    rejection: (pc, cc) =>
      `410928: Invalid destination postal code '${pc}'${cc ? ` for country ${cc}` : ''}. ` +
      'The postal code could not be validated against the DHL Express network.',
  },
  {
    courier: { code: 'ups', name: 'UPS' },
    products: [
      { code: 'UPS_STANDARD', name: 'UPS Standard' },
      { code: 'UPS_EXPRESS_SAVER', name: 'UPS Express Saver' },
      { code: 'UPS_EXPRESS', name: 'UPS Express' },
    ],
    orderNumber: () => `UPS${upperAlnum(10)}`,
    trackingNumber: () => `1Z${upperAlnum(6)}${digits(10)}`,
    hub: { city: 'Köln', state: 'North Rhine-Westphalia', countryRegion: 'DE', utcOffsetMinutes: 60 },
    rejection: (pc, cc) =>
      `120802: Address Validation Error on ShipTo address. The postal code ${pc} is invalid` + `${cc ? ` for ${cc}` : ''}.`,
  },
  {
    courier: { code: 'postnl', name: 'PostNL' },
    products: [
      { code: 'POSTNL_STANDARD', name: 'PostNL Standard Shipment' },
      { code: 'POSTNL_SIGNATURE', name: 'PostNL Signature on Delivery' },
      { code: 'POSTNL_EU_PARCEL', name: 'PostNL EU Parcel' },
    ],
    orderNumber: () => `PNL${digits(10)}`,
    trackingNumber: () => `3S${upperAlnum(4)}${digits(9)}`,
    hub: { city: 'Nieuwegein', state: 'Utrecht', countryRegion: 'NL', utcOffsetMinutes: 60 },
    rejection: (pc) => `Invalid Addressee Zipcode: '${pc}' is not a valid postal code (error 3).`,
  },
  {
    courier: { code: 'dpd-de', name: 'DPD Germany' },
    products: [
      { code: 'DPD_CLASSIC', name: 'DPD Classic' },
      { code: 'DPD_EXPRESS_12', name: 'DPD Express 12' },
      { code: 'DPD_PREDICT', name: 'DPD Predict' },
    ],
    orderNumber: () => `DPD${digits(10)}`,
    trackingNumber: () => `0${digits(13)}`,
    hub: { city: 'Aschaffenburg', state: 'Bavaria', countryRegion: 'DE', utcOffsetMinutes: 60 },
    rejection: (pc, cc) => `COMMON_7: Zip code ${pc} unknown${cc ? ` in country ${cc}` : ''}; the consignment cannot be routed.`,
  },
];

export function findCourier(code: string): CourierEntry | undefined {
  return CATALOG.find((c) => c.courier.code === code);
}
