/**
 * From a request body to a runnable operation: JSON body, parse, validation against the
 * schema, the operation to run, variable coercion, limits and the requested cost. Each step's
 * failure is the GraphQL error a client would get (HTTP 200), or null for a body that is not
 * a GraphQL request at all (HTTP 400).
 */
import {
  getOperationAST,
  getVariableValues,
  Kind,
  OperationTypeNode,
  parse,
  validate,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from 'graphql';
import { parseJson } from '../local-http';
import { maxCostError, requestedCost, type CostInput } from './cost';
import { LIMITS } from './defaults';
import { depthError, inputSizeError } from './limits';

export interface GraphqlRequest {
  query: string;
  variables: Record<string, unknown>;
  operationName: string | null;
}

export type Prepared =
  /** Not runnable (syntax, validation, variables): nothing is charged. */
  | { kind: 'rejected'; errors: GraphQLFormattedError[] }
  /** Runnable but refused before running (paging arguments, cost cap, limits). */
  | { kind: 'refused'; errors: GraphQLFormattedError[]; requested: number; rootFields: string[] }
  | {
      kind: 'ready';
      document: DocumentNode;
      cost: CostInput;
      requested: number;
      rootFields: string[];
      isMutation: boolean;
      /** The variables as sent; execution coerces them itself. */
      rawVariables: Record<string, unknown>;
    };

export function readRequest(text: string): GraphqlRequest | null {
  const json = parseJson(text);
  if (!json.ok || json.value === null || typeof json.value !== 'object' || Array.isArray(json.value)) return null;
  const { query, variables, operationName } = json.value as Record<string, unknown>;
  if (typeof query !== 'string' || query.trim() === '') return null;
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return null;
  if (operationName != null && typeof operationName !== 'string') return null;
  return { query, variables: (variables ?? {}) as Record<string, unknown>, operationName: (operationName as string | null) ?? null };
}

/** graphql-js messages with a Shopify-like `extensions.code`, so clients can branch on a code. */
function codeOf(message: string): string {
  if (message.startsWith('Cannot query field')) return 'undefinedField';
  if (message.startsWith('Unknown argument')) return 'argumentNotAccepted';
  if (message.startsWith('Unknown type')) return 'undefinedType';
  if (/argument ".*" of type ".*" is required/.test(message)) return 'missingRequiredArguments';
  if (message.startsWith('Variable "')) return 'INVALID_VARIABLE';
  return 'GRAPHQL_VALIDATION_FAILED';
}

function formatted(errors: readonly GraphQLError[], code?: string): GraphQLFormattedError[] {
  return errors.map((e) => {
    const json = e.toJSON();
    return { ...json, extensions: { ...json.extensions, code: (e.extensions.code as string | undefined) ?? code ?? codeOf(e.message) } };
  });
}

export function prepare(schema: GraphQLSchema, request: GraphqlRequest): Prepared {
  let document: DocumentNode;
  try {
    document = parse(request.query, { maxTokens: LIMITS.maxTokens });
  } catch (e) {
    return { kind: 'rejected', errors: formatted([e as GraphQLError], 'GRAPHQL_PARSE_FAILED') };
  }
  const invalid = validate(schema, document);
  if (invalid.length > 0) return { kind: 'rejected', errors: formatted(invalid) };
  const operation = getOperationAST(document, request.operationName);
  if (!operation) {
    const message = request.operationName ? `No operation named "${request.operationName}"` : 'An operation name is required';
    return { kind: 'rejected', errors: [{ message, extensions: { code: 'OPERATION_NOT_FOUND' } }] };
  }
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables, { maxErrors: 10 });
  if (coerced.errors) return { kind: 'rejected', errors: formatted(coerced.errors, 'INVALID_VARIABLE') };
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const rootFields = operation.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [s.name.value] : []));
  const cost: CostInput = { schema, operation, fragments, variables: coerced.coerced };

  const limit = depthError(operation.selectionSet, fragments) ?? inputSizeError(document, request.variables);
  if (limit) return { kind: 'refused', errors: formatted([limit]), requested: 0, rootFields };
  const requested = requestedCost(cost);
  if (requested.errors.length > 0) return { kind: 'refused', errors: formatted(requested.errors), requested: requested.cost, rootFields };
  if (requested.cost > LIMITS.maxQueryCost) {
    return { kind: 'refused', errors: formatted([maxCostError(requested.cost)]), requested: requested.cost, rootFields };
  }
  const isMutation = operation.operation === OperationTypeNode.MUTATION;
  return { kind: 'ready', document, cost, requested: requested.cost, rootFields, isMutation, rawVariables: request.variables };
}
