/**
 * `npm run cli -- resubmit <shop> <orderId> --from-shop`: after the label, a new label to the order as
 * the shop has it now (the merchant corrected the address or lines), taken from the shipment's
 * own reading of the shop (state.shopOrder.offer) and validated here as an import's label request.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { relabelFromShopUpdate, stateQuery, type RelabelResult } from '../../workflow-definitions/shipment';
import { validateLabelRequest } from '../../order-import/record';
import { connectTemporal, EXIT, println, type ExitCode, type Io } from '../cli-support';
import { errorLines } from './label-error';
import { findRunningShipment } from './shipment-lookup';

export interface FromShopOptions {
  shop: string;
  orderId: string;
  parcel?: string;
  reason?: string;
  json: boolean;
}

export async function resubmitFromShop(options: FromShopOptions, io: Io): Promise<ExitCode> {
  const { shop, orderId } = options;
  const out = (human: string, json: unknown) => println(io.stdout, options.json ? JSON.stringify(json, null, 2) : human);
  const session = await connectTemporal(io.env);
  try {
    const { handle } = await findRunningShipment(session.client, shop, orderId, options.parcel, 'nothing to relabel');
    // The shop's request as the shipment holds it, checked as an import's would be; the workflow decides the rest.
    const shopOrder = (await handle.query(stateQuery)).shopOrder;
    if (shopOrder?.offer) {
      const validated = validateLabelRequest(shopOrder.offer);
      if (!validated.ok) {
        const lines = [
          "The shop's label request is not valid; nothing was sent:",
          ...validated.problems.map((p) => `  ${p.field}: ${p.message}`),
        ];
        out(lines.join('\n'), { problems: validated.problems });
        return EXIT.rejected;
      }
    }
    let result: RelabelResult;
    try {
      result = await handle.executeUpdate(relabelFromShopUpdate, {
        args: [{ modifiedAt: shopOrder?.modifiedAt ?? '', ...(options.reason === undefined ? {} : { reason: options.reason }) }],
      });
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        const message = err.cause?.message ?? err.message;
        out(`The workflow refused the relabel: ${message}`, { rejected: message });
        return EXIT.rejected;
      }
      throw err;
    }
    const old = `${result.replaced.labelId} (tracking ${result.replaced.trackingNumber ?? '-'})`;
    const lines = result.labelCreated
      ? [
          `Label created: ${result.labelId} (revision ${result.revision}, key ${result.idempotencyKey ?? '-'}), tracking ${result.trackingNumber ?? 'to follow'}.`,
          `It replaces ${old}: that label is not voided and no longer tracked; stop or recall its parcel with the courier.`,
          'The shop is told the new tracking number.',
        ]
      : [`The new label was refused (revision ${result.revision}); the shipment still tracks ${old}.`, ...errorLines(result.error)];
    out(lines.join('\n'), { result });
    return result.labelCreated ? EXIT.ok : EXIT.rejected;
  } finally {
    await session.close();
  }
}
