/**
 * The record of a person closing what an ended shipment left for a person (an exception handled
 * with the courier, a label made by other means): its history holds who, when and the note, and
 * the Web UI shows it. An update cannot reach a finished shipment, so the record is its own
 * workflow, one per shipment (ATTENTION_RESOLUTION_ID_PREFIX + the shipment's id): a second
 * start is refused. It completes on its first task.
 */
import type { EndedShipmentResolution } from '../workflow-definitions/shipment';

export async function attentionResolutionWorkflow(resolution: EndedShipmentResolution): Promise<EndedShipmentResolution> {
  return resolution;
}
