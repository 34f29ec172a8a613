/**
 * Replays histories recorded from real runs (test/fixtures/histories, refreshed with
 * RECORD_HISTORIES=1 npx vitest run test/shipment-workflow.test.ts, and the other suites that call
 * saveFixture) against the current workflow
 * code. A change that would break workflows already running in production fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { expect, it } from 'vitest';
import { getWorkflowBundle } from './helpers/temporal-env';
import { tracingSinks } from '../tracing/temporal';

const DIR = path.join(__dirname, 'fixtures', 'histories');
const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

it('has recorded histories for each path through the workflow', () => {
  expect(fixtures).toEqual(
    expect.arrayContaining([
      'terminal-delivered.json',
      'terminal-exception.json',
      'terminal-cancelled.json',
      'rate-limited.json',
      'server-errors.json',
      'courier-rejection-resubmit.json',
      'label-abandoned.json',
      'cancelled-by-operator.json',
      'continued-as-new.json',
      // change-driven tracking (recorded after the change; the ones above predate it)
      'change-driven-delivered.json',
      'change-driven-exception.json',
      'change-driven-cancelled.json',
      'change-driven-polled-by-count.json',
      'change-driven-rate-limited.json',
      'change-driven-server-errors.json',
      'change-driven-poll-unauthorized.json',
      'change-driven-rejection-resubmit.json',
      'change-driven-cancel-while-waiting.json',
      'change-driven-cancelled-by-operator.json',
      'change-driven-timed-out.json',
      'change-driven-continued-as-new.json',
      'migrated-timer-loop-to-change-driven.json',
      // shop sync (recorded after it; the ones above predate it and send no events)
      'shop-sync-delivered.json',
      'shop-sync-outage-catch-up.json',
      'shop-sync-continued-as-new.json',
      'shop-sync-retry-after.json',
      'shop-sync-refused-redelivered.json',
      'shop-sync-gone-redelivered.json',
      'shop-sync-no-connector.json',
      'shop-sync-killed-after-2xx.json',
      // a first delivery attempt that ran out of its seconds hands over to the delivery activity
      'shop-sync-slow-shop.json',
      'shop-sync-window-expired.json',
      // an event is first sent once the task that emitted it is recorded (a worker SIGKILLed mid-send)
      'immutable-event-sent-once-recorded.json',
      // a resubmit update racing an operator's cancel: answered before the workflow completes
      'resubmit-racing-cancel.json',
      // A Temporal cancellation request (Web UI) and a failure that stops the shipment.
      'temporal-cancel-request.json',
      'shipment-failed-unauthorized.json',
      // The shop delivery outlives a Temporal cancellation request (SHOP_DELIVERY_OUTLIVES_CANCEL).
      'shop-sync-temporal-cancel.json',
      'shop-sync-temporal-cancel-mid-delivery.json',
      // The shop pull (shop-import/): pages with the retry list first, and a page read again after a failure.
      'shop-pull-paged.json',
      'shop-pull-page-retried.json',
      // A webhook's pull of the orders its webhooks named (orderIds): read by id, page by page, no cursor written.
      'webhook-by-id-named-orders.json',
      // The account workflow: a relayed hold (recorded before it pooled fresh answers), and fresh answers pooled.
      'account-held.json',
      'account-fresh-answers.json',
      // The account's one rate for the fleet: two workers' pace reports, their shares, an overshoot's cut.
      'account-paced.json',
      // The shop talks back (shopOrderChanged): before the label a cancel stops, a hold waits and a
      // moved address is the next revision; after it, a cancel and a moved address are marked.
      'shop-changes-shopify-cancelled-before-label.json',
      'shop-changes-woocommerce-cancelled-before-label.json',
      'shop-changes-shopify-held-moved-released.json',
      'shop-changes-woocommerce-held-moved-released.json',
      'shop-changes-woocommerce-cancelled-after-label.json',
      'shop-changes-woocommerce-address-after-label.json',
      // A shipment of a named shipping account (SHIPPING_ACCOUNT): every call with its account, cancelled in tracking.
      'accounts-named-account-cancelled.json',
      // Tracking polled per fleet (FLEET_TRACKING): the shipment's side, the moves from both older
      // paths, and a poller shard's run whose span was retried after its worker was SIGKILLed.
      'fleet-polled-by-count.json',
      'fleet-poll-unauthorized.json',
      'fleet-cancel-while-waiting.json',
      'fleet-timed-out.json',
      'fleet-migrated-from-timer-loop.json',
      'fleet-migrated-from-change-driven.json',
      'fleet-poller-killed-shipment.json',
      'fleet-poller-shard.json',
      // A shard merging its span by label (POLLER_MERGES_BY_LABEL): a shipment relabelled mid-span keeps its new label.
      'fleet-poller-relabel.json',
      // A named account's shipment polled by its account's shard (SHIPPING_ACCOUNT and FLEET_TRACKING), cancelled.
      'fleet-named-account-cancelled.json',
      // A Delivered answer with fewer checkpoints than known ends tracking (TERMINAL_ANSWER_ENDS_TRACKING).
      'fleet-terminal-with-fewer-checkpoints.json',
      // Told by the tracking reconciler that no live shard watches it, a shipment joins again (TRACKING_REJOINS);
      // a shard whose members joined by update within its bound (one more refused, recording nothing).
      'fleet-rejoined-after-shard-terminated.json',
      'fleet-poller-joined-by-update.json',
      // One order, several parcels: the order's workflow starting a parcel workflow per location,
      // a parcel's own run (its key and events name its location), and a cancel told to both parcels.
      'split-shopify-two-locations-order.json',
      'split-shopify-two-locations-parcel.json',
      'split-shopify-cancelled-before-labels.json',
      // After the label, an operator's relabel from the shop's data (RELABEL_FROM_SHOP): the next
      // revision's label, tracking moved to it, the shop told its tracking (label.created with replaces).
      'relabel-shopify-address-after-label.json',
      'relabel-woocommerce-address-after-label.json',
      // The merchant's cancel while the relabel's label is held back (RELABEL_YIELDS_TO_SHOP): the call
      // is stopped, no label bought, the cancel's mark stays and nothing more is written to the order.
      'relabel-woocommerce-cancelled-while-labelling.json',
      // ...and a label an attempt already sent bought meanwhile: kept to void (cancelled_label_to_void), then resolved.
      'relabel-label-bought-while-cancelled.json',
      // An attention mark ends with its condition or a person's resolve (ATTENTION_CLOSES): ShipmentShopChange
      // becomes resolved after a relabel, and after resolveAttention (who, when, the note) on a cancelled order.
      'relabel-shopify-attention-closes.json',
      'relabel-woocommerce-attention-closes.json',
      'resolve-woocommerce-cancelled-after-label.json',
      'shop-changes-held-after-label-released.json',
      // A first attempt answered 429 goes straight to the regular activity, which waits the
      // Retry-After (HELD_ACCOUNT_RETRY_AFTER_IN_ACTIVITY): no timer, no extra workflow task.
      'held-account-first-attempt-429.json',
      // A tracking change and the outcome told inside the task that applied them (TRACKING_TOLD_IN_ITS_TASK):
      // a delivered shipment, and a worker SIGKILLed while the shop held its answer to a tracking change.
      'shop-sync-tracking-told-in-its-task.json',
      'immutable-event-tracking-told-in-its-task.json',
      // A change taken before any label attempt is the next revision (EVERY_TAKEN_CHANGE_A_NEW_REVISION).
      'shop-changes-change-before-any-attempt.json',
      // A shipment started in an order's trace (tracing/): the OpenTelemetry interceptors' spans, no commands of their own.
      'traced-delivered.json',
      // A person's resolve of an ended shipment (an exception): its own workflow, the record of who, when and the note.
      'attention-resolution-exception.json',
    ]),
  );
});

it('keeps zod and the API contract out of the workflow bundle (each cached workflow loads it again)', async () => {
  const { code } = await getWorkflowBundle();
  expect(code).not.toMatch(/node_modules\/zod\//);
  expect(code).not.toMatch(/shipping-api\/contract\.ts/);
});

it.each(fixtures)('replays %s deterministically', async (file) => {
  const history = historyFromJSON(JSON.parse(readFileSync(path.join(DIR, file), 'utf8')));
  // Throws DeterminismViolationError (or the workflow's own error) when the code diverges.
  // The tracing sink as every worker has it: a traced history's spans are dropped, not logged as a missing sink.
  await Worker.runReplayHistory({ workflowBundle: await getWorkflowBundle(), sinks: tracingSinks() }, history, file.replace(/\.json$/, ''));
});
