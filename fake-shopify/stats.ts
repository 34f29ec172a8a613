/** The webhook emitter's counters: events, delivery attempts and what became of them. */
export interface WebhookStats {
  /** Changes that matched at least one subscription (one event id each). */
  events: number;
  /** HTTP POSTs made, retries included. */
  attempted: number;
  /** Attempts answered 2xx within the timeout. */
  succeeded: number;
  /** Attempts answered otherwise, timed out or refused. */
  failed: number;
  /** Attempts that were retries of a failed one. */
  retries: number;
  /** Deliveries given up after their last retry failed. */
  gaveUp: number;
  /** Extra deliveries of an event (fault webhookDuplicateRate). */
  duplicates: number;
  /** Subscriptions deleted after too many consecutive failures. */
  subscriptionsDeleted: number;
  /** Deliveries dropped because their subscription was deleted while they waited. */
  abandoned: number;
  /** Deliveries not queued because the queue was full. */
  droppedQueueFull: number;
  /** Deliveries not made because of the webhooksDisabled fault. */
  suppressed: number;
}

/** What the fake has seen on its API routes (the /_fake admin routes are not counted), and its webhooks. */
export interface FakeShopifyStats {
  /** GraphQL and token requests, every outcome. */
  requests: number;
  /** Root field name → runnable requests that selected it. */
  byOperation: Record<string, number>;
  /** GraphQL operation name (`query OrdersToLabel…`) → runnable requests, '(anonymous)' for an unnamed one. */
  byOperationName: Record<string, number>;
  unauthorized: number;
  /** Answers with a GraphQL `errors` list (validation, cost cap, paging arguments), THROTTLED excepted. */
  graphqlErrors: number;
  throttled: number;
  /** THROTTLED answered as HTTP 429 (throttleAs 'http-429'). */
  http429: number;
  serverErrors: number;
  unavailable: number;
  /** Mutations (or queries) run, then the connection cut without an answer. */
  dropped: number;
  droppedBeforeCommit: number;
  hung: number;
  /** Connections cut at once while `down`. */
  refusedWhileDown: number;
  /** Sum of actual query costs charged. */
  pointsSpent: number;
  /** Mutation name → calls that changed the store (no userErrors). */
  mutationsApplied: Record<string, number>;
  tokensIssued: number;
  webhooks: WebhookStats;
}

export function emptyWebhookStats(): WebhookStats {
  return {
    events: 0,
    attempted: 0,
    succeeded: 0,
    failed: 0,
    retries: 0,
    gaveUp: 0,
    duplicates: 0,
    subscriptionsDeleted: 0,
    abandoned: 0,
    droppedQueueFull: 0,
    suppressed: 0,
  };
}

export function emptyStats(): FakeShopifyStats {
  return {
    requests: 0,
    byOperation: {},
    byOperationName: {},
    unauthorized: 0,
    graphqlErrors: 0,
    throttled: 0,
    http429: 0,
    serverErrors: 0,
    unavailable: 0,
    dropped: 0,
    droppedBeforeCommit: 0,
    hung: 0,
    refusedWhileDown: 0,
    pointsSpent: 0,
    mutationsApplied: {},
    tokensIssued: 0,
    webhooks: emptyWebhookStats(),
  };
}

export function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}
