/**
 * Replays histories recorded from real runs (test/fixtures/histories: the poller shards' and the
 * accounts' since 1.0, the pinned types' from the newest build that changed their commands)
 * against the current workflow code. A change that would break workflows already running fails
 * here. A pinned type's histories of a released build that no longer replay are kept in
 * test/fixtures/released/<version>/ and not replayed: those runs never move to newer code
 * (docs/workflow.md, "Patches").
 * `npm run fixtures:record` records the whole set again (every suite that calls saveFixture, with
 * RECORD_HISTORIES=1); histories of builds before 1.0 are not supported (CHANGELOG.md).
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

/** Every path through the workflows, by the fixture that takes it (and the suite that records it). */
const PATHS = [
  // The label made, tracked to each terminal tag (shipment-workflow.test.ts).
  'terminal-delivered',
  'terminal-exception',
  'terminal-cancelled',
  'delivered-with-queries',
  // The API's 429 and 5xx on the label, a rejection resubmitted, a label abandoned, a refused key.
  'rate-limited',
  'server-errors',
  'rejection-resubmit',
  'resubmit-racing-cancel',
  'label-abandoned',
  'shipment-failed-unauthorized',
  // A first attempt answered 429 goes to the regular activity with the Retry-After (held-account.test.ts),
  // and an order read after a slow label (order-read-retry-after.crash.test.ts).
  'held-account-first-attempt-429',
  'order-read-429-after-slow-label',
  // Cancel: the operator's signal, a Temporal cancellation request (with the shop still told).
  'cancelled-by-operator',
  'temporal-cancel-request',
  'shop-sync-temporal-cancel',
  'shop-sync-temporal-cancel-mid-delivery',
  // Continue-as-new, without and with shop events pending.
  'continued-as-new',
  'shop-sync-continued-as-new',
  // Shop delivery: delivered, through an outage, a Retry-After, refused and gone then redelivered,
  // no connector, a worker killed after the shop's 2xx, a slow shop, an expired window.
  'shop-sync-delivered',
  'shop-sync-tracking-told-in-its-task',
  'shop-sync-outage-catch-up',
  'shop-sync-retry-after',
  'shop-sync-refused-redelivered',
  'shop-sync-gone-redelivered',
  'shop-sync-no-connector',
  'shop-sync-killed-after-2xx',
  'shop-sync-slow-shop',
  'shop-sync-window-expired',
  'immutable-event-sent-once-recorded',
  'immutable-event-tracking-told-in-its-task',
  // Platform connectors (shop-platforms*.test.ts).
  'shop-platform-shopify-delivered',
  'shop-platform-woocommerce-delivered',
  'shop-platform-shopify-commit-then-drop',
  'shop-platform-woocommerce-commit-then-drop',
  'shop-platform-no-platform-order-id',
  // The merchant's changes in each phase: before the label (cancel, hold, move, release, found by
  // the label's check, taken before any attempt), after it (cancel, address, a hold released).
  'shop-changes-shopify-cancelled-before-label',
  'shop-changes-woocommerce-cancelled-before-label',
  'shop-changes-shopify-held-moved-released',
  'shop-changes-woocommerce-held-moved-released',
  'shop-changes-change-before-any-attempt',
  'shop-check-shopify-cancelled-at-label',
  'shop-check-woocommerce-cancelled-at-label',
  'shop-changes-woocommerce-cancelled-after-label',
  'shop-changes-woocommerce-address-after-label',
  'shop-changes-held-after-label-released',
  // Relabel from the shop's data, the merchant's cancel meeting it, attention marks closed.
  'relabel-shopify-address-after-label',
  'relabel-woocommerce-address-after-label',
  'relabel-woocommerce-cancelled-while-labelling',
  'relabel-label-bought-while-cancelled',
  'relabel-shopify-attention-closes',
  'relabel-woocommerce-attention-closes',
  // A relabel whose new label's order read fails with another error than the API's: the update fails, tracking moves (shipment.test.ts).
  'relabel-order-read-failed-not-api',
  'resolve-woocommerce-cancelled-after-label',
  // A person's resolve of an ended shipment: its own workflow (resolve-ended.test.ts).
  'attention-resolution-exception',
  // Split orders: the order's workflow, one parcel's, a cancel told to both parcels; lines the merchant moved (the order's
  // workflow adding a parcel, the parcel whose lines left, the parcel added).
  'split-shopify-two-locations-order',
  'split-shopify-two-locations-parcel',
  'split-shopify-cancelled-before-labels',
  'split-shopify-lines-moved-order',
  'split-shopify-lines-moved-parcel-left',
  'split-shopify-lines-moved-parcel-added',
  // Tracking by the fleet's pollers: the shipment's side, and the poller shard's own runs.
  'fleet-polled-by-count',
  'fleet-poll-unauthorized',
  'fleet-cancel-while-waiting',
  'fleet-timed-out',
  'fleet-terminal-with-fewer-checkpoints',
  'fleet-rejoined-after-shard-terminated',
  'fleet-poller-killed-shipment',
  'fleet-poller-shard',
  'fleet-poller-joined-by-update',
  'fleet-poller-relabel',
  // Named shipping accounts, and the account workflow (a relayed hold, fresh answers pooled).
  'accounts-named-account-cancelled',
  'fleet-named-account-cancelled',
  'account-held',
  'account-fresh-answers',
  'account-paced',
  'account-shares-by-need',
  // The shop pull (paged, a page retried), a webhook's pull by id, and the live order path's pull.
  'shop-pull-paged',
  'shop-pull-page-retried',
  'webhook-by-id-named-orders',
  'live-webhook-pull',
  // A shipment started in an order's trace: the interceptors' spans, no commands of their own.
  'traced-delivered',
];

it('has recorded histories for each path through the workflows, and none other', () => {
  expect(fixtures).toEqual(PATHS.map((name) => `${name}.json`).sort());
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
