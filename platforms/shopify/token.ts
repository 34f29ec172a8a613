/**
 * The access token of a Shopify connector: the configured one, or one obtained with the app's
 * client id and secret (client credentials grant, `POST /admin/oauth/access_token`), kept in
 * this worker's memory only and fetched again before it expires (they last about 24 h).
 */
import { z } from 'zod';
import { jsonOf, platformRequest } from '../connection/http';
import { failedAnswer, StopDelivery, unexpectedAnswer } from '../connection/result';
import type { ShopifyConnector } from './settings';

/** Fetched again this long before the stated expiry (a tenth of a shorter lifetime), so no call carries a token about to lapse. */
const REFRESH_MARGIN_MS = 10 * 60_000;

const TokenAnswer = z.object({
  access_token: z.string().min(1).max(1024),
  expires_in: z
    .number()
    .int()
    .positive()
    .max(366 * 86_400)
    .optional(),
});

export class ShopifyToken {
  private current: { token: string; refreshAt: number } | null = null;
  private pending: Promise<string> | null = null;

  constructor(
    private readonly connector: ShopifyConnector,
    private readonly now: () => number = Date.now,
  ) {}

  /** A token to send; throws StopDelivery when the store refuses the app's credentials. */
  async get(signal: AbortSignal): Promise<string> {
    const credentials = this.connector.credentials;
    if (credentials.kind === 'token') return credentials.accessToken;
    if (this.current && this.current.refreshAt > this.now()) return this.current.token;
    // Shared by every caller, so no caller's cancellation may end it (it is bounded by the timeout); each waits with its own signal.
    this.pending ??= this.fetch(credentials.clientId, credentials.clientSecret).finally(() => (this.pending = null));
    return untilAborted(this.pending, signal);
  }

  /** The store answered 401 with this token: the next call asks for a new one. */
  invalidate(token: string): boolean {
    if (this.connector.credentials.kind === 'token' || this.current?.token !== token) return false;
    this.current = null;
    return true;
  }

  private async fetch(clientId: string, clientSecret: string): Promise<string> {
    const answer = await platformRequest({
      method: 'POST',
      url: new URL('/admin/oauth/access_token', this.connector.adminOrigin),
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ client_id: clientId, client_secret: clientSecret, grant_type: 'client_credentials' }),
      timeoutMs: this.connector.timeoutMs,
      platform: 'shopify',
    });
    if (answer.kind === 'network') throw new StopDelivery({ kind: 'retry', status: null, message: `access token: ${answer.message}` });
    if (answer.status !== 200) {
      const failure = failedAnswer(answer.status, answer.headers, answer.text, this.now());
      if (failure.result.kind === 'rejected')
        throw new StopDelivery({
          ...failure.result,
          bodyExcerpt: `access token refused (check clientId and clientSecret): ${failure.result.bodyExcerpt}`,
        });
      throw failure;
    }
    const parsed = TokenAnswer.safeParse(jsonOf(answer.text));
    if (!parsed.success) throw unexpectedAnswer('access token', parsed.error.issues[0]!.message);
    const lifetimeMs = (parsed.data.expires_in ?? 86_399) * 1000;
    this.current = { token: parsed.data.access_token, refreshAt: this.now() + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 10) };
    return parsed.data.access_token;
  }
}

/** `promise`, or the signal's reason once it aborts first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled'));
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
