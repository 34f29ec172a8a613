/** What the fake has seen on its API routes (the /_fake admin routes are not counted). */
export interface FakeShopifyStats {
  /** GraphQL and token requests, every outcome. */
  requests: number;
  /** Root field name → runnable requests that selected it. */
  byOperation: Record<string, number>;
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
}

export function emptyStats(): FakeShopifyStats {
  return {
    requests: 0,
    byOperation: {},
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
  };
}

export function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}
