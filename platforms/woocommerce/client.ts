/**
 * Calls to one WooCommerce site's REST API over plain undici (the official JS client is a thin,
 * unmaintained axios wrapper: one release in six years, open issues unanswered). HTTP Basic
 * with the consumer key pair, or the query string for hosts that strip Authorization. Every
 * answer is parsed with zod; failures end the event's delivery as the shared rules say: 429 and
 * 503 wait Retry-After (hosts and WAFs send them, WooCommerce itself has no limit), other 5xx
 * back off, 4xx stop with WordPress's error code and message.
 */
import { z } from 'zod';
import { jsonOf, platformRequest } from '../connection/http';
import { failedAnswer, scrubbingStops, StopDelivery, unexpectedAnswer } from '../connection/result';
import { storeHold, type StoreHold } from '../connection/store-hold';
import type { WooCommerceConnector } from './settings';

const USER_AGENT = 'shipping-sync-worker/0.1 (woocommerce connector)';

/** WordPress's error body: `{code, message, data: {status}}`. */
const WpError = z.object({ code: z.string(), message: z.string() }).loose();

/** `errorCode`: WordPress's code of an expected failure (rest_no_route: the route's plugin is not installed). */
export type WooResult<T> = { status: number; data: T; errorCode?: string };

/** How long a call may wait for the site's Retry-After when its caller does not say. */
const DEFAULT_MAX_WAIT_MS = 20_000;

export class WooClient {
  /** The site's Retry-After, shared by every client of the site in this worker. */
  private readonly hold: StoreHold;

  constructor(
    private readonly connector: WooCommerceConnector,
    private readonly now: () => number = Date.now,
  ) {
    this.hold = storeHold(`woocommerce ${connector.siteUrl}`, now);
  }

  /**
   * One call; `expect` lists statuses that are answers rather than failures (404 for a route
   * that is not there). Resolves with the parsed body, throws StopDelivery otherwise. Nothing is
   * sent while the site's Retry-After lasts: waited for up to `maxWaitMs`, else given to the caller.
   */
  async call<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    schema: z.ZodType<T>,
    signal: AbortSignal,
    options: { body?: unknown; expect?: number[]; maxWaitMs?: number } = {},
  ): Promise<WooResult<T | null>> {
    return scrubbingStops(
      () => wooSecrets(this.connector),
      () => this.send(method, path, schema, signal, options),
    );
  }

  private async send<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    schema: z.ZodType<T>,
    signal: AbortSignal,
    options: { body?: unknown; expect?: number[]; maxWaitMs?: number },
  ): Promise<WooResult<T | null>> {
    const url = new URL(`${this.connector.siteUrl}/wp-json/${path.replace(/^\//, '')}`);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT };
    const { consumerKey, consumerSecret } = this.connector.credentials;
    if (this.connector.auth === 'basic')
      headers.authorization = `Basic ${Buffer.from(`${consumerKey}:${consumerSecret}`).toString('base64')}`;
    else {
      url.searchParams.set('consumer_key', consumerKey);
      url.searchParams.set('consumer_secret', consumerSecret);
    }
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    const answer = await this.hold.run(maxWaitMs, signal, () =>
      platformRequest({ method, url, headers, body, timeoutMs: this.connector.timeoutMs, signal, platform: 'woocommerce' }),
    );
    const what = `${method} ${path}`;
    if (answer.kind === 'network') throw new StopDelivery({ kind: 'retry', status: null, message: `${what}: ${answer.message}` });
    if (answer.status >= 200 && answer.status < 300) {
      const parsed = schema.safeParse(jsonOf(answer.text));
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw unexpectedAnswer(what, `${issue.path.join('.') || '(body)'}: ${issue.message}`);
      }
      return { status: answer.status, data: parsed.data };
    }
    const wp = WpError.safeParse(jsonOf(answer.text));
    if (options.expect?.includes(answer.status))
      return { status: answer.status, data: null, errorCode: wp.success ? wp.data.code : undefined };
    const failure = failedAnswer(answer.status, answer.headers, answer.text, this.now());
    if (failure.result.kind === 'retry_after') this.hold.hold(failure.result.status, failure.result.retryAfterMs);
    if (failure.result.kind !== 'rejected') throw failure;
    // WordPress names what is wrong in `code` (woocommerce_rest_shop_order_invalid_id, rest_invalid_param, …).
    const detail = wp.success ? `${wp.data.code}: ${wp.data.message}` : failure.result.bodyExcerpt;
    throw new StopDelivery({ kind: 'rejected', status: answer.status, bodyExcerpt: `${what}: ${detail}`.slice(0, 400) });
  }
}

/** The site's secrets in every form they travel in (the Basic header carries the pair in base64). */
export function wooSecrets(connector: WooCommerceConnector): string[] {
  const { consumerKey, consumerSecret } = connector.credentials;
  return [consumerKey, consumerSecret, Buffer.from(`${consumerKey}:${consumerSecret}`).toString('base64'), ...connector.webhookSecrets];
}
