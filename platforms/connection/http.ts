/**
 * One HTTP call to a shop platform, bounded in time and size, over one keep-alive agent. It
 * resolves for every answer and every network failure; it rejects only when the caller's signal
 * aborts. Both platform clients go through it (Shopify's via the admin client's customFetchApi).
 */
import { Agent, request, type Dispatcher } from 'undici';
import { callSpan, serverOf } from '../../tracing/spans';

/** Answers of the calls the connectors make are a few kB; anything near this is not one of them. */
export const MAX_ANSWER_BYTES = 2 * 1024 * 1024;

export interface PlatformRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: URL;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Names the call's span in an order's trace (tracing/). */
  platform: 'shopify' | 'woocommerce';
}

export type PlatformResponse =
  { kind: 'answer'; status: number; headers: Record<string, string>; text: string } | { kind: 'network'; message: string };

/** Connections the worker opens to one store (one origin). */
export const PLATFORM_CONNECTIONS = 8;

let sharedAgent: Agent | null = null;

function agent(): Agent {
  sharedAgent ??= new Agent({ connections: PLATFORM_CONNECTIONS, connect: { timeout: 10_000 } });
  return sharedAgent;
}

export async function closePlatformAgent(): Promise<void> {
  const a = sharedAgent;
  sharedAgent = null;
  if (a) await a.close();
}

export function platformRequest(call: PlatformRequest): Promise<PlatformResponse> {
  const attributes = {
    'shop.platform': call.platform,
    'http.request.method': call.method,
    ...serverOf(call.url),
  };
  return callSpan(`${call.platform} ${call.method}`, attributes, async (span) => {
    const response = await send(call);
    if (response.kind === 'answer') span.answered(response.status);
    return response;
  });
}

async function send(call: PlatformRequest): Promise<PlatformResponse> {
  call.signal?.throwIfAborted();
  const timeout = AbortSignal.timeout(call.timeoutMs);
  const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
  try {
    const response = await request(call.url, {
      method: call.method,
      dispatcher: agent(),
      headers: call.headers,
      body: call.body,
      signal,
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
    });
    const text = await readBounded(response.body);
    if (text === null) return { kind: 'network', message: `answer larger than ${MAX_ANSWER_BYTES} bytes (HTTP ${response.statusCode})` };
    return { kind: 'answer', status: response.statusCode, headers: flatHeaders(response.headers), text };
  } catch (cause) {
    if (call.signal?.aborted) throw call.signal.reason;
    if (timeout.aborted) return { kind: 'network', message: `no answer within ${call.timeoutMs} ms` };
    return { kind: 'network', message: `network failure: ${describeNetworkError(cause)}` };
  }
}

async function readBounded(body: Dispatcher.ResponseData['body']): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    size += buffer.length;
    if (size > MAX_ANSWER_BYTES) return null; // leaving the loop destroys the rest
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** A network error as one line: its code and message (happy-eyeballs AggregateErrors have an empty one). */
export function describeNetworkError(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as { code?: unknown }).code;
  const inner =
    cause instanceof AggregateError && cause.message === '' ? cause.errors.find((e): e is Error => e instanceof Error) : undefined;
  const message = cause.message || inner?.message || cause.name;
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

/** A body as one short line for an operator: control characters gone, at most 300 characters. */
export function excerpt(text: string): string {
  const line = text
    // eslint-disable-next-line no-control-regex -- control characters are what it removes
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** An answer's body as JSON, or undefined when it is not JSON (the schema that reads it then says what is wrong). */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
