/**
 * GET /: the orders as a merchant sees them in the Shopify admin — fulfillment status, each
 * fulfillment's tracking, the timeline of fulfillment events, tags and note. Every value is
 * escaped: notes, tags and event messages come from the connector under test.
 */
import { LOCATIONS } from './defaults';
import type { ShopifyState } from './state';
import type { FakeOrderView } from './types';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const e = escapeHtml;

/** IN_TRANSIT → "In transit", as the admin shows enum values. */
function human(value: string | null): string {
  if (value === null) return '—';
  const words = value.toLowerCase().replace(/_/g, ' ');
  return e(words.charAt(0).toUpperCase() + words.slice(1));
}

function link(url: string | null, text: string): string {
  return url !== null && /^https?:\/\//i.test(url) ? `<a href="${e(url)}" rel="noreferrer">${e(text)}</a>` : e(text);
}

function fulfillmentHtml(f: FakeOrderView['fulfillments'][number]): string {
  const tracking = f.trackingInfo
    .map((t) => `<li>${e(t.company ?? 'Other carrier')}: ${link(t.url, t.number ?? t.url ?? 'no number')}</li>`)
    .join('');
  const events = [...f.events]
    .sort((a, b) => b.happenedAt.localeCompare(a.happenedAt))
    .map((ev) => {
      const place = [ev.address1, ev.city, ev.province, ev.zip, ev.country].filter((p): p is string => p !== null).map(e);
      const message = ev.message === null ? '' : ` — ${e(ev.message)}`;
      return `<li><time>${e(ev.happenedAt)}</time> <b>${human(ev.status)}</b>${message}${place.length ? ` <small>${place.join(', ')}</small>` : ''}</li>`;
    })
    .join('');
  return (
    `<div class="fulfillment"><h4>${e(f.name)} · ${human(f.displayStatus ?? f.status)}` +
    `${f.notifyCustomer ? ' · customer notified' : ''}</h4>` +
    `<ul class="tracking">${tracking || '<li>No tracking</li>'}</ul>` +
    `<ol class="timeline">${events || '<li>No events</li>'}</ol></div>`
  );
}

function orderHtml(o: FakeOrderView): string {
  const fos = o.fulfillmentOrders
    .map((fo) => {
      const where = LOCATIONS.find((l) => l.id === fo.locationId)?.name ?? fo.locationId;
      const lines = fo.lineItems.map((l) => `${e(l.sku)} ${l.totalQuantity - l.remainingQuantity}/${l.totalQuantity}`).join(', ');
      return `<li>${e(where)}: ${human(fo.status)} (${lines})</li>`;
    })
    .join('');
  const tags = o.tags.map((t) => `<span class="tag">${e(t)}</span>`).join(' ');
  return (
    `<section class="order" id="order-${e(o.legacyResourceId)}">` +
    `<h2>${e(o.name)} <span class="status">${human(o.displayFulfillmentStatus)}</span></h2>` +
    `<p>Created ${e(o.createdAt)} · updated ${e(o.updatedAt)} · id ${e(o.legacyResourceId)}` +
    `${o.visible ? '' : ' · <em>hidden from the app (older than the visibility window)</em>'}</p>` +
    `${o.cancelledAt ? `<p><em>Cancelled ${e(o.cancelledAt)}</em></p>` : o.closed ? '<p><em>Archived</em></p>' : ''}` +
    `<p>Shipping: ${o.shippingLine ? e(o.shippingLine.title) : '—'} · ${o.totalWeight} g</p>` +
    `<p>Tags: ${tags || '—'}</p><p>Note: ${o.note === null ? '—' : e(o.note)}</p>` +
    `<h3>Fulfillment orders</h3><ul>${fos}</ul>` +
    `<h3>Fulfillments</h3>${o.fulfillments.map(fulfillmentHtml).join('') || '<p>None</p>'}</section>`
  );
}

/** Newest orders shown: a generated bench store of 20,000 would make a page of megabytes. */
const PAGE_ORDERS = 200;

function webhooksHtml(state: ShopifyState): string {
  const subs = state.webhooks.list();
  if (subs.length === 0) return '<p>Webhooks: no subscriptions.</p>';
  const { pending, inFlight } = state.webhooks.queue();
  const rows = subs
    .map((w) => `<li>${e(w.topic)} → ${e(w.address)} · delivered ${w.delivered} · failed attempts ${w.failedAttempts}</li>`)
    .join('');
  return `<h2>Webhook subscriptions</h2><ul>${rows}</ul><p>${pending} delivery(ies) pending, ${inFlight} in flight.</p>`;
}

export function renderPage(state: ShopifyState): string {
  const all = state.store.all();
  const orders = all
    .slice(-PAGE_ORDERS)
    .map((o) => state.view(o))
    .reverse();
  const style =
    'body{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem}.order{border:1px solid #ccc;border-radius:8px;padding:1rem;margin:1rem 0}' +
    '.status,.tag{background:#eee;border-radius:1rem;padding:0 .5rem;font-size:.85em}.timeline time{color:#666}';
  return (
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${e(state.shopName)} — orders</title>` +
    `<style>${style}</style></head><body><h1>${e(state.shopName)}</h1>` +
    `<p>${all.length} order(s)${all.length > orders.length ? `, the newest ${orders.length} shown` : ''}. Fake Shopify store for local development.</p>` +
    `${webhooksHtml(state)}${orders.map(orderHtml).join('')}</body></html>`
  );
}
