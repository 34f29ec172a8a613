/** `npm run cli -- redeliver <shop> <orderId>`: send a shipment's undelivered shop events again. */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { parseDuration } from '../../config/settings';
import { redeliverShopEventsUpdate, stateQuery, type RedeliverResult, type ShopSyncState } from '../../workflow-definitions/shipment';
import { connectTemporal, EXIT, parseCommandArgs, println, requirePositionals, usageError, type ExitCode, type Io } from '../cli-support';
import { findRunningShipment } from './shipment-lookup';

export const REDELIVER_HELP = `Usage: npm run cli -- redeliver [--wait <duration>] [--parcel <location>] [--json] <shop> <orderId>

Sends a shipment's undelivered events to its shop again, from the first one the shop did
not acknowledge, in order and with their original ids (the shop de-duplicates on them).
For a shipment whose shop sync stopped: the shop refused an event (a 4xx), its endpoint
answered 410 Gone, or the delivery window ran out. Find them with
  npm run cli -- list --shop-sync failed,gone,expired
Fix the cause first (the receiver, or the worker's SHOP_CONNECTORS), then redeliver.

Options:
  --wait <duration>   How long to wait for the outcome (default 30s; 0 = do not wait)
  --parcel <location> One parcel of an order that ships from several locations (status lists them)
  --json              One JSON document on stdout: { redelivery, shopSync } or { rejected }
  -h, --help          Show this help

Exit codes: 0 the shop has every event (or --wait 0 and the redelivery started);
1 refused (nothing to redeliver, or the shipment already ended), or delivery stopped
again; 2 usage/configuration error; 4 no shipment for that shop and order;
5 Temporal unreachable, or still delivering when --wait ran out.
`;

export async function redeliverCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    wait: { type: 'string', default: '30s' },
    parcel: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(REDELIVER_HELP);
    return EXIT.ok;
  }
  const [shop, orderId] = requirePositionals(positionals, ['shop', 'orderId'], 'redeliver') as [string, string];
  const waitMs = values.wait.trim() === '0' ? 0 : parseDuration(values.wait);
  if (waitMs === undefined) throw usageError(`--wait must be a duration like 500ms, 20s or 5m, or 0 (got "${values.wait}")`);
  const out = (human: string, json: unknown) => println(io.stdout, values.json ? JSON.stringify(json, null, 2) : human);

  const session = await connectTemporal(io.env);
  try {
    const { handle } = await findRunningShipment(session.client, shop, orderId, values.parcel, 'its workflow can no longer send events');
    let redelivery: RedeliverResult;
    try {
      redelivery = await handle.executeUpdate(redeliverShopEventsUpdate);
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        const message = err.cause?.message ?? err.message;
        out(`The workflow refused the redelivery: ${message}`, { rejected: message });
        return EXIT.rejected;
      }
      throw err;
    }
    const started = `Redelivering ${redelivery.pending} event(s) from sequence ${redelivery.fromSequence} to shop ${shop} (shop sync was ${redelivery.previousStatus}).`;
    if (waitMs === 0) {
      out(started, { redelivery });
      return EXIT.ok;
    }
    const sync = await settled(() => handle.query(stateQuery).then((s) => s.shopSync), waitMs);
    const json = { redelivery, shopSync: sync };
    if (!sync || sync.status === 'delivering') {
      out(`${started}\nStill delivering after ${values.wait}: see npm run cli -- status ${shop} ${orderId}`, json);
      return EXIT.unavailable;
    }
    if (sync.status === 'up_to_date') {
      out(`${started}\nDelivered: the shop has all ${sync.emitted} event(s).`, json);
      return EXIT.ok;
    }
    const f = sync.failure;
    out(`${started}\nDelivery stopped again (${sync.status})${f ? `: event ${f.sequence}: ${f.message}` : ''}`, json);
    return EXIT.rejected;
  } finally {
    await session.close();
  }
}

/** Polls the shop sync state until it is no longer delivering, or the time is up. */
async function settled(read: () => Promise<ShopSyncState | undefined>, waitMs: number): Promise<ShopSyncState | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const sync = await read();
    if (!sync || sync.status !== 'delivering' || Date.now() >= deadline) return sync;
    await new Promise((resolve) => setTimeout(resolve, Math.min(250, Math.max(0, deadline - Date.now()))));
  }
}
