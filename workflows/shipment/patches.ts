/**
 * The patch ids of the shipment workflow. Each names a change of behaviour that workflows
 * recorded before it must not see; `patched(id)` keeps them on their old path when they replay.
 * Where each is checked, and its `Retire:` condition, is said beside it (test/patch-retirement.test.ts
 * fails on a patch without one; docs/workflow.md, "Patches", gives the policy).
 */

/**
 * Tracking wakes the workflow only when the shipment changes, instead of a timer and an activity
 * per poll. New workflows also make the first attempt of label creation and order read inside
 * their first workflow task. Checked twice, with two meanings:
 * - once per run, at its start (`ShipmentRun.start`): how this run calls the API;
 * - at every poll of the timer loop (`ShipmentRun.ship`): a workflow still polling on a timer switches to
 *   change-driven tracking at its next poll (fixture `migrated-timer-loop-to-change-driven`).
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const CHANGE_DRIVEN_TRACKING = 'change-driven-tracking';

/**
 * Shipments started with shop sync tell the shop every change, as numbered events delivered in
 * order by a coroutine beside the shipment, and complete once the shop has them. Workflows
 * started before it send nothing and finish as they did. Checked once per run, at its start.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const SHOP_SYNC = 'shop-sync';

/**
 * A first delivery attempt that fails (its few seconds ran out on a slow shop, or an unexpected
 * error) goes on as the regular delivery activity; before this, any such failure stopped
 * delivery as `expired`. Checked only when a first attempt fails, so other histories are unchanged.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const FIRST_DELIVERY_HANDS_OVER = 'first-delivery-hands-over';

/**
 * A Temporal cancellation request (Web UI, `temporal workflow cancel`) no longer ends the shop
 * delivery coroutine: it goes on outside cancellation, so the shop still hears the rest, in
 * order, and the shipment completes. Before it, the request threw unhandled in the waiting
 * coroutine (every workflow task failed), or cancelled its call and ended it (the shipment then
 * waited for the shop forever). Checked only when a cancellation reaches the coroutine, so no
 * other history gains a marker; the events of a call cancelled mid-flight are sent again, with
 * the same ids.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const SHOP_DELIVERY_OUTLIVES_CANCEL = 'shop-delivery-outlives-cancel';

/**
 * An event is first sent only once the workflow task that emitted it is recorded, so every send
 * of it (a retry, a worker lost mid-call) carries the same body. Before it, the first attempt
 * (a local activity) sent it inside that task: a worker lost before the task was recorded left
 * the shop with a body the retried task then built again, with another `occurredAt` and, after a
 * label's first attempt ran again, other data, under the same id. Checked when a batch holds an
 * event of the current task, so histories without deliveries are unchanged.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const SHOP_EVENT_SENT_ONCE_RECORDED = 'shop-event-sent-once-recorded';

/**
 * A tracking change and the outcome it ends in are told to the shop inside the workflow task
 * that applied them (the first attempt, a local activity), not after it by the regular activity:
 * their body is built only from what history already holds (the change as its signal or activity
 * result carried it, the state replay rebuilds) and dated by the poll that saw the change
 * (`polledAt`), so a retried task builds the same bytes, which is all `SHOP_EVENT_SENT_ONCE_RECORDED`
 * waits for. It saves 5 history events and a workflow task per change the shop sees. Before it,
 * such an event was dated by the task's clock and waited for the task to be recorded. Checked
 * when a change is told to the shop, so shipments without a shop change nothing. Fixture:
 * shop-sync-tracking-told-in-its-task, immutable-event-tracking-told-in-its-task.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const TRACKING_TOLD_IN_ITS_TASK = 'tracking-told-in-its-task';

/**
 * A changed order taken into the label request is always the next revision (a new key). Before
 * it, a change taken before any label attempt kept revision 1: but "no attempt" is only what the
 * recorded history shows. A worker lost mid-task takes with it the task's local attempts: one
 * whose check found the change (so the next attempt, revision 2, made the label), and the task
 * run again, told the same change by the pull first, made revision 1's label: two labels for one
 * order (the shop-changes bench, once in 1,000 orders). Now the key depends only on the changes
 * taken, not on how they were learned. Checked only where a change is taken before any attempt,
 * so other histories are unchanged. Fixture: shop-changes-change-before-any-attempt.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const EVERY_TAKEN_CHANGE_A_NEW_REVISION = 'every-taken-change-a-new-revision';

/**
 * Every call of a shipment goes to the shipping account its input names (the shop's, when it
 * started). A run that began on a worker from before (which called the worker's single account
 * whatever the input said) keeps calling that one: its label lives there. Checked once per run,
 * at its start.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const SHIPPING_ACCOUNT = 'shipping-account';

/**
 * Tracking polled per fleet, told per change: a shipment reaching tracking joins a poller shard
 * (workflows/tracking-poller/) and waits for its news, instead of an activity whose retries are
 * its polls. Checked at the top of each wait of change-driven tracking (`followTrackingChanges`),
 * so a shipment waiting on today's path moves over when that wait returns (a worker with fleet
 * pollers makes it return at its next poll). Fixtures: fleet-*.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const FLEET_TRACKING = 'fleet-tracking';

/**
 * After the label, an operator's relabel from the shop's data (`resubmit --from-shop`, relabel.ts)
 * makes tracking follow the new label: the shipment leaves its shard for the old label and joins
 * with the new one. Checked where fleet tracking sees its label replaced, so only histories with
 * a relabel (fixtures relabel-*) carry its marker.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const RELABEL_FROM_SHOP = 'relabel-from-shop';

/*
 * The merchant's changes (shop-changes.ts, shop-aware-label.ts) need no patch id: they are
 * decided by the input, not by the code's version. Only shipments whose input carries the
 * order's facts (`shopOrder`, set by a shop pull since this change) take the shop-aware label
 * step; every history recorded before has no such input and replays the unchanged loop of
 * `ShipmentRun.ship`. A marker would cost every new shipment one history event for nothing.
 */

/**
 * A first attempt (inside the workflow task) answered 429 goes on at once as the regular
 * activity, with the Retry-After's end in its input (`notBefore`): the activity waits it, or
 * gives its slot back until it ends when it is long (the server retries it then). Before, the
 * workflow waited it on a timer: one more timer and workflow task per such call, which a held
 * account's shipments ran beside the other accounts' labels. Checked only when a first attempt
 * meets a 429, so other histories are unchanged. Fixture: held-account-first-attempt-429.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const HELD_ACCOUNT_RETRY_AFTER_IN_ACTIVITY = 'held-account-retry-after-in-activity';

/**
 * An operator's relabel (`resubmit --from-shop`, relabel.ts) yields to the merchant: a cancel or
 * refund that comes while its label is being made cancels the call (an attempt already sent
 * finishes first), and a label that comes back for an order cancelled meanwhile is neither
 * tracked nor told to the shop: the shipment is marked `cancelled_label_to_void`. A relabel
 * also clears only the mark it answers: a later change of the merchant keeps its own. Before
 * it, the returning label cleared the cancel's mark and was written to the cancelled order.
 * Checked where the cancel meets a relabel in flight (shop-changes.ts, `afterLabel`) and where
 * the relabel's label returns (relabel.ts), so only histories with a relabel carry its marker.
 * Fixtures: relabel-woocommerce-cancelled-while-labelling, relabel-label-bought-while-cancelled.
 * Retire: at the 1.0 cut (no published build ran without it); `relabelFromShop` keeps only the patched path.
 */
export const RELABEL_YIELDS_TO_SHOP = 'relabel-yields-to-shop';

/**
 * An attention mark ends when its condition ends, and a person can close the rest: the mark
 * (ShipmentShopChange) becomes `resolved` once a relabel took the merchant's change, once a
 * hold after the label is released, or once an operator ran `resolve` (the update
 * resolveAttention, recorded with who, when and the note). Before it, a mark once written stayed
 * for ever (the attention list, the gauge and its alert counted it). Checked where a mark would
 * be written `resolved` (published.ts) and where a release clears `held_in_shop`
 * (shop-changes.ts, `afterLabel`), so only histories where a mark ends carry its marker.
 * Fixtures: relabel-shopify-attention-closes, relabel-woocommerce-attention-closes, resolve-woocommerce-cancelled-after-label,
 * shop-changes-held-after-label-released.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const ATTENTION_CLOSES = 'attention-closes';

/**
 * A terminal answer (Delivered, Exception, Cancelled) told by a poller ends tracking even with
 * fewer checkpoints than the shipment knows (a courier that collapses its list on delivery, or a
 * list fetched again): before it, `isNews` refused it and, the shard having dropped the label,
 * nothing polled again until the tracking deadline. Checked in fleet tracking only where such an
 * answer arrives (`applyNews`), so other histories are unchanged. Fixture:
 * fleet-terminal-with-fewer-checkpoints.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const TERMINAL_ANSWER_ENDS_TRACKING = 'terminal-answer-ends-tracking';

/**
 * A shipment in fleet tracking told by the tracking reconciler that no live shard watches it
 * (`rejoinTracking`: its shard was terminated, reset, failed or deleted) joins again, and leaves
 * the shard it had if that one differs. Before it, a shipment kept its shard's id for its life
 * and waited for its tracking deadline. Checked only where that signal is handled, so only
 * histories with one carry its marker. Fixture: fleet-rejoined-after-shard-terminated.
 * Retire: at the 1.0 cut (no published build ran without it).
 */
export const TRACKING_REJOINS = 'tracking-rejoins';
