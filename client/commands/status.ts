/** `npm run cli -- status <shop> <orderId>`: the workflow's own state, plus what Temporal knows. */
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import {
  type EndedShipmentResolution,
  openAttention,
  relabelCommand,
  resolveCommand,
  type ShopAttention,
  SHOP_SYNC_STOPPED,
  stateQuery,
  type ShipmentOutcome,
  type ShipmentState,
  type ShopOrderState,
} from '../../workflow-definitions/shipment';
import {
  connectTemporal,
  EXIT,
  messageOf,
  parseCommandArgs,
  printable,
  println,
  requirePositionals,
  type ExitCode,
  type Io,
} from '../cli-support';
import { findShipment, readEndedResolution, shipmentAttributes, timestampIso } from './shipment-lookup';
import { endedReasonOf } from '../../workflow-definitions/attention';
import { DEFAULT_SHIPPING_ACCOUNT } from '../../domain/shipment';

export const STATUS_HELP = `Usage: npm run cli -- status [--json] <shop> <orderId>

Shows one order's shipment: the workflow's state (stateQuery: phase, label, tracking,
attempts, last error), the workflow execution status, its search attributes, and each
pending activity's attempt count and last failure (useful while a label is being retried).
When the workflow has completed, its outcome is shown too. An order that ships from several
locations (Shopify) shows each parcel: its location, phase or outcome, label and key, tracking,
and its own workflow id (status of a parcel: the Temporal UI or \`temporal workflow describe\`).

Options:
  --json        One JSON document on stdout
  -h, --help    Show this help

Exit codes: 0 shown; 2 usage/configuration error; 4 no shipment for that shop and order;
5 Temporal unreachable.
`;

/** How long to wait for the state query (it needs a worker; a closed workflow without one never answers). */
const QUERY_TIMEOUT_MS = 5_000;

const ACTIVITY_STATES: Record<number, string> = {
  1: 'SCHEDULED',
  2: 'STARTED',
  3: 'CANCEL_REQUESTED',
  4: 'PAUSED',
  5: 'PAUSE_REQUESTED',
};

export interface PendingActivity {
  activityId: string;
  activity: string | null;
  state: string;
  attempt: number;
  /** 0 = unlimited. */
  maximumAttempts: number;
  lastFailure: string | null;
  lastStartedAt: string | null;
  nextAttemptAt: string | null;
}

export interface StatusReport {
  shop: string;
  orderId: string;
  workflowId: string;
  runId: string;
  execution: { status: string; startTime: string; closeTime: string | null; historyLength: number; taskQueue: string };
  searchAttributes: ReturnType<typeof shipmentAttributes>;
  state: ShipmentState | null;
  /** Why the state could not be queried (e.g. no worker running). */
  stateError?: string;
  pendingActivities: PendingActivity[];
  outcome?: ShipmentOutcome;
  /** The workflow's failure message, when it failed. */
  failure?: string;
  /** An order shipping from several locations: each parcel's own state. */
  parcels?: ParcelReport[];
  /** An ended shipment a person resolved (`npm run cli -- resolve`): who, when, the note. */
  resolution?: EndedShipmentResolution;
}

export interface ParcelReport {
  workflowId: string;
  location: string;
  name: string;
  state: ShipmentState | null;
  stateError?: string;
}

export async function statusCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(STATUS_HELP);
    return EXIT.ok;
  }
  const [shop, orderId] = requirePositionals(positionals, ['shop', 'orderId'], 'status') as [string, string];
  const session = await connectTemporal(io.env);
  try {
    const { workflowId, handle, description } = await findShipment(session.client, shop, orderId);
    const report: StatusReport = {
      shop,
      orderId,
      workflowId,
      runId: description.runId,
      execution: {
        status: description.status.name,
        startTime: description.startTime.toISOString(),
        closeTime: description.closeTime?.toISOString() ?? null,
        historyLength: description.historyLength,
        taskQueue: description.taskQueue,
      },
      searchAttributes: shipmentAttributes(description.typedSearchAttributes),
      state: null,
      pendingActivities: await Promise.all(
        (description.raw.pendingActivities ?? []).map(async (a) => ({
          activityId: a.activityId ?? '',
          activity: a.activityType?.name ?? null,
          state: ACTIVITY_STATES[a.state ?? 0] ?? 'UNSPECIFIED',
          attempt: a.attempt ?? 0,
          maximumAttempts: a.maximumAttempts ?? 0,
          // describe() leaves it as stored: with payload encryption the message is in an encrypted payload.
          lastFailure:
            (await decodeOptionalFailureToOptionalError(session.client.options.loadedDataConverter, a.lastFailure))?.message ?? null,
          lastStartedAt: timestampIso(a.lastStartedTime),
          nextAttemptAt: timestampIso(a.nextAttemptScheduleTime),
        })),
      ),
    };
    try {
      report.state = await session.client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => handle.query(stateQuery));
    } catch (err) {
      report.stateError = `state query failed (is a worker running on task queue ${description.taskQueue}?): ${messageOf(err)}`;
    }
    if (report.state?.parcels) report.parcels = await parcelReports(session.client, report.state);
    if (description.status.name === 'COMPLETED') {
      report.outcome = (await handle.result()) as ShipmentOutcome;
    } else if (description.status.name === 'FAILED') {
      try {
        await handle.result();
      } catch (err) {
        report.failure = err instanceof WorkflowFailedError && err.cause ? err.cause.message : messageOf(err);
      }
    }

    if (description.status.name !== 'RUNNING' && endedReasonOf(report.searchAttributes.status, report.searchAttributes.shopChange)) {
      const resolution = await readEndedResolution(session.client, workflowId);
      if (resolution) report.resolution = resolution;
    }
    if (values.json) println(io.stdout, JSON.stringify(report, null, 2));
    else println(io.stdout, statusText(report));
    return EXIT.ok;
  } finally {
    await session.close();
  }
}

function statusText(r: StatusReport): string {
  const s = r.state;
  const rows: Array<[string, string]> = [
    [
      'Workflow',
      `${r.execution.status}, started ${r.execution.startTime}${r.execution.closeTime ? `, closed ${r.execution.closeTime}` : ''}, ${r.execution.historyLength} history events`,
    ],
    ['Status', r.searchAttributes.status ?? '-'],
    ['Courier', s?.courier ?? r.searchAttributes.courier ?? '-'],
    // Fixed when the shipment started; a state without one calls the account `default`.
    ['Shipping account', s?.parcels ? parcelAccounts(r.parcels ?? []) : s ? (s.account ?? DEFAULT_SHIPPING_ACCOUNT) : '-'],
  ];
  if (s?.parcels) {
    rows.push(['Phase', s.phase], ...parcelRows(r.parcels ?? []));
    if (s.shopOrder) rows.push(...shopOrderRows(s, s.shopOrder));
  } else if (s) {
    rows.push(
      ['Phase', s.phase],
      [
        'Label',
        s.labelId ? `${s.labelId} (revision ${s.revision}, key ${s.idempotencyKey ?? '-'})` : `not created yet (revision ${s.revision})`,
      ],
      ['Order numbers', `customer ${s.customerOrderNumber ?? '-'}, courier ${s.courierOrderNumber ?? '-'}`],
      [
        'Tracking',
        `${s.trackingNumber ?? 'no number yet'}${s.tag ? ` · ${s.tag}${s.subtag ? ` (${s.subtag}${s.subtagMessage ? `: ${s.subtagMessage}` : ''})` : ''}` : ''}`,
      ],
    );
    if (s.lastCheckpoint) {
      const c = s.lastCheckpoint;
      rows.push(['Last checkpoint', `${c.checkpointTime} ${c.location || c.city}: ${c.message}`]);
    }
    // The state counts polls up to the last change; the pending wait's finished attempts are the polls since.
    const wait = r.pendingActivities.find((a) => a.activity === 'awaitTrackingChange');
    const sinceChange = wait ? Math.max(0, wait.attempt - 1) : 0;
    const polls = `${s.attempts.trackingPolls + sinceChange}${wait ? ` (${sinceChange} since the last change)` : ''}`;
    rows.push(['Attempts', `label requests ${s.attempts.labelRequests}, tracking polls ${polls}`]);
    if (s.lastError) {
      const e = s.lastError;
      rows.push(['Last error', `${e.kind}: ${e.courierMessage ? `${e.courierCode}: ${e.courierMessage}` : e.message} (${e.at})`]);
      for (const f of e.fields ?? []) rows.push(['', `${f.field}: ${f.message}`]);
    }
    const sync = s.shopSync;
    if (sync) {
      rows.push([
        'Shop sync',
        sync.status === 'no_connector'
          ? `no connector for shop ${s.shop}: ${sync.emitted} event(s) not sent`
          : `${sync.status}, ${sync.delivered} of ${sync.emitted} event(s) delivered${sync.pending.length > 0 ? `, ${sync.pending.length} pending from sequence ${sync.pending[0]!.sequence}` : ''}`,
      ]);
      if (sync.failure) rows.push(['', `event ${sync.failure.sequence}: ${sync.failure.message} (${sync.failure.at})`]);
      if (SHOP_SYNC_STOPPED.includes(sync.status)) {
        rows.push([
          'Next step',
          `fix the shop's receiver or connector, then: npm run cli -- redeliver ${quoteArg(r.shop)} ${quoteArg(r.orderId)}`,
        ]);
      }
    }
    if (s.shopOrder) rows.push(...shopOrderRows(s, s.shopOrder));
    if (s.phase === 'awaiting_correction') {
      rows.push([
        'Next step',
        `npm run cli -- resubmit ${quoteArg(r.shop)} ${quoteArg(r.orderId)} <corrected-label.json>  (or: npm run cli -- cancel ...)`,
      ]);
    }
  } else if (r.stateError) {
    rows.push(['State', r.stateError]);
  }
  if (r.outcome) rows.push(['Outcome', `${r.outcome.outcome}${r.outcome.reason ? ` (${r.outcome.reason})` : ''}`]);
  if (r.failure) rows.push(['Failure', r.failure]);
  if (r.resolution) rows.push(['Resolved', `${r.resolution.reason} by ${r.resolution.by} at ${r.resolution.at}: ${r.resolution.note}`]);

  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = [
    `Shipment of shop ${r.shop} order ${r.orderId} (workflow ${r.workflowId})`,
    ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${printable(v)}`),
  ];
  if (r.pendingActivities.length > 0) {
    lines.push('Pending activities:');
    for (const a of r.pendingActivities) {
      const max = a.maximumAttempts > 0 ? `/${a.maximumAttempts}` : '';
      lines.push(
        `  ${a.activity ?? a.activityId}  ${a.state}  attempt ${a.attempt}${max}${a.nextAttemptAt ? `, next attempt ${a.nextAttemptAt}` : ''}`,
      );
      if (a.lastFailure) lines.push(`    last failure: ${printable(a.lastFailure)}`);
    }
  }
  return lines.join('\n');
}

/** Each parcel's own state, queried from its workflow (the order's workflow knows only their ends). */
async function parcelReports(client: Client, order: ShipmentState): Promise<ParcelReport[]> {
  return Promise.all(
    (order.parcels ?? []).map(async ({ workflowId, location, name }) => {
      try {
        const state = await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () =>
          client.workflow.getHandle(workflowId).query(stateQuery),
        );
        return { workflowId, location, name, state };
      } catch (err) {
        return { workflowId, location, name, state: null, stateError: `state query failed: ${messageOf(err)}` };
      }
    }),
  );
}

/** One row per parcel: where from, how far, its label and key, its tracking, its workflow. */
function parcelRows(parcels: ParcelReport[]): Array<[string, string]> {
  const rows: Array<[string, string]> = [['Parcels', `${parcels.length}, one per location, each its own workflow`]];
  for (const p of parcels) {
    const s = p.state;
    const label = s?.labelId ? `label ${s.labelId} (key ${s.idempotencyKey ?? '-'})` : 'no label yet';
    const tracking = s?.trackingNumber ? `, tracking ${s.trackingNumber}${s.tag ? ` · ${s.tag}` : ''}` : '';
    const account = s ? `, account ${s.account ?? DEFAULT_SHIPPING_ACCOUNT}` : '';
    const progress = s ? `${s.outcome ?? s.phase}, ${label}${account}${tracking}` : (p.stateError ?? '-');
    rows.push(['', `${p.name} (location ${p.location}): ${progress}; workflow ${p.workflowId}`]);
  }
  return rows;
}

/** An order shipping from several locations makes no label itself: its parcels' accounts are the ones used. */
function parcelAccounts(parcels: ParcelReport[]): string {
  const accounts = [...new Set(parcels.flatMap((p) => (p.state ? [p.state.account ?? DEFAULT_SHIPPING_ACCOUNT] : [])))];
  return accounts.length === 0 ? '-' : `${accounts.join(', ')} (its parcels' labels)`;
}

function quoteArg(text: string): string {
  return /^[\w.@:+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The merchant's side: the order's status in the shop, a hold, the last change, and what is left for an operator. */
function shopOrderRows(s: ShipmentState, order: ShopOrderState): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['Shop order', `${order.facts.status}${order.heldSince ? `, held since ${order.heldSince}: the label waits` : ''}`],
  ];
  const last = order.changes.at(-1);
  if (last) rows.push(['', `last change (${last.kinds.join(', ')}) learned ${last.at}: ${last.action}`]);
  for (const r of s.replacedLabels ?? [])
    rows.push([
      'Replaced label',
      `${r.labelId} (revision ${r.revision}, tracking ${r.trackingNumber ?? '-'}) at ${r.replacedAt}: not voided, no longer tracked`,
    ]);
  const open = openAttention(order);
  if (open) rows.push(['Shop change', shopChangeLine(s, order, open)]);
  for (const l of order.labelsToVoid ?? [])
    rows.push([
      'Label to void',
      `${l.labelId} (revision ${l.revision}) bought at ${l.at} after the order was cancelled: unused, never told to the shop`,
    ]);
  for (const r of order.resolutions ?? []) rows.push(['Resolved', `${r.attention} by ${r.by} at ${r.at}: ${r.note}`]);
  return rows;
}

/** The open mark, what it means, and the commands that act on it. */
function shopChangeLine(s: ShipmentState, order: ShopOrderState, open: ShopAttention): string {
  const resolve = `${resolveCommand(s.shop, s.orderId, s.parcel?.location)} --note "<what was done>"`;
  if (open === 'cancelled_label_to_void')
    return `${open}: the order was cancelled in the shop while a relabel's label was being made; void the unused label with the courier, then ${resolve}`;
  if (open === 'cancelled_in_shop')
    return `${open}: the order was cancelled in the shop after its label; recall the parcel with the courier, then ${resolve}`;
  const relabel = order.offer
    ? `; a new label to the shop's data (status --json: state.shopOrder.offer): ${relabelCommand(s.shop, s.orderId, s.parcel?.location)}`
    : '';
  return `${open}: the merchant changed the order after its label${relabel}; handled otherwise: ${resolve}`;
}
