/**
 * The project's search attributes (`SEARCH_ATTRIBUTE_KEYS`) on a running Temporal server: what is
 * missing gets registered, a type mismatch is refused. Used by `npm run dev` (start-dev skips
 * attributes on an existing database) and `npm run cluster` (a fresh SQL cluster has none).
 */
import type { Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflow-definitions/shipment';

/**
 * Registers the attributes `namespace` lacks and returns their names (empty when none were
 * missing). Throws naming each attribute whose server type differs from the code's;
 * `mismatchHint` says what to do about it.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string, mismatchHint: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const existing = customAttributes ?? {};
  const missing: Record<string, number> = {};
  const mismatched: string[] = [];
  for (const key of SEARCH_ATTRIBUTE_KEYS) {
    const wanted = encodeSearchAttributeIndexedValueType(key.type);
    if (wanted === undefined) throw new Error(`Unknown search attribute type ${key.type} for ${key.name}`);
    const have = existing[key.name];
    if (have === undefined) missing[key.name] = wanted;
    else if (have !== wanted) mismatched.push(`${key.name} (code: ${key.type}, server: type ${have})`);
  }
  if (mismatched.length > 0) {
    throw new Error(
      `Search attributes of namespace ${namespace} have a different type than workflow-definitions/shipment.ts: ${mismatched.join(', ')}. ${mismatchHint}`,
    );
  }
  const names = Object.keys(missing);
  if (names.length > 0) await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  return names;
}
