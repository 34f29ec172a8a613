/** A refused label as `resubmit` prints it (a corrected file's, or a relabel from the shop's data). */
import type { RecordedError } from '../../workflow-definitions/shipment';

/** Why a label was refused, as the answer's lines: the kind and the carrier's wording, then each field named. */
export function errorLines(error: RecordedError | null): string[] {
  if (!error) return [];
  const why = error.courierMessage ? `${error.courierCode}: ${error.courierMessage}` : error.message;
  return [`  ${error.kind}: ${why}`, ...(error.fields ?? []).map((f) => `  ${f.field}: ${f.message}`)];
}
