/**
 * Who may call the Admin API: the static access token, or a token from the client credentials
 * grant (POST /admin/oauth/access_token) until it expires on the fake's clock.
 */
import { randomBytes } from 'node:crypto';
import type { Answer } from '../local-http';

export interface AuthSettings {
  accessToken: string;
  clientId: string;
  clientSecret: string;
  tokenLifetimeSeconds: number;
  /** Scopes granted; read_all_orders only when the 60-day window is off. */
  scope: string;
  now: () => number;
}

export const UNAUTHORIZED: Answer = {
  status: 401,
  body: { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' },
};

export class Tokens {
  private readonly issued = new Map<string, number>();

  constructor(private readonly settings: AuthSettings) {}

  valid(token: string | undefined): boolean {
    if (token === undefined || token === '') return false;
    if (token === this.settings.accessToken) return true;
    const expiresAt = this.issued.get(token);
    if (expiresAt === undefined) return false;
    if (this.settings.now() < expiresAt) return true;
    this.issued.delete(token);
    return false;
  }

  /** The grant's answer for a client credentials request (form or JSON parameters). */
  grant(params: Record<string, unknown>): Answer {
    if (params.grant_type !== 'client_credentials') {
      return {
        status: 400,
        body: { error: 'unsupported_grant_type', error_description: 'Only grant_type=client_credentials is supported.' },
      };
    }
    if (params.client_id !== this.settings.clientId || params.client_secret !== this.settings.clientSecret) {
      return {
        status: 400,
        body: { error: 'invalid_client', error_description: 'Client authentication failed: unknown client_id or wrong client_secret.' },
      };
    }
    const token = `shpat_${randomBytes(16).toString('hex')}`;
    this.issued.set(token, this.settings.now() + this.settings.tokenLifetimeSeconds * 1000);
    return { status: 200, body: { access_token: token, scope: this.settings.scope, expires_in: this.settings.tokenLifetimeSeconds } };
  }
}

/** The parameters of a token request: a JSON object, or a form body, plus the query string. */
export function tokenParams(body: string, url: URL): Record<string, unknown> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const text = body.trim();
  if (text.startsWith('{')) {
    try {
      const json = JSON.parse(text) as unknown;
      if (json !== null && typeof json === 'object' && !Array.isArray(json)) Object.assign(params, json);
    } catch {
      // an unreadable body grants nothing: the checks below answer it
    }
  } else Object.assign(params, Object.fromEntries(new URLSearchParams(text)));
  return params;
}
