/** `npm run cli -- list`: shipment workflows filtered on their search attributes, one page at a time. */
import { defaultPayloadConverter } from '@temporalio/common';
import { SA, WORKFLOW_TYPE } from '../../workflow-definitions/shipment';
import { connectTemporal, EXIT, parseCommandArgs, positiveInt, println, table, usageError, type ExitCode, type Io } from '../cli-support';
import { timestampIso } from './shipment-lookup';
import { parcelLocationOf } from '../../domain/shipment';

export const LIST_HELP = `Usage: npm run cli -- list [options]

Lists shipment workflows, newest first, filtered on their search attributes.
Each filter takes one value or several separated by commas (any of them matches);
filters combine with AND.

Filters:
  --status <s,...>        ShipmentStatus: a phase while running (creating_label,
                          awaiting_correction, held_in_shop, reading_order, tracking) or
                          the outcome (delivered, exception, cancelled, label_failed,
                          cancelled_by_operator, tracking_timed_out, ended_on_tag,
                          cancelled_in_shop, hold_timed_out)
  --tag <t,...>           ShipmentTrackingTag (Pending, InTransit, Delivered, Exception, ...)
  --courier <c,...>       ShipmentCourier (courier code)
  --shop <s,...>          ShipmentShop
  --shop-sync <s,...>     ShipmentShopSync: failed, gone or expired (shop delivery waits for
                          \`npm run cli -- redeliver\`), ok (delivering again after one)
  --shop-change <c,...>   ShipmentShopChange: the merchant changed the order after its label
                          (cancelled_in_shop, cancelled_label_to_void, address_changed,
                          lines_changed, held_in_shop), resolved once that is over
Paging:
  --page-size <n>         Workflows per page (default 20, max 1000)
  --next-page-token <t>   Continue after a previous page (the token it printed)
Output:
  --json                  One JSON document: { query, shipments: [...], nextPageToken }
  --query                 Print the visibility query that would be used, and exit
  -h, --help              Show this help

Exit codes: 0 listed (also when nothing matches); 2 usage/configuration error;
5 Temporal unreachable.
`;

/**
 * A visibility-query string literal: single-quoted, a quote doubled (SQL style), a backslash
 * escaped, so no value can end the literal early. (The dev server's SQLite visibility store
 * cannot match values containing `"` or `\`; the query stays well-formed but finds nothing.)
 */
export function queryLiteral(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

export interface ListFilters {
  status?: string[];
  tag?: string[];
  courier?: string[];
  shop?: string[];
  shopSync?: string[];
  shopChange?: string[];
}

/** The visibility query for the filters; every value is a quoted literal, never query text. */
export function buildListQuery(filters: ListFilters): string {
  const clauses = [`WorkflowType = ${queryLiteral(WORKFLOW_TYPE)}`];
  const add = (attribute: string, values: string[] | undefined) => {
    if (!values || values.length === 0) return;
    clauses.push(
      values.length === 1 ? `${attribute} = ${queryLiteral(values[0]!)}` : `${attribute} IN (${values.map(queryLiteral).join(', ')})`,
    );
  };
  add(SA.status.name, filters.status);
  add(SA.trackingTag.name, filters.tag);
  add(SA.courier.name, filters.courier);
  add(SA.shop.name, filters.shop);
  add(SA.shopSync.name, filters.shopSync);
  add(SA.shopChange.name, filters.shopChange);
  return clauses.join(' AND ');
}

const STATUS_NAMES: Record<number, string> = {
  1: 'RUNNING',
  2: 'COMPLETED',
  3: 'FAILED',
  4: 'CANCELLED',
  5: 'TERMINATED',
  6: 'CONTINUED_AS_NEW',
  7: 'TIMED_OUT',
};

export interface ListedShipment {
  workflowId: string;
  runId: string;
  execution: string;
  startTime: string | null;
  closeTime: string | null;
  shop: string | null;
  orderId: string | null;
  /** One parcel of an order shipping from several locations: its location; null for an order's own workflow. */
  parcel: string | null;
  courier: string | null;
  status: string | null;
  trackingTag: string | null;
  trackingNumber: string | null;
  shopChange: string | null;
}

export async function listCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    status: { type: 'string' },
    tag: { type: 'string' },
    'shop-sync': { type: 'string' },
    'shop-change': { type: 'string' },
    courier: { type: 'string' },
    shop: { type: 'string' },
    'page-size': { type: 'string' },
    'next-page-token': { type: 'string' },
    json: { type: 'boolean', default: false },
    query: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(LIST_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 0)
    throw usageError(`list takes no arguments, only options (got "${positionals.join(' ')}"). See: npm run cli -- list --help`);
  const split = (text: string | undefined) =>
    text
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const query = buildListQuery({
    status: split(values.status),
    tag: split(values.tag),
    courier: split(values.courier),
    shop: split(values.shop),
    shopSync: split(values['shop-sync']),
    shopChange: split(values['shop-change']),
  });
  if (values.query) {
    println(io.stdout, query);
    return EXIT.ok;
  }
  const pageSize = positiveInt('page-size', values['page-size'], 20, 1000);
  const token = values['next-page-token'];
  if (token !== undefined && !/^[A-Za-z0-9_-]+$/.test(token))
    throw usageError('--next-page-token is not a token printed by npm run cli -- list');

  const session = await connectTemporal(io.env);
  try {
    const response = await session.client.workflowService.listWorkflowExecutions({
      namespace: session.settings.namespace,
      query,
      pageSize,
      nextPageToken: token === undefined ? undefined : Buffer.from(token, 'base64url'),
    });
    const shipments: ListedShipment[] = (response.executions ?? []).map((e) => {
      const fields = e.searchAttributes?.indexedFields ?? {};
      const attr = (name: string): string | null => {
        const payload = fields[name];
        if (!payload) return null;
        const value = defaultPayloadConverter.fromPayload<unknown>(payload);
        const first: unknown = Array.isArray(value) ? value[0] : value;
        return typeof first === 'string' ? first : null;
      };
      return {
        workflowId: e.execution?.workflowId ?? '',
        runId: e.execution?.runId ?? '',
        execution: STATUS_NAMES[e.status ?? 0] ?? 'UNSPECIFIED',
        startTime: timestampIso(e.startTime),
        closeTime: timestampIso(e.closeTime),
        shop: attr(SA.shop.name),
        orderId: attr(SA.orderId.name),
        parcel: parcelOf(e.execution?.workflowId ?? '', attr(SA.shop.name), attr(SA.orderId.name)),
        courier: attr(SA.courier.name),
        status: attr(SA.status.name),
        trackingTag: attr(SA.trackingTag.name),
        trackingNumber: attr(SA.trackingNumber.name),
        shopChange: attr(SA.shopChange.name),
      };
    });
    const next =
      response.nextPageToken && response.nextPageToken.length > 0 ? Buffer.from(response.nextPageToken).toString('base64url') : null;

    if (values.json) {
      println(io.stdout, JSON.stringify({ query, shipments, nextPageToken: next }, null, 2));
      return EXIT.ok;
    }
    if (shipments.length === 0) println(io.stdout, `No shipments match: ${query}`);
    else {
      const rows = [['SHOP', 'ORDER', 'PARCEL', 'COURIER', 'STATUS', 'TAG', 'TRACKING', 'WORKFLOW', 'STARTED']];
      for (const s of shipments) {
        rows.push([
          s.shop ?? '-',
          s.orderId ?? '-',
          // An order shipping from several locations lists its own row (status "parcels") and one per parcel.
          s.parcel ?? '-',
          s.courier ?? '-',
          s.status ?? '-',
          s.trackingTag ?? '-',
          s.trackingNumber ?? '-',
          s.execution,
          s.startTime ?? '-',
        ]);
      }
      println(io.stdout, table(rows));
    }
    if (next)
      println(
        io.stdout,

        `More: npm run cli -- list ${argvWithout(argv, '--next-page-token')} --next-page-token ${next}`.replace(/\s+/g, ' '),
      );
    return EXIT.ok;
  } finally {
    await session.close();
  }
}

function parcelOf(workflowId: string, shop: string | null, orderId: string | null): string | null {
  return shop === null || orderId === null ? null : (parcelLocationOf(workflowId, { shop, orderId }) ?? null);
}

/** The command line again without one option and its value, to print the next page's command. */
function argvWithout(argv: string[], option: string): string {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === option) {
      i++;
      continue;
    }
    if (arg.startsWith(`${option}=`)) continue;
    out.push(/^[\w.,@:=/+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);
  }
  return out.join(' ');
}
