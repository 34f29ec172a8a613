/**
 * Step 1 for shipments a shop pull started: the label as label.ts makes it, heeding the
 * merchant's changes (shop-changes.ts). Before each request a change is settled; a change that
 * comes while the request is out cancels it (an attempt already sent finishes first, so a label
 * made meanwhile is known and judged as after the label). The attempt itself checks the order
 * with the shop right before it is sent (shop-import/label-check.ts): a change found there comes
 * back unsent and is settled like a pulled one. Its own file: shipments started without the
 * order's facts keep the unchanged loop in `ShipmentRun.ship`.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { ShipmentOutcome } from '../../workflow-definitions/shipment';
import { shippingErrorOf, shopChangeOf } from './failures';
import * as label from './label';
import type { ShipmentRun } from './run';
import type { ShopChanges } from './shop-changes';

export async function createLabelHeedingShop(run: ShipmentRun, shop: ShopChanges): Promise<ShipmentOutcome | undefined> {
  while (run.state.labelId === null) {
    const ended = await shop.settleBeforeLabel();
    if (ended) return ended;
    const request = label.nextRequest(run);
    const reading = shop.knownReading();
    if (reading) request.input.shopCheck = reading;
    const scope = new CancellationScope();
    shop.labelScope = scope;
    try {
      label.created(run, await scope.run(() => run.callApi('createLabel', request.summary, request.input)));
    } catch (err) {
      const found = shopChangeOf(err);
      if (found) {
        shop.takeFoundBeforeLabel(found);
        continue;
      }
      // The change cancelled the call: it ends cancelled, or, when an attempt was out, with that
      // attempt's failure (the server retries nothing after a cancel request). No label either way.
      if (shop.interruptedLabel() && (isCancellation(err) || shippingErrorOf(err)?.retryable === true)) continue;
      label.rejected(run, err);
      const ended = await label.awaitCorrection(run, shop.changed);
      if (ended) return ended;
    } finally {
      shop.labelScope = null;
    }
  }
  shop.settleAfterLabel();
  return undefined;
}
