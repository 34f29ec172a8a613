/**
 * The Shipment Tracking extension's providers (a realistic subset of its built-in list, with
 * its own names and URL templates) and how it turns a provider plus number into a link.
 * Names are exact: the extension matches them by slug (sanitize_title), so "UPS", "ups" and
 * "Ups" are one provider, while "FedEx" is "fedex", the slug of its "Fedex".
 */

/** Country → provider name → URL template (`%1$s` number, `%2$s` postcode, `%3$s` country). */
export const PROVIDERS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Australia: {
    'Australia Post': 'https://auspost.com.au/mypost/track/#/details/%1$s',
    'Fastway Couriers': 'https://www.fastway.com.au/tools/track/?l=%1$s',
  },
  Canada: {
    'Canada Post': 'https://www.canadapost-postescanada.ca/track-reperage/en#/resultList?searchFor=%1$s',
    Purolator: 'https://www.purolator.com/purolator/ship-track/tracking-summary.page?pin=%1$s',
  },
  France: {
    Colissimo: 'https://www.laposte.fr/outils/suivre-vos-envois?code=%1$s',
  },
  Germany: {
    'DHL Intraship (DE)': 'https://www.dhl.de/de/privatkunden/pakete-empfangen/verfolgen.html?lang=de&idc=%1$s&rfn=&extendedSearch=true',
    Hermes: 'https://www.myhermes.de/empfangen/sendungsverfolgung/sendungsinformation/#%1$s',
    'Deutsche Post DHL': 'https://www.dhl.de/de/privatkunden/pakete-empfangen/verfolgen.html?lang=de&idc=%1$s',
    'UPS Germany':
      'https://wwwapps.ups.com/WebTracking?sort_by=status&tracknums_displayed=1&TypeOfInquiryNumber=T&loc=de_DE&InquiryNumber1=%1$s',
    'DPD.de': 'https://tracking.dpd.de/parcelstatus?query=%1$s&locale=en_DE',
  },
  Netherlands: {
    PostNL: 'https://postnl.nl/tracktrace/?B=%1$s&P=%2$s&D=%3$s&T=C',
    'DPD.NL': 'https://tracking.dpd.de/status/en_US/parcel/%1$s',
  },
  'United Kingdom': {
    DHL: 'https://www.dhl.com/content/g0/en/express/tracking.shtml?brand=DHL&AWB=%1$s',
    'DPD.co.uk': 'https://www.dpd.co.uk/apps/tracking/?reference=%1$s#results',
    'DPD Local': 'https://apis.track.dpdlocal.co.uk/v1/track?postcode=%2$s&parcel=%1$s',
    EVRi: 'https://www.evri.com/track/parcel/%1$s',
    ParcelForce: 'https://www.parcelforce.com/track-trace?trackNumber=%1$s',
    'Royal Mail': 'https://www3.royalmail.com/track-your-item#/tracking-results/%1$s',
  },
  'United States': {
    'DHL US': 'https://www.logistics.dhl/us-en/home/tracking/tracking-ecommerce.html?tracking-id=%1$s',
    'DHL eCommerce': 'https://webtrack.dhlecs.com/orders?trackingNumber=%1$s',
    Fedex: 'https://www.fedex.com/apps/fedextrack/?action=track&action=track&tracknumbers=%1$s',
    'FedEx Sameday': 'https://www.fedexsameday.com/fdx_dotracking_ua.aspx?tracknum=%1$s',
    OnTrac: 'https://www.ontrac.com/tracking/?number=%1$s',
    UPS: 'https://www.ups.com/track?loc=en_US&tracknum=%1$s',
    USPS: 'https://tools.usps.com/go/TrackConfirmAction_input?qtc_tLabels1=%1$s',
  },
};

/** WordPress's sanitize_title (save context): accents off, lower case, dots and spaces to dashes. */
export function sanitizeTitle(title: string): string {
  return title
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/<[^>]*>/g, '')
    .toLowerCase()
    .replace(/\./g, '-')
    .replace(/[^%a-z0-9 _-]/g, '')
    .replace(/\s+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
}

/** The provider whose name has this slug (first match in list order), or null. */
export function findProvider(slug: string): { name: string; template: string } | null {
  if (slug === '') return null;
  for (const byName of Object.values(PROVIDERS)) {
    for (const [name, template] of Object.entries(byName)) {
      if (sanitizeTitle(name) === slug) return { name, template };
    }
  }
  return null;
}

/** PHP's sprintf with positional `%n$s` only, which is all the templates use. */
export function formatTemplate(template: string, values: string[]): string {
  return template.replace(/%(\d+)\$s/g, (_m, n: string) => values[Number(n) - 1] ?? '');
}

/** wc_normalize_postcode: upper case, no spaces or dashes. */
export function normalizePostcode(postcode: string): string {
  return postcode.trim().toUpperCase().replace(/[\s-]/g, '');
}
