/**
 * One Admin API GraphQL request from bytes to answer: authentication, the document checks,
 * the injected faults, the cost bucket, execution and the refund, then what the client sees
 * (or does not: a dropped or hung connection).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { execute, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import { header, readBody } from '../local-http';
import { BAD_REQUEST, SERVER_ERROR, throttled, TOO_LARGE, UNAVAILABLE, type CostExtension, type Reply } from './answers';
import { UNAUTHORIZED } from './auth';
import { actualCost } from './cost';
import { LIMITS } from './defaults';
import type { After } from './faults';
import { prepare, readRequest, type Prepared } from './operation';
import { ROOT_VALUE, type ExecContext } from './resolvers';
import { SCHEMA } from './schema';
import type { ShopifyState } from './state';
import { bump } from './stats';

export interface ShopifyServer {
  state: ShopifyState;
  send: (res: ServerResponse, reply: Reply) => void;
  /** Injected latency; closing the server cuts it short. */
  delay: (ms: number) => Promise<void>;
}

type Ready = Extract<Prepared, { kind: 'ready' }>;

function cost(state: ShopifyState, requested: number, actual: number | null): { cost: CostExtension } {
  return { cost: { requestedQueryCost: requested, actualQueryCost: actual, throttleStatus: state.bucket.status() } };
}

/** Cuts the connection without a byte of answer: the client sees a reset or "socket hang up". */
export function drop(res: ServerResponse): void {
  res.socket?.destroy();
}

/**
 * Counts a request and reads its bounded body; null when it was already answered: the store is
 * down (the connection is cut) or the body is too large (413).
 */
export async function admitted({ state, send }: ShopifyServer, req: IncomingMessage, res: ServerResponse): Promise<Buffer | null> {
  state.stats.requests++;
  if (state.faults.isDown()) {
    state.stats.refusedWhileDown++;
    drop(res);
    return null;
  }
  const raw = await readBody(req, LIMITS.maxBodyBytes);
  if (raw === null) send(res, TOO_LARGE);
  return raw;
}

export async function serveGraphql(server: ShopifyServer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { state, send } = server;
  const raw = await admitted(server, req, res);
  if (raw === null) return;
  if (!state.tokens.valid(header(req, 'x-shopify-access-token'))) {
    state.stats.unauthorized++;
    return send(res, UNAUTHORIZED);
  }
  const request = readRequest(raw.toString('utf8'));
  if (!request) return send(res, BAD_REQUEST);
  const prepared = prepare(SCHEMA, request);
  if (prepared.kind === 'rejected') {
    state.stats.graphqlErrors++;
    return send(res, { status: 200, body: { errors: prepared.errors } });
  }
  for (const name of prepared.rootFields) bump(state.stats.byOperation, name);
  if (prepared.kind === 'refused') {
    state.stats.graphqlErrors++;
    return send(res, { status: 200, body: { errors: prepared.errors, extensions: cost(state, prepared.requested, null) } });
  }
  bump(state.stats.byOperationName, prepared.cost.operation.name?.value ?? '(anonymous)');
  return run(server, res, prepared);
}

function sendThrottled(server: ShopifyServer, res: ServerResponse, requested: number): void {
  const { state } = server;
  state.stats.throttled++;
  if (state.throttleAs === 'http-429') state.stats.http429++;
  server.send(res, throttled(state.throttleAs, requested, state.bucket.status()));
}

async function run(server: ShopifyServer, res: ServerResponse, prepared: Ready): Promise<void> {
  const { state, send } = server;
  const queued = state.faults.takeQueued(prepared.rootFields, prepared.rawVariables);
  const before = state.faults.before(queued);
  if (before.kind === 'drop') {
    state.stats.droppedBeforeCommit++;
    return drop(res);
  }
  if (before.kind === '500' || before.kind === '503') {
    state.stats[before.kind === '500' ? 'serverErrors' : 'unavailable']++;
    return send(res, before.kind === '500' ? SERVER_ERROR : UNAVAILABLE);
  }
  if (before.kind === 'throttled' || !state.bucket.take(prepared.requested)) return sendThrottled(server, res, prepared.requested);

  const result = await executeOperation(state, prepared);
  const actual = actualCost(prepared.cost, result.data);
  state.bucket.refund(prepared.requested - actual);
  state.stats.pointsSpent += actual;
  if (result.errors) state.stats.graphqlErrors++;
  const body = { ...formatResult(result), extensions: cost(state, prepared.requested, actual) };
  return finish(server, res, state.faults.after(queued, prepared.isMutation), body);
}

async function executeOperation(state: ShopifyState, prepared: Ready): Promise<ExecutionResult> {
  const contextValue: ExecContext = {
    store: state.store,
    shopName: state.shopName,
    applied: (name) => bump(state.stats.mutationsApplied, name),
  };
  return execute({
    schema: SCHEMA,
    document: prepared.document,
    rootValue: ROOT_VALUE,
    contextValue,
    variableValues: prepared.rawVariables,
    operationName: prepared.cost.operation.name?.value,
  });
}

function formatResult(result: ExecutionResult): { data?: unknown; errors?: GraphQLFormattedError[] } {
  return { ...(result.errors ? { errors: result.errors.map((e) => e.toJSON()) } : {}), data: result.data ?? null };
}

async function finish(server: ShopifyServer, res: ServerResponse, after: After, body: unknown): Promise<void> {
  const { state } = server;
  if (after.kind === 'hang') {
    state.stats.hung++;
    return; // run, never answered: the socket stays open until the client gives up or the fake closes
  }
  if (after.kind === 'drop') {
    state.stats.dropped++;
    return drop(res);
  }
  if (after.delayMs > 0) await server.delay(after.delayMs);
  server.send(res, { status: 200, body });
}
