/**
 * GET /: the orders as a merchant sees them in WooCommerce's admin: status, ship-to address,
 * the Shipment Tracking box (provider, number, link), the notes timeline (newest first, customer
 * notes and private notes marked as the admin marks them) and the emails sent. Every value is
 * escaped, and only http(s) links become links: notes and tracking links are input from clients.
 */
import { localWall } from './clock';
import { STATUS_LABELS } from './defaults';
import type { StoredOrder } from './store';
import type { WooState } from './state';
import { trackingView } from './tracking';

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function link(url: string, text: string): string {
  return /^https?:\/\//i.test(url) ? `<a href="${escapeHtml(url)}" rel="noreferrer">${escapeHtml(text)}</a>` : escapeHtml(url);
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:2rem;background:#f0f0f1;color:#1d2327}
section{background:#fff;border:1px solid #c3c4c7;padding:1rem 1.25rem;margin:0 0 1rem}
h2{margin:0 0 .5rem;font-size:1.2rem}.status{padding:.15rem .5rem;border-radius:3px;background:#dcdcde;font-size:.85rem}
.status-processing{background:#c6e1c6}.status-completed{background:#c8d7e1}.status-on-hold{background:#f8dda7}
.status-cancelled,.status-failed{background:#eba3a3}ul{padding-left:1.2rem}li{margin:.3rem 0}
.note{padding:.4rem .6rem;background:#efefef;list-style:none}.note.customer{background:#a7cedc}.note.system{background:#d7cad2}
.kind{font-weight:600;margin-right:.4rem}small{color:#646970}`;

function trackingBox(order: StoredOrder, installed: boolean): string {
  const items = order.tracking.map((t) => trackingView(order, t));
  const note = installed ? '' : ' <small>(extension not installed: not shown to the customer)</small>';
  if (items.length === 0) return `<h3>Shipment Tracking${note}</h3><p>No tracking items.</p>`;
  const rows = items.map(
    (t) =>
      `<li><strong>${escapeHtml(t.tracking_provider || '(unknown provider)')}</strong> ${escapeHtml(t.tracking_number)}` +
      `${t.tracking_link ? ` — ${link(t.tracking_link, 'Track')}` : ''} <small>shipped ${escapeHtml(t.date_shipped)}</small></li>`,
  );
  return `<h3>Shipment Tracking${note}</h3><ul>${rows.join('')}</ul>`;
}

function notesBox(order: StoredOrder, tz: string): string {
  const notes = [...order.notes].sort((a, b) => b.at - a.at || b.id - a.id);
  if (notes.length === 0) return '<h3>Order notes</h3><p>No notes.</p>';
  const rows = notes.map((n) => {
    const kind = n.customerNote ? 'customer' : n.author === 'system' ? 'system' : 'private';
    const label = n.customerNote ? 'Note to customer' : 'Private note';
    return `<li class="note ${kind}"><span class="kind">${label}</span>${escapeHtml(n.note)} <small>${escapeHtml(localWall(n.at, tz))} by ${escapeHtml(n.author)}</small></li>`;
  });
  return `<h3>Order notes</h3><ul>${rows.join('')}</ul>`;
}

function emailsBox(order: StoredOrder, tz: string): string {
  if (order.emails.length === 0) return '<h3>Emails sent</h3><p>None.</p>';
  const rows = order.emails.map((e) => {
    const extra = e.trackingItems
      ? ` — tracking shown: ${e.trackingItems.length === 0 ? 'none' : e.trackingItems.map((t) => escapeHtml(`${t.tracking_provider} ${t.tracking_number}`)).join(', ')}`
      : '';
    return `<li><strong>${escapeHtml(e.template)}</strong> to ${escapeHtml(e.to)} <small>${escapeHtml(localWall(e.at, tz))}</small>${extra}</li>`;
  });
  return `<h3>Emails sent</h3><ul>${rows.join('')}</ul>`;
}

function orderSection(order: StoredOrder, state: WooState): string {
  const tz = state.timezone;
  const s = order.shipping;
  const address = [
    `${s.first_name ?? ''} ${s.last_name ?? ''}`,
    s.company,
    s.address_1,
    s.address_2,
    `${s.postcode ?? ''} ${s.city ?? ''}`,
    s.state,
    s.country,
  ]
    .map((part) => (part ?? '').trim())
    .filter((part) => part !== '');
  return `<section id="order-${order.id}"><h2>Order #${order.id} <span class="status status-${escapeHtml(order.status)}">${escapeHtml(STATUS_LABELS[order.status])}</span></h2>
<p><small>Created ${escapeHtml(localWall(order.createdAt, tz))} · modified ${escapeHtml(localWall(order.modifiedAt, tz))} (${escapeHtml(tz)})</small></p>
<p>Ship to: ${escapeHtml(address.join(', '))} · ${escapeHtml(order.shippingMethod.methodTitle)}</p>
${trackingBox(order, state.shipmentTracking)}${notesBox(order, tz)}${emailsBox(order, tz)}</section>`;
}

export function renderPage(state: WooState): string {
  const orders = [...state.store.orders.values()].sort((a, b) => b.id - a.id);
  const summary = `${orders.length} orders · time zone ${state.timezone} · Shipment Tracking ${state.shipmentTracking ? 'installed' : 'not installed'}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(state.storeName)} — Orders</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(state.storeName)} — Orders</h1><p>${escapeHtml(summary)}</p>
${orders.map((o) => orderSection(o, state)).join('\n')}
</body></html>
`;
}
