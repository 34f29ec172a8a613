/**
 * What a chaos run checks, as pure functions over what the fake saw (its labels and request
 * log), so the same code judges a real run and the synthetic logs of the test.
 */
import type { FakeLabelSummary, FakeRequest } from '../fake-shipping-api/server';

/**
 * The thing a request is about, for "no call before its Retry-After": a label request is about
 * its order (customerOrderNumber, else its idempotency key: our keys are one per order and
 * revision, the plain script's are new on every attempt), a GET about the id in its path.
 */
export function resourceOf(r: FakeRequest): string {
  if (r.endpoint === 'POST /labels') {
    if (r.customerOrderNumber !== null) return `POST /labels order ${r.customerOrderNumber}`;
    if (r.idempotencyKey !== null) return `POST /labels key ${r.idempotencyKey}`;
    return 'POST /labels';
  }
  return r.id === null ? r.endpoint : `${r.endpoint}/${r.id}`;
}

/** Whole seconds of a Retry-After header; null when absent or not delta-seconds. */
export function retryAfterMs(value: string | null): number | null {
  if (value === null || !/^\s*\d+\s*$/.test(value)) return null;
  return Number(value) * 1000;
}

export interface RetryAfterViolation {
  resource: string;
  account: string | null;
  /** When the 429 was answered. */
  rateLimitedAt: number;
  retryAfterMs: number;
  /** When the early request arrived. */
  nextAt: number;
  /** nextAt - rateLimitedAt: how long the client actually waited. */
  gapMs: number;
}

/**
 * Per resource: after a 429 with Retry-After r answered at t, the next request for the same
 * resource that arrives after t must not arrive before t + r. Requests already on their way
 * (arrived before t) do not count.
 */
export function retryAfterViolations(log: readonly FakeRequest[]): RetryAfterViolation[] {
  const byResource = new Map<string, FakeRequest[]>();
  for (const r of log) {
    const key = `${r.account ?? ''}\u0000${resourceOf(r)}`;
    const list = byResource.get(key);
    if (list) list.push(r);
    else byResource.set(key, [r]);
  }
  const violations: RetryAfterViolation[] = [];
  for (const requests of byResource.values()) {
    const arrivals = [...requests].sort((a, b) => a.receivedAt - b.receivedAt);
    for (const limited of requests) {
      const wait = limited.status === 429 && limited.answered ? retryAfterMs(limited.retryAfter) : null;
      if (wait === null) continue;
      const next = arrivals[firstAfter(arrivals, limited.at)];
      if (next !== undefined && next.receivedAt < limited.at + wait) {
        violations.push({
          resource: resourceOf(limited),
          account: limited.account,
          rateLimitedAt: limited.at,
          retryAfterMs: wait,
          nextAt: next.receivedAt,
          gapMs: next.receivedAt - limited.at,
        });
      }
    }
  }
  return violations.sort((a, b) => a.rateLimitedAt - b.rateLimitedAt);
}

export interface AccountWideViolations {
  /** 429s (with a Retry-After) after which the account sent anything before the wait was over. */
  broken429s: number;
  /** Requests that arrived inside the Retry-After window of an earlier 429 of their account. */
  requestsInWindow: number;
  /** of all 429s with a Retry-After */
  rateLimited: number;
}

/** Account-wide: any request of the account between t and t + r after a 429 answered at t. */
export function accountWideViolations(log: readonly FakeRequest[]): AccountWideViolations {
  const byAccount = new Map<string, FakeRequest[]>();
  for (const r of log) {
    if (r.account === null) continue;
    const list = byAccount.get(r.account);
    if (list) list.push(r);
    else byAccount.set(r.account, [r]);
  }
  let broken429s = 0;
  let requestsInWindow = 0;
  let rateLimited = 0;
  for (const requests of byAccount.values()) {
    const arrivals = [...requests].sort((a, b) => a.receivedAt - b.receivedAt);
    // Windows as [t, t + r), merged, to count each early request once.
    const windows: Array<[number, number]> = [];
    for (const limited of requests) {
      const wait = limited.status === 429 && limited.answered ? retryAfterMs(limited.retryAfter) : null;
      if (wait === null) continue;
      rateLimited += 1;
      const i = firstAfter(arrivals, limited.at);
      if (i < arrivals.length && arrivals[i]!.receivedAt < limited.at + wait) broken429s += 1;
      windows.push([limited.at, limited.at + wait]);
    }
    windows.sort((a, b) => a[0] - b[0]);
    const merged: Array<[number, number]> = [];
    for (const w of windows) {
      const last = merged[merged.length - 1];
      if (last && w[0] <= last[1]) last[1] = Math.max(last[1], w[1]);
      else merged.push([...w]);
    }
    let w = 0;
    for (const r of arrivals) {
      while (w < merged.length && merged[w]![1] <= r.receivedAt) w += 1;
      if (w < merged.length && merged[w]![0] < r.receivedAt) requestsInWindow += 1;
    }
  }
  return { broken429s, requestsInWindow, rateLimited };
}

/** Index of the first request (sorted by arrival) that arrived strictly after `t`. */
function firstAfter(arrivals: readonly FakeRequest[], t: number): number {
  let lo = 0;
  let hi = arrivals.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arrivals[mid]!.receivedAt <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface LabelCheck {
  orders: number;
  labels: number;
  /** Labels beyond the first of an order. */
  duplicateLabels: number;
  ordersWithDuplicates: string[];
  /** Orders without any label. */
  withoutLabel: string[];
  /** Orders with a created label none of whose labels was read (GET /orders/<labelId> 200, well-formed). */
  neverRead: string[];
  /** withoutLabel + neverRead. */
  lost: string[];
}

/** A successful read of an order's details: answered 200 with a body that kept the contract. */
export function isSuccessfulRead(r: FakeRequest): boolean {
  return r.endpoint === 'GET /orders' && r.status === 200 && r.answered && r.fault !== 'malformed';
}

/**
 * Labels per order (by customerOrderNumber) of one account, and whether each order's details
 * were read. A courier-rejected order (only failed labels) has no details to read.
 */
export function checkLabels(
  orderNumbers: readonly string[],
  labels: readonly FakeLabelSummary[],
  log: readonly FakeRequest[],
  account: string,
): LabelCheck {
  const expected = new Set(orderNumbers);
  const perOrder = new Map<string, FakeLabelSummary[]>();
  for (const label of labels) {
    if (label.account !== account || !expected.has(label.customerOrderNumber)) continue;
    const list = perOrder.get(label.customerOrderNumber);
    if (list) list.push(label);
    else perOrder.set(label.customerOrderNumber, [label]);
  }
  const read = new Set(log.filter((r) => r.account === account && isSuccessfulRead(r)).map((r) => r.id?.toLowerCase()));
  const result: LabelCheck = {
    orders: orderNumbers.length,
    labels: 0,
    duplicateLabels: 0,
    ordersWithDuplicates: [],
    withoutLabel: [],
    neverRead: [],
    lost: [],
  };
  for (const order of orderNumbers) {
    const own = perOrder.get(order) ?? [];
    result.labels += own.length;
    if (own.length === 0) {
      result.withoutLabel.push(order);
      continue;
    }
    if (own.length > 1) {
      result.duplicateLabels += own.length - 1;
      result.ordersWithDuplicates.push(order);
    }
    const created = own.filter((l) => l.status === 'created');
    if (created.length > 0 && !created.some((l) => read.has(l.id.toLowerCase()))) result.neverRead.push(order);
  }
  result.lost = [...result.withoutLabel, ...result.neverRead];
  return result;
}

/** Names of the outputs in which any of the secrets appears. */
export function credentialLeaks(outputs: ReadonlyArray<{ name: string; text: string }>, secrets: readonly string[]): string[] {
  return outputs.filter((o) => secrets.some((s) => s !== '' && o.text.includes(s))).map((o) => o.name);
}

/** What the workers wrote: a failed call is logged once, at a fitting level, with no task token. */
export interface LogVolume {
  bytes: number;
  lines: number;
  /** pino level warn (40) or worse. */
  warnLines: number;
  /** Our activity's one line per failed shipping API call (a 429 at info, the rest at warn). */
  failedCallLines: number;
  /** Lines naming the activity task token, which completes an activity: must be none. */
  taskTokenLines: number;
}

export function logVolume(texts: readonly string[]): LogVolume {
  const volume: LogVolume = { bytes: 0, lines: 0, warnLines: 0, failedCallLines: 0, taskTokenLines: 0 };
  for (const text of texts) {
    volume.bytes += Buffer.byteLength(text);
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      volume.lines++;
      const level = /"level":(\d+)/.exec(line);
      if (level && Number(level[1]) >= 40) volume.warnLines++;
      if (line.includes('"msg":"shipping API call failed"')) volume.failedCallLines++;
      if (/task_?token/i.test(line)) volume.taskTokenLines++;
    }
  }
  return volume;
}

export interface ShipmentCounts {
  /** Workflow completed. */
  finished: number;
  /** Running, waiting for an operator to correct the label data. */
  waiting: number;
  /** Anything else: still running in another phase, failed, terminated, never started. */
  stuck: number;
  stuckOrders: string[];
  /** When the last finished shipment's workflow completed (epoch ms), for the run's throughput; null if none did. */
  lastFinishedAt: number | null;
}

export interface PathResult {
  path: string;
  labels: LabelCheck;
  retryAfter: RetryAfterViolation[];
  accountWide: AccountWideViolations;
  /** Null for the plain script: it keeps no shipments. */
  shipments: ShipmentCounts | null;
  leaks: string[];
  /** Our workers' logs; null for the plain script. */
  logs: LogVolume | null;
}

/** What our path must meet for exit code 0; each failure as one line. */
export function failuresOf(ours: PathResult): string[] {
  const failures: string[] = [];
  const { labels } = ours;
  if (labels.duplicateLabels > 0) {
    failures.push(`${labels.duplicateLabels} duplicate label(s), orders: ${sample(labels.ordersWithDuplicates)}`);
  }
  if (labels.withoutLabel.length > 0)
    failures.push(`${labels.withoutLabel.length} order(s) without a label: ${sample(labels.withoutLabel)}`);
  if (labels.neverRead.length > 0)
    failures.push(`${labels.neverRead.length} order(s) whose details were never read: ${sample(labels.neverRead)}`);
  if (ours.shipments === null) failures.push('shipments were not checked');
  else if (ours.shipments.stuck > 0) failures.push(`${ours.shipments.stuck} shipment(s) stuck: ${sample(ours.shipments.stuckOrders)}`);
  if (ours.retryAfter.length > 0) {
    const worst = ours.retryAfter.reduce((a, b) => (b.retryAfterMs - b.gapMs > a.retryAfterMs - a.gapMs ? b : a));
    failures.push(
      `${ours.retryAfter.length} call(s) before their Retry-After (worst: ${worst.resource} ${worst.gapMs} ms after a 429 asking for ${worst.retryAfterMs} ms)`,
    );
  }
  if (ours.leaks.length > 0) failures.push(`credentials in: ${ours.leaks.join(', ')}`);
  if (ours.logs && ours.logs.taskTokenLines > 0)
    failures.push(`${ours.logs.taskTokenLines} worker log line(s) name an activity task token`);
  return failures;
}

function sample(list: readonly string[], n = 5): string {
  return list.length <= n ? list.join(', ') : `${list.slice(0, n).join(', ')} … (+${list.length - n})`;
}

/** The comparison table, one row per path. */
export function formatTable(results: readonly PathResult[]): string {
  const header = [
    'path',
    'orders',
    'labels',
    'duplicate labels',
    'lost orders (no label / never read)',
    'calls before Retry-After (same resource)',
    'account-wide: requests inside a Retry-After window',
    'shipments finished/waiting/stuck',
    'credentials in logs',
  ];
  const rows = results.map((r) => [
    r.path,
    String(r.labels.orders),
    String(r.labels.labels),
    String(r.labels.duplicateLabels),
    `${r.labels.lost.length} (${r.labels.withoutLabel.length} / ${r.labels.neverRead.length})`,
    String(r.retryAfter.length),
    `${r.accountWide.requestsInWindow} (after ${r.accountWide.broken429s} of ${r.accountWide.rateLimited} 429s)`,
    r.shipments === null ? 'n/a (no state)' : `${r.shipments.finished}/${r.shipments.waiting}/${r.shipments.stuck}`,
    r.leaks.length === 0 ? 'none' : r.leaks.join(', '),
  ]);
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
