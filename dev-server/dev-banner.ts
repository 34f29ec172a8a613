/** What `npm run dev` prints once everything runs: where things are and what to type next. */
import path from 'node:path';
import { connectionVariablesIn } from '../config/temporal-connection';
import type { LauncherConsole } from '../launcher/console';
import { credentialExports, LOCAL_NAMESPACE as NAMESPACE, type DemoSettings } from '../launcher/defaults';
import { DEFAULTS, type DevOptions } from './dev-options';
import { PLATFORM_SHOPS } from './example-shops';
import type { NextOrders, PlatformStores } from './platform-stores';
import { WORKFLOW_TYPE } from '../workflow-definitions/shipment';

export interface RunningDev {
  address: string;
  apiUrl: string;
  dbFile: string;
  codecUrl: string | undefined;
  shopUrl: string | undefined;
  stores: PlatformStores | undefined;
  /** The shop connectors the worker got, as a file (unset: the shell's own SHOP_CONNECTORS(_FILE)). */
  connectorsFile?: string;
  settings: DemoSettings;
  /** --prometheus: its address. */
  prometheusUrl?: string;
  /** What the fake stores call the next order placed in them. */
  nextOrders?: NextOrders;
  /** The example accounts' settings file and which shop uses which (unset: only `default`, or the shell's). */
  accounts?: { file: string; shops: Record<string, string> };
}

export function printDevBanner(out: LauncherConsole, o: DevOptions, r: RunningDev): void {
  // The import and CLI in the other terminal read the same shell: say when it points elsewhere.
  const same: Record<string, string> = { TEMPORAL_ADDRESS: r.address, TEMPORAL_NAMESPACE: NAMESPACE };
  const elsewhere = connectionVariablesIn(process.env).filter((k) => process.env[k] !== same[k]);
  if (elsewhere.length)
    out.warn(`This shell sets ${elsewhere.join(', ')}: unset them where you run the import and CLI against this dev server.`);
  out.banner('Shipping worker dev environment is running', [
    '',
    `   Shipments only    ${shipmentsListUrl(o.uiPort)}`,
    `   Temporal Web UI   http://localhost:${o.uiPort}  (every workflow: shipments, the shops' pulls, the tracking pollers)`,
    `   Temporal address  ${r.address}  (namespace ${NAMESPACE}, task queue ${r.settings.taskQueue})`,
    `   Shipping API      ${r.apiUrl}${o.externalApi ? '' : `  (fake; tracking advances every ${Number(o.trackingStepMs) / 1000} s)`}`,
    `   Tracking polls    every ${r.settings.pollInterval}`,
    ...(r.accounts
      ? [
          `   Shipping accounts ${Object.entries(r.accounts.shops)
            .map(([shop, account]) => `${account} (${shop})`)
            .join(', ')}, default (every other shop): ${r.accounts.file}`,
        ]
      : []),
    ...(r.shopUrl ? [`   Shop page         ${r.shopUrl}  (what the shops were told: label link, tracking, outcome)`] : []),
    ...(r.stores
      ? [
          `   Fake Shopify      ${r.stores.shopifyUrl}  (shop ${PLATFORM_SHOPS.shopify}: fulfillments, tracking, events as its admin shows them)`,
          `   Fake WooCommerce  ${r.stores.wooCommerceUrl}  (shop ${PLATFORM_SHOPS.woocommerce}: tracking items, notes, status)`,
          `   Shop imports      pulled every minute (schedules shop-pull-${PLATFORM_SHOPS.shopify}, shop-pull-${PLATFORM_SHOPS.woocommerce}), at once on their webhooks (port ${o.triggerPort})`,
        ]
      : []),
    `   Worker health     http://127.0.0.1:${o.healthPort}/readyz  (/livez; /metrics: the project's counters; the SDK's: http://127.0.0.1:${o.sdkMetricsPort}/metrics)`,
    r.prometheusUrl
      ? `   Prometheus        ${r.prometheusUrl}/alerts  (the project's alerts, "for:" 1m in the demo: the sample's rejected labels fire ShipmentsNeedAPerson, resubmitted they resolve)`
      : "   Prometheus        off: npm run dev -- --prometheus runs it with the project's alerts (needs `apt-get install -y prometheus`)",
    `   Payloads          ${r.codecUrl ? `encrypted (key "${o.encryption!.activeKeyId}"); the Web UI decrypts through ${r.codecUrl}` : 'NOT encrypted (--no-encryption): names, addresses and phones are readable in the Web UI'}`,
    `   Data              ${r.dbFile}  (stop, then delete ${o.dataDir} to start fresh)`,
    '',
    ' Next steps, in another terminal:',
    `   export ${exportsFor(o, r).join(' ')}`,
    ...(r.accounts
      ? [`   export SHIPPING_ACCOUNTS_FILE=${r.accounts.file}   # optional: the import maps shops to accounts as the worker does`]
      : []),
    '   npm run import -- examples/orders.ndjson --rejects /tmp/rejects.ndjson',
    ...(r.stores
      ? [
          '   npm run import -- examples/platform-orders.ndjson   # orders of the fake stores (the pull may have started them: "already known")',
          `   curl -s -XPOST ${r.stores.wooCommerceUrl}/_fake/orders -d '{"status":"processing","lineItems":[{"sku":"PORT-10","quantity":2}]}'   # an order placed in "WooCommerce"${r.nextOrders?.wooCommerce ? ` (${r.nextOrders.wooCommerce})` : ''}: a shipment in seconds`,
          `   npm run cli -- schedule describe ${PLATFORM_SHOPS.shopify}`,
          '',
          ' The merchant talks back (then: npm run cli -- status <shop> <orderId>, and list --shop-change cancelled_in_shop,address_changed):',
          ...cancelBeforeLabel(r.stores.shopifyUrl, r.nextOrders?.shopify, o.externalApi ? undefined : r.apiUrl),
          `   npm run cli -- status ${PLATFORM_SHOPS.shopify} OO-1004   # #1004 ships from two locations in "Shopify": one parcel, label and fulfillment each`,
          `   curl -s -XPOST ${r.stores.shopifyUrl}/_fake/orders/5500000005/release   # #1005 is held in "Shopify" (no shipment while held): released, it is shipped`,
          ...wooEdits(r.stores.wooCommerceUrl, r.nextOrders?.wooCommerce),
        ]
      : []),
    '   npm run cli -- list',
    '   npm run cli -- attention                     # what waits for a person, with the next command',
    '   npm run cli -- status lyon-ceramics LC-5531',
    '   npm run cli -- resubmit lyon-ceramics LC-5531 examples/corrected-label.json',
    ...(r.shopUrl ? [`   curl -s -XPOST ${r.shopUrl}/__admin/faults -d '{"downForMs":60000}'   # take the shop down for a minute`] : []),
    '',
    ' Ctrl-C stops everything.',
  ]);
}

/**
 * The merchant's cancel before the label: the seeded orders are labelled within seconds of the
 * start (and Shopify refuses to cancel a fulfilled order), so labels are held back (the fake's
 * 429s) while an order is placed and cancelled.
 */
function cancelBeforeLabel(url: string, next: NextOrders['shopify'], fakeApiUrl: string | undefined): string[] {
  if (!next) return [];
  const faults = (body: string) => `curl -s -XPOST ${fakeApiUrl}/__admin/faults -d '${body}'`;
  return [
    ...(fakeApiUrl
      ? [
          `   ${faults('{"rateLimitedRate":1,"endpoints":["POST /labels"]}')}   # hold labels back (429): the next order waits for its label`,
        ]
      : []),
    `   curl -s -XPOST ${url}/_fake/orders -d '{"lineItems":[{"sku":"TENT-2","quantity":1,"grams":2400}]}'   # an order placed in "Shopify" (#${next.number}): a shipment in seconds${fakeApiUrl ? ', its label held back' : ''}`,
    `   curl -s -XPOST ${url}/_fake/orders/${next.id}/cancel   # the merchant cancels #${next.number}${fakeApiUrl ? ' before its label: it stops (cancelled_in_shop)' : ': before its label it stops (cancelled_in_shop), after it is marked'}`,
    ...(fakeApiUrl ? [`   ${faults('{"rateLimitedRate":0}')}   # labels go again`] : []),
  ];
}

/**
 * Edits of the order the banner's WooCommerce curl places (the seeded ones are delivered within
 * minutes of the start): labelled in seconds, it is tracked for minutes, so the edits are marked.
 */
function wooEdits(url: string, orderId: number | undefined): string[] {
  if (orderId === undefined) return [];
  const edit = (body: string) => `curl -s -XPOST ${url}/_fake/orders/${orderId}/edit -d '${body}'`;
  return [
    `   ${edit('{"shipping":{"postcode":"4000-123"}}')}   # correct the address of the order placed above (${orderId}) while it is tracked: address_changed`,
    `   ${edit('{"status":"cancelled"}')}   # cancel it (or "on-hold", "refunded") in "WooCommerce": marked cancelled_in_shop, nothing more is written to it`,
  ];
}

/**
 * The Web UI's workflow list filtered to shipments (the shop pulls' and the account's workflows
 * left out); its columns are the Web UI's choice (see README: add ShipmentStatus in its column settings).
 */
export function shipmentsListUrl(uiPort: number): string {
  return `http://localhost:${uiPort}/namespaces/${NAMESPACE}/workflows?query=${encodeURIComponent(`WorkflowType="${WORKFLOW_TYPE}"`)}`;
}

/**
 * What the import and CLI need in the other terminal. Only the fake's dev credentials are
 * printed; a real key or token stays a placeholder, and key material is never printed (a key
 * file's path is not secret): the other terminal needs the same keys.
 */
function exportsFor(o: DevOptions, r: RunningDev): string[] {
  return [
    ...(o.temporalPort === DEFAULTS.temporalPort ? [] : [`TEMPORAL_ADDRESS=${r.address}`]),
    `SHIPPING_API_BASE_URL=${r.apiUrl}`,
    ...credentialExports(r.settings),
    ...(!o.encryption
      ? ['PAYLOAD_ENCRYPTION=off']
      : process.env.PAYLOAD_ENCRYPTION_KEYS_FILE
        ? [`PAYLOAD_ENCRYPTION_KEYS_FILE=${path.resolve(process.env.PAYLOAD_ENCRYPTION_KEYS_FILE)}`]
        : ['PAYLOAD_ENCRYPTION_KEYS=<the same keys as here>']),
    ...(r.connectorsFile ? [`SHOP_CONNECTORS_FILE=${r.connectorsFile}`] : []),
  ];
}
