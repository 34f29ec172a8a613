/**
 * The patch ids of the shipment workflow. Each names a change of behaviour that workflows
 * recorded before it must not see; `patched(id)` keeps them on their old path when they replay.
 * Where each is checked, and when it can be retired, is said beside it.
 */

/**
 * Tracking wakes the workflow only when the shipment changes, instead of a timer and an activity
 * per poll. New workflows also make the first attempt of label creation and order read inside
 * their first workflow task. Checked twice, with two meanings:
 * - once per run, at its start (`ShipmentRun.start`): how this run calls the API;
 * - at every poll of the timer loop (`ShipmentRun.ship`): a workflow still polling on a timer switches to
 *   change-driven tracking at its next poll (fixture `migrated-timer-loop-to-change-driven`).
 * Retire (see `legacy-tracking.ts`) once no workflow started before it is open.
 */
export const CHANGE_DRIVEN_TRACKING = 'change-driven-tracking';

/**
 * Shipments started with shop sync tell the shop every change, as numbered events delivered in
 * order by a coroutine beside the shipment, and complete once the shop has them. Workflows
 * started before it send nothing and finish as they did. Checked once per run, at its start.
 */
export const SHOP_SYNC = 'shop-sync';

/**
 * A first delivery attempt that fails (its few seconds ran out on a slow shop, or an unexpected
 * error) goes on as the regular delivery activity; before this, any such failure stopped
 * delivery as `expired`. Checked only when a first attempt fails, so other histories are unchanged.
 */
export const FIRST_DELIVERY_HANDS_OVER = 'first-delivery-hands-over';

/**
 * The shop delivery coroutine runs outside the workflow's cancellation: a shipment cancelled
 * from the Web UI (`temporal workflow cancel`) still tells the shop, in order, and completes.
 * Before it, the cancellation reached the coroutine: waiting, it threw unhandled and failed every
 * workflow task; mid-call, it cancelled the call and the shipment then waited for the shop
 * forever. Checked once per run, at its start and before the policy is read: a marker after that
 * local activity could fall in the next workflow task on the original run (the activity outlasted
 * a task's heartbeat) yet in the first on replay, which fails the replay.
 */
export const SHOP_DELIVERY_OUTLIVES_CANCEL = 'shop-delivery-outlives-cancel';
