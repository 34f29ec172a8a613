/**
 * The fake shipping API's public shapes: what it is started with and what a test or the CLI
 * gets back to steer and observe it.
 */
import type { Faults, RateLimit } from './faults';

/**
 * One account of the fake: its own credentials, limit and labels. `headers` (the default) takes
 * the spec's x-rr-apikey and x-rr-apitoken; `bearer` the spec's alternative form,
 * `Authorization: Bearer <accessToken>`, and wants `service.shipperAccountId` in label requests.
 */
export type AnyFakeAccount = FakeAccount | FakeBearerAccount;
export interface FakeAccount {
  name: string;
  auth?: 'headers';
  apiKey: string;
  apiToken: string;
  /** The account's own limit; default: the fake's `rateLimit` fault. */
  rateLimit?: RateLimit;
}
export interface FakeBearerAccount {
  name: string;
  auth: 'bearer';
  accessToken: string;
  shipperAccountId: string;
  rateLimit?: RateLimit;
}

/** New credentials of an account: from then on the old ones get 401 (a rotation). */
export type FakeCredentials = { apiKey: string; apiToken: string } | { accessToken: string };

export interface FakeShippingApiOptions {
  /**
   * Keep the labels in this file across restarts (written at most once a second and at close, 0600;
   * local-http/state-file.ts). Unset: memory only.
   */
  stateFile?: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a random free port). */
  port?: number;
  /** Default: one account from SHIPPING_API_KEY / SHIPPING_API_TOKEN, else the dev credentials. */
  accounts?: AnyFakeAccount[];
  /** Length of one tracking stage. Default 60 000 ms. */
  trackingStepMs?: number;
  /**
   * When set, tracking advances by polls instead of time: each stage lasts this many
   * GET /tracking calls of the label (benchmarks of N unchanged polls). Default unset.
   */
  trackingStepPolls?: number;
  /** How many API requests requestLog() keeps (the newest). Default 100 000. */
  requestLogSize?: number;
  /** Destination postal codes the courier rejects. Default ["00000"]. */
  rejectPostalCodes?: string[];
  /** Seed of the PRNG behind every fault rate. Default 1. */
  seed?: number;
  faults?: Partial<Faults>;
}

/** Which fault shaped a request's answer (the `x-fake-fault` header, plus the unanswered ones). */
export type FakeFault = 'fail-next' | 'rate-limit' | 'rate-limited' | 'server-error' | 'malformed' | 'hang' | 'lost-answer';

/** One API request, for tests that check timing (e.g. nothing sent before Retry-After). */
export interface FakeRequest {
  /** When the answer was sent (or, unanswered, when it was decided not to answer). */
  at: number;
  /** When the request arrived (before its body was read). */
  receivedAt: number;
  endpoint: string;
  /** The label, order or tracking id in the path, when there is one. */
  id: string | null;
  /** The authenticated account's name; null for a 401. */
  account: string | null;
  /** POST /labels: the body's idempotencyKey and order.customerOrderNumber, when it has them. */
  idempotencyKey: string | null;
  customerOrderNumber: string | null;
  /** The status sent, or for an unanswered request the one the handler produced. */
  status: number;
  /** False for a hang or a lost answer: the client never saw `status`. */
  answered: boolean;
  fault: FakeFault | null;
  retryAfter: string | null;
}

export interface FakeStats {
  labelsCreated: number;
  labelsRejected: number;
  idempotentReplays: number;
  idempotencyPayloadMismatches: number;
  /** Endpoint key -> status code (or "hang", "lost") -> count. */
  requests: Record<string, Record<string, number>>;
}

export interface FakeLabelSummary {
  idempotencyKey: string;
  id: string;
  status: 'created' | 'failed';
  account: string;
  customerOrderNumber: string;
  /** The request's shipTo postal code: which address the label was made for. */
  shipToPostalCode: string | null;
  createdAt: string;
}

export interface FakeShippingApi {
  baseUrl: string;
  port: number;
  stats(): FakeStats;
  /** API requests, oldest first, hung and lost ones included (admin and unmatched routes are not logged). */
  requestLog(): FakeRequest[];
  labels(): FakeLabelSummary[];
  /** Validates and applies a partial patch; throws InvalidFaultsError naming the field. */
  setFaults(patch: Partial<Faults>): Faults;
  /** Replaces an account's credentials: a call with the old ones is refused (401) from now on. */
  rotateCredentials(account: string, credentials: FakeCredentials): void;
  resetStats(): void;
  /** Stops listening and destroys every socket, hanging ones included. */
  close(): Promise<void>;
}
