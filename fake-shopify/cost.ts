/**
 * Shopify's query cost, computed from the document: scalars and enums 0, an object 1, a
 * connection 2 + first × (cost of one node), a list with `first` the same, a mutation 10 plus
 * its payload. Walked once without data (requested cost, before execution) and once over the
 * answer (actual cost: the nodes really returned), so the refund is requested − actual.
 */
import {
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getNullableType,
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  isLeafType,
  isListType,
  Kind,
  OperationTypeNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { LIMITS } from './defaults';

type Obj = Record<string, unknown>;

export interface CostInput {
  schema: GraphQLSchema;
  operation: OperationDefinitionNode;
  fragments: Map<string, FragmentDefinitionNode>;
  /** Coerced variable values. */
  variables: Record<string, unknown>;
}

interface Walk extends CostInput {
  errors: GraphQLError[];
}

const MUTATION_BASE = 10;

function included(w: Walk, node: SelectionNode): boolean {
  if (getDirectiveValues(GraphQLSkipDirective, node, w.variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, w.variables)?.if !== false;
}

const responseKey = (node: FieldNode): string => node.alias?.value ?? node.name.value;

/** The fields of a selection set, fragments flattened, each with the type it is selected on. */
function collect(w: Walk, set: SelectionSetNode, parent: GraphQLCompositeType): Array<{ node: FieldNode; parent: GraphQLCompositeType }> {
  const out: Array<{ node: FieldNode; parent: GraphQLCompositeType }> = [];
  for (const sel of set.selections) {
    if (!included(w, sel)) continue;
    if (sel.kind === Kind.FIELD) out.push({ node: sel, parent });
    else if (sel.kind === Kind.INLINE_FRAGMENT) {
      const type = sel.typeCondition ? (w.schema.getType(sel.typeCondition.name.value) as GraphQLCompositeType) : parent;
      out.push(...collect(w, sel.selectionSet, type));
    } else {
      const fragment = w.fragments.get(sel.name.value);
      if (fragment)
        out.push(...collect(w, fragment.selectionSet, w.schema.getType(fragment.typeCondition.name.value) as GraphQLCompositeType));
    }
  }
  return out;
}

function selectionCost(w: Walk, set: SelectionSetNode, parent: GraphQLCompositeType, data: Obj | undefined): number {
  return collect(w, set, parent).reduce((sum, f) => sum + fieldCost(w, f.node, f.parent, data), 0);
}

/** `first`/`last` within 0..250; records the error and answers false otherwise. */
function pageSizeOk(w: Walk, node: FieldNode, size: number): boolean {
  if (size >= 0 && size <= LIMITS.maxPageSize) return true;
  const message = `Argument 'first'/'last' on field '${node.name.value}' must be between 0 and ${LIMITS.maxPageSize}, got ${size}.`;
  w.errors.push(new GraphQLError(message, { nodes: node, extensions: { code: 'BAD_REQUEST' } }));
  return false;
}

function fieldCost(w: Walk, node: FieldNode, parent: GraphQLCompositeType, data: Obj | undefined): number {
  if (node.name.value.startsWith('__') || !('getFields' in parent)) return 0;
  const def = parent.getFields()[node.name.value];
  if (!def) return 0;
  const named = getNamedType(def.type);
  if (isLeafType(named) || !node.selectionSet) return 0;
  const value = data === undefined ? undefined : data[responseKey(node)];
  if (data !== undefined && value == null) return 0;
  const args = getArgumentValues(def, node, w.variables);
  const type = named as GraphQLCompositeType;
  if (named.name.endsWith('Connection')) return connectionCost(w, node, named as GraphQLObjectType, args, value as Obj | undefined);
  if (!isListType(getNullableType(def.type))) return 1 + selectionCost(w, node.selectionSet, type, value as Obj | undefined);
  const items = value as Obj[] | undefined;
  if (typeof args.first === 'number') {
    if (!pageSizeOk(w, node, args.first)) return 0;
    return (
      2 +
      (items === undefined
        ? args.first * (1 + selectionCost(w, node.selectionSet, type, undefined))
        : listCost(w, node.selectionSet, type, items))
    );
  }
  // A list without `first` costs as one of its items: the fake's guess, Shopify does not say.
  const per = items === undefined ? [undefined] : items.length > 0 ? items : [undefined];
  return 1 + Math.max(...per.map((item) => selectionCost(w, node.selectionSet!, type, item)));
}

/** Requested: the cost of one item. Actual: the sum over the items returned. */
function listCost(w: Walk, set: SelectionSetNode, type: GraphQLCompositeType, items: Obj[] | undefined): number {
  if (items === undefined) return 1 + selectionCost(w, set, type, undefined);
  return items.reduce((sum, item) => sum + 1 + selectionCost(w, set, type, item), 0);
}

function connectionCost(w: Walk, node: FieldNode, conn: GraphQLObjectType, args: Obj, value: Obj | undefined): number {
  const size = typeof args.first === 'number' ? args.first : typeof args.last === 'number' ? args.last : null;
  if (size === null) {
    w.errors.push(new GraphQLError('you must provide one of first or last', { nodes: node, extensions: { code: 'BAD_REQUEST' } }));
    return 0;
  }
  if (!pageSizeOk(w, node, size)) return 0;
  const nodeType = getNamedType(conn.getFields().nodes!.type) as GraphQLObjectType;
  const edgeType = getNamedType(conn.getFields().edges!.type) as GraphQLObjectType;
  let edges = 0;
  let nodes = 0;
  for (const sub of collect(w, node.selectionSet!, conn)) {
    const list = value?.[responseKey(sub.node)] as Obj[] | undefined;
    if (sub.node.name.value === 'nodes') nodes += listCost(w, sub.node.selectionSet!, nodeType, list);
    if (sub.node.name.value !== 'edges') continue;
    for (const e of collect(w, sub.node.selectionSet!, edgeType)) {
      if (e.node.name.value !== 'node') continue;
      const items = list?.map((edge) => edge[responseKey(e.node)] as Obj);
      edges += listCost(w, e.node.selectionSet!, nodeType, items);
    }
  }
  return value === undefined ? 2 + size * Math.max(1, edges, nodes) : 2 + Math.max(edges, nodes);
}

function operationCost(w: Walk, data: Obj | undefined): number {
  const { operation, schema } = w;
  const root = operation.operation === OperationTypeNode.MUTATION ? schema.getMutationType()! : schema.getQueryType()!;
  if (operation.operation !== OperationTypeNode.MUTATION) return selectionCost(w, operation.selectionSet, root, data);
  return collect(w, operation.selectionSet, root).reduce((sum, f) => {
    const def = root.getFields()[f.node.name.value];
    if (!def || !f.node.selectionSet) return sum;
    const value = data?.[responseKey(f.node)] as Obj | null | undefined;
    const payload =
      data !== undefined && value == null
        ? 0
        : selectionCost(w, f.node.selectionSet, getNamedType(def.type) as GraphQLObjectType, value ?? undefined);
    return sum + MUTATION_BASE + payload;
  }, 0);
}

/** The requested cost, with the errors that stop a query before it runs (paging arguments). */
export function requestedCost(input: CostInput): { cost: number; errors: GraphQLError[] } {
  const w: Walk = { ...input, errors: [] };
  const cost = operationCost(w, undefined);
  return { cost, errors: w.errors };
}

/** The cost of what the answer holds; never above the requested cost. */
export function actualCost(input: CostInput, data: Obj | null | undefined): number {
  return operationCost({ ...input, errors: [] }, data ?? {});
}

export function maxCostError(cost: number): GraphQLError {
  const message = `Query cost is ${cost}, which exceeds the single query max cost limit (${LIMITS.maxQueryCost}).`;
  return new GraphQLError(message, { extensions: { code: 'MAX_COST_EXCEEDED', cost, maxCost: LIMITS.maxQueryCost } });
}
