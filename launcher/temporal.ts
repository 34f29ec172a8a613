/** Temporal server arguments the launchers share. */
import { TypedSearchAttributes } from '@temporalio/common';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflow-definitions/shipment';

/** `--search-attribute Name=Type` for each of this project's search attributes (start-dev). */
export function searchAttributeArgs(): string[] {
  return SEARCH_ATTRIBUTE_KEYS.flatMap((key) => ['--search-attribute', `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`]);
}
