/**
 * The executable schema: the SDL built by graphql-js, with Shopify's custom scalars checked on
 * input (an unreadable DateTime or URL is a GraphQL error, as on Shopify).
 */
import { buildSchema, GraphQLError, Kind, type GraphQLScalarType, type GraphQLSchema, type ValueNode } from 'graphql';
import { isoSeconds } from './model';
import { SDL } from './schema-sdl';

function parseDateTime(value: unknown): string {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(Date.parse(value)))
    return isoSeconds(Date.parse(value));
  throw new GraphQLError(`Invalid DateTime: ${JSON.stringify(value)} is not an ISO 8601 date-time.`);
}

function parseUrl(value: unknown): string {
  if (typeof value === 'string' && value.length <= 2048) {
    try {
      const url = new URL(value);
      if (url.protocol === 'http:' || url.protocol === 'https:') return value;
    } catch {
      // falls through to the error below
    }
  }
  throw new GraphQLError(`Invalid URL: ${JSON.stringify(value)} is not an absolute http(s) URL.`);
}

function checkInput(schema: GraphQLSchema, name: string, parse: (value: unknown) => unknown): void {
  const scalar = schema.getType(name) as GraphQLScalarType;
  scalar.parseValue = parse;
  scalar.parseLiteral = (ast: ValueNode) => parse(ast.kind === Kind.STRING ? ast.value : undefined);
}

export function buildShopifySchema(): GraphQLSchema {
  const schema = buildSchema(SDL);
  checkInput(schema, 'DateTime', parseDateTime);
  checkInput(schema, 'URL', parseUrl);
  return schema;
}

/** One schema for every fake in the process: building it is the slow part of a start. */
export const SCHEMA = buildShopifySchema();

/** Root field names (Query and Mutation): what failNext entries and stats.byOperation name. */
export const ROOT_FIELD_NAMES: readonly string[] = [
  ...Object.keys(SCHEMA.getQueryType()!.getFields()),
  ...Object.keys(SCHEMA.getMutationType()!.getFields()),
];
