/** `npm run cli -- attention`: every shipment waiting for a person, oldest first, with the next command. */
import { parseDuration } from '../../config/settings';
import { ATTENTION_REASONS, attentionQuery, resolvedEndedShipments } from '../../workflow-definitions/attention';
import { connectTemporal, EXIT, parseCommandArgs, positiveInt, println, table, usageError, type ExitCode, type Io } from '../cli-support';
import { shipmentAttributes } from './shipment-lookup';
import { parcelLocationOf } from '../../domain/shipment';

export const ATTENTION_HELP = `Usage: npm run cli -- attention [--since <duration>] [--limit <n>] [--json]

Lists every shipment that waits for a person, oldest first, with the command that acts on it:
  awaiting_correction  the courier rejected the label: resubmit corrected data
  shop_sync_stopped    the shop refused an event, is gone, or the delivery window ran out:
                       fix the shop's side, then redeliver
  exception            the courier reported an exception (ended within --since)
  tracking_timed_out   no terminal tracking state in time (ended within --since)
  label_failed         no corrected data before the correction timeout (ended within --since)
  cancelled_in_shop    the order was cancelled or refunded in the shop after its label: the
                       parcel is on its way (while tracked, and ended within --since); once
                       recalled: resolve <shop> <order> --note "..."
  label_to_void        the order was cancelled while a relabel's label was being made: that
                       label is bought and unused; once voided: resolve <shop> <order> --note "..."
  changed_in_shop      address or lines changed, or the order held, in the shop after its
                       label (while tracked, and ended within --since); a corrected address
                       becomes a new label with resubmit <shop> <order> --from-shop, which
                       closes it, as does a release in the shop; handled otherwise: resolve
  hold_timed_out       held in the shop for longer than SHOP_HOLD_TIMEOUT, no label made
                       (ended within --since)
Ended ones (exception, tracking_timed_out, label_failed, hold_timed_out) once followed up:
resolve <shop> <order> --note "..." (recorded once, then no longer listed).
The next command of one parcel of an order shipping from several locations names it with
--parcel <location>. SINCE is when a waiting shipment started, or when an ended one ended. The same reasons are
counted by the worker's shipments_needing_attention gauge.

Options:
  --since <duration>  How far back ended shipments are listed (default 7d)
  --limit <n>         At most n shipments per reason (default 200, max 10000)
  --json              One JSON document: { since, shipments: [...], truncated }
  -h, --help          Show this help

A shipment leaves the list when its condition ends (the correction taken, the delivery
redelivered, the relabel made, the hold released) or a person closed it with resolve (an
ended one too: exception, tracking_timed_out, hold_timed_out, label_failed).

Exit codes: 0 nothing needs a person; 1 something does (listed: a script or a cron job can
alert on it); 2 usage/configuration error; 5 Temporal unreachable.
`;

export interface AttentionItem {
  reason: string;
  title: string;
  shop: string;
  orderId: string;
  workflowId: string;
  since: string;
  status: string | null;
  next: string;
}

export async function attentionCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    since: { type: 'string', default: '7d' },
    limit: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(ATTENTION_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 0)
    throw usageError(`attention takes no arguments (got "${positionals.join(' ')}"). See: npm run cli -- attention --help`);
  const sinceMs = parseDuration(values.since);
  if (sinceMs === undefined) throw usageError(`--since must be a duration like 12h or 7d (got "${values.since}")`);
  const limit = positiveInt('limit', values.limit, 200, 10_000);
  const closedSince = new Date(Date.now() - sinceMs).toISOString();

  const session = await connectTemporal(io.env);
  try {
    const items: AttentionItem[] = [];
    let truncated = false;
    // Ended shipments a person resolved: their record is a workflow of its own, not a search attribute.
    const resolved = await resolvedEndedShipments(session.client, closedSince);
    for (const reason of ATTENTION_REASONS) {
      let taken = 0;
      for await (const info of session.client.workflow.list({ query: attentionQuery(reason, closedSince) })) {
        // Only ended shipments have a resolution record; a running one's mark closes in its own workflow.
        if (reason.when !== 'running' && resolved.has(info.workflowId)) continue;
        if (taken++ === limit) {
          truncated = true;
          break;
        }
        const sa = shipmentAttributes(info.typedSearchAttributes);
        const shop = sa.shop ?? '?';
        const orderId = sa.orderId ?? '?';
        items.push({
          reason: reason.reason,
          title: reason.title,
          shop,
          orderId,
          workflowId: info.workflowId,
          since: (reason.when === 'running' ? info.startTime : (info.closeTime ?? info.startTime)).toISOString(),
          status: sa.status,
          next: reason.next(shop, orderId, parcelLocationOf(info.workflowId, { shop, orderId })),
        });
      }
    }
    items.sort((a, b) => a.since.localeCompare(b.since));
    if (values.json) println(io.stdout, JSON.stringify({ since: closedSince, shipments: items, truncated }, null, 2));
    else if (items.length === 0) println(io.stdout, `Nothing needs a person (ended shipments looked at since ${closedSince}).`);
    else {
      const rows = [['SINCE', 'REASON', 'SHOP', 'ORDER', 'NEXT']];
      for (const i of items) rows.push([i.since.slice(0, 19).replace('T', ' '), i.reason, i.shop, i.orderId, i.next]);
      println(io.stdout, table(rows));
      if (truncated) println(io.stdout, `(more than ${limit} for some reason: raise --limit)`);
    }
    return items.length === 0 ? EXIT.ok : EXIT.rejected;
  } finally {
    await session.close();
  }
}
