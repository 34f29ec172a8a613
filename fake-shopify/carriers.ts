/**
 * Tracking as Shopify stores it. For a company on Shopify's carrier list (exact spelling) Shopify
 * builds the tracking link itself and, as reported (shopify-api-ruby #195, ShopifySharp #492),
 * drops a URL the app sent; the fake does the same so the connector's tests meet the quirk.
 * The link templates are plausible carrier pages, not Shopify's exact ones.
 */
import type { TrackingRecord } from './model';

const q = encodeURIComponent;

export const KNOWN_CARRIERS: Readonly<Record<string, (n: string) => string>> = {
  'Australia Post': (n) => `https://auspost.com.au/mypost/track/#/details/${q(n)}`,
  Bpost: (n) => `https://track.bpost.cloud/btr/web/#/search?itemCode=${q(n)}`,
  'Canada Post': (n) => `https://www.canadapost-postescanada.ca/track-reperage/en#/details/${q(n)}`,
  Chronopost: (n) => `https://www.chronopost.fr/tracking-no-cms/suivi-page?listeNumerosLT=${q(n)}`,
  Colissimo: (n) => `https://www.laposte.fr/outils/suivre-vos-envois?code=${q(n)}`,
  Correos: (n) => `https://www.correos.es/es/en/tools/tracker/items/details?tracking-number=${q(n)}`,
  'Deutsche Post': (n) => `https://www.deutschepost.de/sendung/simpleQueryResult.html?form.sendungsnummer=${q(n)}`,
  'DHL eCommerce': (n) => `https://webtrack.dhlecs.com/?trackingnumber=${q(n)}`,
  'DHL Express': (n) => `https://www.dhl.com/en/express/tracking.html?AWB=${q(n)}&brand=DHL`,
  'DHL Parcel': (n) => `https://www.dhl.de/de/privatkunden/pakete-empfangen/verfolgen.html?piececode=${q(n)}`,
  DPD: (n) => `https://tracking.dpd.de/status/en_US/parcel/${q(n)}`,
  'DPD UK': (n) => `https://track.dpd.co.uk/parcels/${q(n)}`,
  Evri: (n) => `https://www.evri.com/track/parcel/${q(n)}`,
  FedEx: (n) => `https://www.fedex.com/fedextrack/?trknbr=${q(n)}`,
  GLS: (n) => `https://gls-group.eu/EU/en/parcel-tracking?match=${q(n)}`,
  'La Poste': (n) => `https://www.laposte.fr/outils/suivre-vos-envois?code=${q(n)}`,
  'Poste Italiane': (n) => `https://www.poste.it/cerca/index.html#/risultati-spedizioni/${q(n)}`,
  PostNL: (n) => `https://postnl.nl/tracktrace/?B=${q(n)}`,
  PostNord: (n) => `https://www.postnord.se/en/our-tools/track-and-trace?shipmentId=${q(n)}`,
  Purolator: (n) => `https://www.purolator.com/en/shipping/tracker?pin=${q(n)}`,
  'Royal Mail': (n) => `https://www.royalmail.com/track-your-item#/tracking-results/${q(n)}`,
  'Swiss Post': (n) => `https://service.post.ch/ekp-web/ui/entry/search/${q(n)}`,
  UPS: (n) => `https://www.ups.com/WebTracking?loc=en_US&requester=ST&trackNums=${q(n)}`,
  USPS: (n) => `https://tools.usps.com/go/TrackConfirmAction?tLabels=${q(n)}`,
  Yodel: (n) => `https://www.yodel.co.uk/tracking/${q(n)}`,
};

/** FulfillmentTrackingInput after GraphQL coercion. */
export interface TrackingInput {
  company?: string | null;
  number?: string | null;
  numbers?: string[] | null;
  url?: string | null;
  urls?: string[] | null;
}

/**
 * The stored tracking entries: one per number (`numbers` wins over `number`), each with the
 * url at the same position, or the carrier's own link for a known company.
 */
export function buildTracking(input: TrackingInput | null | undefined): TrackingRecord[] {
  if (!input) return [];
  const company = input.company ?? null;
  const numbers = input.numbers?.length ? input.numbers : input.number != null ? [input.number] : [];
  const urls = input.urls?.length ? input.urls : input.url != null ? [input.url] : [];
  const builder = company === null ? undefined : KNOWN_CARRIERS[company];
  if (numbers.length === 0) {
    return company === null && urls.length === 0 ? [] : [{ company, number: null, url: builder ? null : (urls[0] ?? null) }];
  }
  return numbers.map((number, i) => ({ company, number, url: builder ? builder(number) : (urls[i] ?? null) }));
}
