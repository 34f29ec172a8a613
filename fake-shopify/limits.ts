/**
 * Checks that stop a document before it is costed or run: nesting depth (the fake's guard)
 * and input arrays over 250 items (Shopify's limit), in literals and in variables alike.
 */
import { GraphQLError, Kind, visit, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import { LIMITS } from './defaults';

/** The deepest field nesting of a selection set, fragments followed (validation rules out cycles). */
function depthOf(set: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, seen: number): number {
  if (seen > LIMITS.maxDepth) return seen;
  let deepest = seen;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (sel.selectionSet) deepest = Math.max(deepest, depthOf(sel.selectionSet, fragments, seen + 1));
      else deepest = Math.max(deepest, seen + 1);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) deepest = Math.max(deepest, depthOf(sel.selectionSet, fragments, seen));
    else {
      const fragment = fragments.get(sel.name.value);
      if (fragment) deepest = Math.max(deepest, depthOf(fragment.selectionSet, fragments, seen));
    }
  }
  return deepest;
}

export function depthError(set: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>): GraphQLError | null {
  const depth = depthOf(set, fragments, 0);
  if (depth <= LIMITS.maxDepth) return null;
  return new GraphQLError(`Query has a depth of more than ${LIMITS.maxDepth}, which exceeds the max depth of ${LIMITS.maxDepth}.`, {
    extensions: { code: 'MAX_DEPTH_EXCEEDED', maxDepth: LIMITS.maxDepth },
  });
}

function largestArray(value: unknown, depth = 0): number {
  if (depth > 20 || value === null || typeof value !== 'object') return 0;
  const items = Array.isArray(value) ? value : Object.values(value);
  const own = Array.isArray(value) ? value.length : 0;
  return items.reduce((max: number, item) => Math.max(max, largestArray(item, depth + 1)), own);
}

export function inputSizeError(document: DocumentNode, variables: unknown): GraphQLError | null {
  let largest = largestArray(variables);
  visit(document, {
    ListValue(node) {
      largest = Math.max(largest, node.values.length);
    },
  });
  if (largest <= LIMITS.maxInputArray) return null;
  return new GraphQLError(`The input array size of ${largest} is greater than the maximum allowed of ${LIMITS.maxInputArray}.`, {
    extensions: { code: 'MAX_INPUT_SIZE_EXCEEDED' },
  });
}
