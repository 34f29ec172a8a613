/**
 * GET / of the reference receiver: one self-contained HTML page (no scripts, no external
 * assets) listing the orders, refreshed by the browser every few seconds. Everything shown
 * comes from webhook bodies, so every value is escaped and only http(s) label links are
 * made clickable.
 */
import type { OrderView } from './store';

export const REFRESH_SECONDS = 3;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The label link as HTML: clickable only for an http(s) URL (never javascript: or data:). */
function labelCell(order: OrderView): string {
  const text = order.labelId ?? '';
  if (order.labelUrl === null) return escapeHtml(text || '—');
  let safe = false;
  try {
    const { protocol } = new URL(order.labelUrl);
    safe = protocol === 'http:' || protocol === 'https:';
  } catch {
    // not a URL: shown as text
  }
  if (!safe) return escapeHtml(order.labelUrl);
  return `<a href="${escapeHtml(order.labelUrl)}" target="_blank" rel="noopener noreferrer">${escapeHtml(text || 'label')}</a>`;
}

function sequencesCell(order: OrderView): string {
  const flags = [
    order.outOfOrder ? 'out of order' : '',
    order.gap ? 'gap' : '',
    order.missing.length > 0 ? `missing ${order.missing.join(', ')}` : '',
    order.duplicates > 0 ? `${order.duplicates} duplicate${order.duplicates === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  return `${escapeHtml(order.received.join(' '))}${flags.length ? ` <span class="flag">(${escapeHtml(flags.join('; '))})</span>` : ''}`;
}

/** How an order's row reads at a glance: a delivery is good news, every other ending and a rejected label need a look. */
function standing(order: OrderView): 'ok' | 'bad' | '' {
  if (order.outcome === 'delivered') return 'ok';
  if (order.outcome !== null || order.rejection !== null) return 'bad';
  return '';
}

function outcomeCell(order: OrderView): string {
  if (order.outcome !== null) {
    const text = escapeHtml(order.outcome + (order.outcomeReason ? `: ${order.outcomeReason}` : ''));
    return order.outcome === 'delivered' ? text : `<strong>${text}</strong>`;
  }
  if (order.rejection !== null) {
    const r = order.rejection;
    return `<span class="flag">${escapeHtml(`label rejected (revision ${r.revision}): ${r.courierMessage ?? r.message}`)}</span>`;
  }
  return '';
}

export interface PageSummary {
  events: number;
  duplicates: number;
  faults: string;
  /** Set while the webhook endpoint refuses connections; `until` is when a downForMs period ends. */
  down: { until: number | null } | null;
}

/** The outage, where nobody can miss it: what it means for the events, and when it ends. */
function downBanner(down: PageSummary['down'], now: number): string {
  if (down === null) return '';
  const left = down.until === null ? 'until it is brought back up' : `for ${Math.max(0, Math.ceil((down.until - now) / 1000))} s more`;
  return `<p class="down">The shop is DOWN ${escapeHtml(left)}: its webhook endpoint refuses connections. Labels and tracking go on; their events wait at the sender and arrive here in order once it is back.</p>`;
}

export function renderOrdersPage(orders: OrderView[], summary: PageSummary, now = Date.now()): string {
  const sorted = [...orders].sort((a, b) => b.lastReceivedAt.localeCompare(a.lastReceivedAt));
  const rows = sorted
    .map(
      (o) => `<tr${standing(o) ? ` class="${standing(o)}"` : ''}>
<td>${escapeHtml(o.shop)}</td><td>${escapeHtml(o.orderId)}</td><td>${labelCell(o)}</td>
<td>${escapeHtml(o.trackingNumber ?? '')}</td><td>${escapeHtml([o.tag, o.subtag].filter(Boolean).join(' / '))}</td>
<td>${outcomeCell(o)}</td><td>${sequencesCell(o)}</td>
<td title="received ${escapeHtml(o.lastReceivedAt)}">${escapeHtml(o.lastOccurredAt)} <small>(#${o.lastSequence} ${escapeHtml(o.lastType)})</small></td>
</tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="${REFRESH_SECONDS}">
<title>Shop receiver</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #ddd; vertical-align: top; }
th { background: #f4f4f4; }
.flag { color: #b35900; }
.muted { color: #777; }
tr.bad td { background: #fdecea; }
tr.bad strong { color: #b00020; }
tr.ok td { background: #eef7ee; }
.down { background: #b00020; color: #fff; padding: .6rem .8rem; font-weight: 600; }
</style>
</head>
<body>
<h1>Shop receiver</h1>
${downBanner(summary.down, now)}
<p class="muted">The orders of the shops that send here by signed webhook. A Shopify or WooCommerce shop is written to its own store instead: see that store's page.</p>
<p class="muted">${orders.length} order${orders.length === 1 ? '' : 's'}, ${summary.events} event${summary.events === 1 ? '' : 's'} accepted, ${summary.duplicates} duplicate${summary.duplicates === 1 ? '' : 's'}. Faults: ${escapeHtml(summary.faults)}. Refreshes every ${REFRESH_SECONDS} s. JSON: <a href="/api/orders">/api/orders</a>, <a href="/api/events">/api/events</a>, <a href="/__admin/stats">/__admin/stats</a>.</p>
<table>
<thead><tr><th>Shop</th><th>Order</th><th>Label</th><th>Tracking number</th><th>Tag</th><th>Outcome</th><th>Sequences received</th><th>Last update</th></tr></thead>
<tbody>
${rows || '<tr><td colspan="8" class="muted">No events yet.</td></tr>'}
</tbody>
</table>
</body>
</html>
`;
}
