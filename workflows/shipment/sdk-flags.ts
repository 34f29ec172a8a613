/**
 * A workaround for where the SDK records one of its flags. Whether a Temporal cancellation
 * reaches a scope opened inside a non-cancellable one is an SDK flag
 * (`NonCancellableScopesAreShieldedFromPropagation`), recorded on the workflow task that first
 * consults it; a replay knows it from that task on. A cancelled shipment first consulted it when
 * its hand-over opened the shop delivery's scope, after leaving the shard (a local activity). Some
 * runs queried meanwhile completed the cancellation's task at the local activity's result and told
 * the shop in the next task, which recorded the flag; a replay takes that result, and tells the
 * shop, in the cancellation's task, where the flag is not known yet: the delivery was cancelled
 * (an unhandled CancelledFailure), so the run did not replay and a query of it once closed failed
 * (workflows/shipment/shipment.test.ts). Consulted in the run's first task, the flag is known to
 * every task after it.
 */
import { CancellationScope } from '@temporalio/workflow';

/** Consults the flag now; issues no command (the replay of a run that did not consult it here is unchanged). */
export function consultShieldingFlag(): void {
  const shielding = new CancellationScope({ cancellable: false });
  shielding.cancel();
  // Opening a cancellable scope in a non-cancellable one asked to cancel is what makes the SDK consult it.
  void new CancellationScope({ cancellable: true, parent: shielding });
}
