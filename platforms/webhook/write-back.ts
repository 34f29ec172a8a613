/**
 * The default shop connector: one shipment event POSTed as a signed webhook following
 * Standard Webhooks v1 (https://www.standardwebhooks.com), so a shop can verify it with any
 * Standard Webhooks library (or svix, which wraps it).
 *
 * Signing uses the `standardwebhooks` package, the reference implementation kept by the
 * spec's authors, rather than hand-rolled HMAC code: receivers verify with the same library,
 * so sender and receiver cannot disagree on the signed content.
 *
 * deliverWebhook makes one attempt and classifies the answer; retrying (backoff, the delivery
 * window, ordering) is the caller's job. Secrets never appear in results or errors.
 */
import { Agent, request, type Dispatcher } from 'undici';
import { callSpan, serverOf } from '../../tracing/spans';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { fieldProblems } from '../../shipping-api/contract';
import { clampWaitMs, readRetryAfterMs } from '../../shipping-api/retry-after';
import { ShipmentEvent } from '../../domain/events';
import { describeNetworkError } from '../connection/http';

export const USER_AGENT = 'shipping-sync-worker/0.1 (shop-sync; Standard Webhooks v1)';
export const WEBHOOK_DEFAULTS = {
  timeoutMs: 15_000,
  /** Used when a 429/503 has no Retry-After, or one that is neither seconds nor an HTTP-date. */
  retryAfterMs: 30_000,
  /** Retry-After is clamped to [min, max]: 0 would spin, a month would stall the order. */
  minRetryAfterMs: 1_000,
  maxRetryAfterMs: 24 * 3_600_000,
  /** Bytes of a rejecting answer's body kept for the operator; characters kept after decoding. */
  excerptBytes: 2_048,
  excerptChars: 500,
} as const;

// ---------------------------------------------------------------- secrets

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
export const SECRET_FORMAT_MESSAGE = 'must look like whsec_<base64>';

/**
 * A signing secret: `whsec_` + standard base64 (padded) of 24 to 64 random bytes, the range the
 * Standard Webhooks spec recommends. Messages never include the value.
 */
export const WebhookSecret = z.string({ error: `${SECRET_FORMAT_MESSAGE} (got a non-string)` }).superRefine((secret, ctx) => {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : '';
  if (encoded === '' || !BASE64.test(encoded)) {
    ctx.addIssue({ code: 'custom', message: SECRET_FORMAT_MESSAGE });
    return;
  }
  const bytes = Buffer.from(encoded, 'base64').length;
  if (bytes < 24 || bytes > 64) {
    ctx.addIssue({ code: 'custom', message: `${SECRET_FORMAT_MESSAGE} of 24 to 64 random bytes (it decodes to ${bytes})` });
  }
});
/** Several secrets are valid at once during a rotation: the message is signed with each. */
export const WebhookSecrets = z.array(WebhookSecret).min(1, 'needs at least one secret').max(10, 'at most 10 secrets');

/** A bad argument of deliverWebhook or signWebhook: a bug or bad configuration, never retried. */
export class WebhookArgumentError extends Error {
  override readonly name = 'WebhookArgumentError';
}

function checkSecrets(secrets: readonly string[]): string[] {
  const parsed = WebhookSecrets.safeParse(secrets);
  if (parsed.success) return parsed.data;
  const problems = fieldProblems(parsed.error, ['secrets']);
  throw new WebhookArgumentError(problems.map((p) => `${p.field}: ${p.message}`).join('; '));
}

// ---------------------------------------------------------------- signing

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The three Standard Webhooks headers for `body`, signed with every secret:
 * `webhook-signature` = "v1,<sig1> v1,<sig2>", each over "<id>.<timestamp>.<body>".
 */
export function signWebhook({
  id,
  timestampSeconds,
  body,
  secrets,
}: {
  id: string;
  timestampSeconds: number;
  body: string;
  secrets: readonly string[];
}): SignedHeaders {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0)
    throw new WebhookArgumentError('timestampSeconds: must be an integer >= 0');
  const valid = checkSecrets(secrets);
  const at = new Date(timestampSeconds * 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': valid.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  };
}

// ---------------------------------------------------------------- classification

export type DeliveryResult =
  /** Any 2xx: the shop has the event. */
  | { kind: 'delivered'; status: number }
  /** 429 or 503: wait retryAfterMs (from Retry-After, else the default), then send again. */
  | { kind: 'retry_after'; status: number; retryAfterMs: number }
  /** Other 5xx, 408, network failures and timeouts: back off exponentially and send again. */
  | { kind: 'retry'; status: number | null; message: string }
  /** 410: the endpoint is gone for good; stop sending to it. */
  | { kind: 'gone'; status: 410 }
  /** Any other status (4xx, and 3xx since redirects are not followed): sending again will not help. */
  | { kind: 'rejected'; status: number; bodyExcerpt: string };

/**
 * Retry-After as milliseconds: delay-seconds or an HTTP-date, clamped to
 * [minRetryAfterMs, maxRetryAfterMs]; missing or unparseable → retryAfterMs (30 s).
 */
export function parseRetryAfterMs(header: string | string[] | undefined, nowMs: number): number {
  const bounds = { minMs: WEBHOOK_DEFAULTS.minRetryAfterMs, maxMs: WEBHOOK_DEFAULTS.maxRetryAfterMs };
  return clampWaitMs(readRetryAfterMs(header, nowMs)?.ms, bounds, WEBHOOK_DEFAULTS.retryAfterMs);
}

/** The one place an HTTP answer becomes a DeliveryResult. */
export function classifyResponse(
  status: number,
  retryAfter: string | string[] | undefined,
  bodyExcerpt: string,
  nowMs: number,
): DeliveryResult {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 429 || status === 503) return { kind: 'retry_after', status, retryAfterMs: parseRetryAfterMs(retryAfter, nowMs) };
  if (status === 410) return { kind: 'gone', status };
  // 408: the receiver gave up reading the request, a transient condition like a 5xx.
  if (status >= 500 || status === 408) {
    return { kind: 'retry', status, message: `HTTP ${status}${bodyExcerpt ? `: ${bodyExcerpt}` : ''}` };
  }
  return { kind: 'rejected', status, bodyExcerpt };
}

// ---------------------------------------------------------------- delivery

let sharedAgent: Agent | null = null;

/** One keep-alive agent for every shop endpoint (a pool per origin), created on first use. */
export function webhookDispatcher(): Agent {
  sharedAgent ??= new Agent({ connections: 16, connect: { timeout: 10_000 } });
  return sharedAgent;
}

/** Closes the shared agent (at worker shutdown); the next delivery creates a new one. */
export async function closeWebhookDispatcher(): Promise<void> {
  const agent = sharedAgent;
  sharedAgent = null;
  if (agent) await agent.close();
}

export interface DeliverWebhookOptions {
  /** The shop's endpoint, http(s). */
  url: string;
  /** whsec_ secrets; the event is signed with each (rotation). */
  secrets: readonly string[];
  event: ShipmentEvent;
  /** Whole attempt: connect, send, response headers and body. Default 15 000 ms. */
  timeoutMs?: number;
  /** Aborting it rejects the promise with signal.reason (e.g. activity cancellation). */
  signal?: AbortSignal;
  /** Clock for webhook-timestamp and HTTP-date Retry-After, in epoch ms. Default Date.now. */
  now?: () => number;
  /** Default: the shared keep-alive agent of webhookDispatcher(). */
  dispatcher?: Dispatcher;
}

/**
 * One signed POST of `event` to `url`, classified. Resolves for every HTTP answer and every
 * network failure or timeout; rejects only for a bad argument (WebhookArgumentError) or when
 * the caller's `signal` aborts (with its reason).
 */
export async function deliverWebhook(options: DeliverWebhookOptions): Promise<DeliveryResult> {
  const { url, event, signal } = options;
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new WebhookArgumentError('timeoutMs: must be a positive number of milliseconds');
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new WebhookArgumentError('url: is not a valid URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new WebhookArgumentError('url: must be http(s)');
  const valid = ShipmentEvent.safeParse(event);
  if (!valid.success) {
    throw new WebhookArgumentError(
      `event: ${fieldProblems(valid.error)
        .map((p) => `${p.field}: ${p.message}`)
        .join('; ')}`,
    );
  }

  // Serialised once: these exact bytes are signed and sent (JSON.stringify output is
  // well-formed UTF-16, so the UTF-8 encoding below is lossless).
  const body = JSON.stringify(event);
  const signed = signWebhook({ id: event.id, timestampSeconds: Math.floor(now() / 1000), body, secrets: options.secrets });
  const bytes = Buffer.from(body, 'utf8');

  // In an order's trace: a span named by the event's type, its host, and the answer's status.
  const attributes = {
    'shop.operation': event.type,
    'http.request.method': 'POST',
    ...serverOf(target),
  };
  return callSpan('shop webhook', attributes, async (span) => {
    const result = await post();
    if (result.status !== null) span.answered(result.status);
    return result;
  });

  async function post(): Promise<DeliveryResult> {
    signal?.throwIfAborted();
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const response = await request(target, {
        method: 'POST',
        dispatcher: options.dispatcher ?? webhookDispatcher(),
        headers: {
          ...signed,
          'content-type': 'application/json',
          'content-length': String(bytes.length),
          'user-agent': USER_AGENT,
        },
        body: bytes,
        signal: combined,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const status = response.statusCode;
      if (status >= 200 && status < 300) {
        // The answer is in; a body that fails to arrive does not undo the delivery.
        await response.body.dump().catch(() => undefined);
        return { kind: 'delivered', status };
      }
      const excerpt = await readExcerpt(response.body);
      return classifyResponse(status, response.headers['retry-after'], excerpt, now());
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) return { kind: 'retry', status: null, message: `no answer within ${timeoutMs} ms` };
      return { kind: 'retry', status: null, message: `network failure: ${describeNetworkError(cause)}` };
    }
  }
}

/** The start of a body as one line of text, for operators; a failed read gives ''. */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      chunks.push(buffer);
      size += buffer.length;
      if (size >= WEBHOOK_DEFAULTS.excerptBytes) break; // leaving the loop destroys the rest
    }
  } catch {
    // keep what arrived
  }
  const text = Buffer.concat(chunks).subarray(0, WEBHOOK_DEFAULTS.excerptBytes).toString('utf8');
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line.length > WEBHOOK_DEFAULTS.excerptChars ? `${line.slice(0, WEBHOOK_DEFAULTS.excerptChars)}…` : line;
}
