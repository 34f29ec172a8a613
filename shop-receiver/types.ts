/** The reference receiver's public shapes and defaults, shared by the server and the CLI. */
import type { ReceiverFaults, ReceiverFaultsPatch } from './faults';
import type { LoggedEvent, OrderView } from './store';

export const RECEIVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  seed: 1,
  maxBodyBytes: 1024 * 1024,
  /** The standardwebhooks package's own tolerance; checked first here for a clearer message. */
  toleranceSeconds: 5 * 60,
} as const;

export interface ShopReceiverOptions {
  /** whsec_ secrets; a request signed with any of them is accepted. */
  secrets: string[];
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a random free port). */
  port?: number;
  /** Seed of the PRNG behind errorRate. Default 1. */
  seed?: number;
  faults?: ReceiverFaultsPatch;
  /**
   * A second port serving only the page, the API and the admin endpoints: it keeps answering
   * while the shop is down (`down` closes the webhook port only). Unset: none.
   */
  pagePort?: number;
  /** Where accepted events are kept across restarts (journal.ts). Unset: memory only. */
  journalFile?: string;
  /** Called once each webhook answer has been written to the socket (tests act on "the shop answered"). */
  onWebhookAnswered?: (answer: WebhookAnswer) => void;
}

export interface WebhookAnswer {
  shop: string;
  status: number;
  /** The webhook-id header as sent, when there was one. */
  webhookId: string | null;
}

export interface ShopReceiverStats {
  /** Answers to POST /webhooks/:shop, by status code. */
  answers: Record<string, number>;
  applied: number;
  late: number;
  duplicates: number;
}

export interface ShopReceiverState {
  orders: OrderView[];
  events: LoggedEvent[];
  stats: ShopReceiverStats;
  faults: ReceiverFaults;
}

export interface ShopReceiver {
  /** e.g. http://127.0.0.1:8090 */
  url: string;
  port: number;
  /** The page port's address, when one was asked for (else the page is at `url`). */
  pageUrl?: string;
  /** Where a shop's connector should point: `${url}/webhooks/<shop>`. */
  webhookUrl(shop: string): string;
  state(): ShopReceiverState;
  /**
   * Validates and applies a partial patch (throws InvalidFaultsError naming the field); resolves
   * once the listening socket matches `down`.
   */
  setFaults(patch: ReceiverFaultsPatch): Promise<ReceiverFaults>;
  /** Forgets orders, events, de-duplication ids and stats (not faults). */
  reset(): void;
  /** Stops listening and destroys every socket. */
  close(): Promise<void>;
}
