/**
 * `shipments_needing_attention{reason}`: how many shipments wait for a person, per reason of
 * workflow-definitions/attention.ts, counted with visibility queries (the same ones `npm run cli -- attention`
 * lists). Ended ones (exception, tracking_timed_out, hold_timed_out, label_failed, and shop changes after a label) count over the last 24 hours;
 * the ended ones a person resolved (`npm run cli -- resolve`) are subtracted.
 * Read at a scrape, at most every REFRESH_MS, each count bounded by COUNT_TIMEOUT_MS; a failed
 * read keeps the last values and is logged, so a slow Temporal never stalls /metrics.
 */
import type { Client } from '@temporalio/client';
import { Gauge } from 'prom-client';
import {
  ATTENTION_REASONS,
  type AttentionReason,
  attentionQuery,
  attentionQueryAmong,
  resolvedEndedShipments,
} from '../workflow-definitions/attention';
import { registry } from './counters';

export const ATTENTION_GAUGE = 'shipments_needing_attention';
export const REFRESH_MS = 30_000;
const COUNT_TIMEOUT_MS = 5_000;
const CLOSED_WINDOW_MS = 24 * 3_600_000;
const IDS_PER_COUNT = 100;

let gauge: Gauge<'reason'> | undefined;

export function watchAttention(client: Client, warn: (message: string, meta: Record<string, unknown>) => void): void {
  let readAt = 0;
  const refresh = async (g: Gauge<'reason'>) => {
    if (Date.now() - readAt < REFRESH_MS) return;
    readAt = Date.now();
    const since = new Date(Date.now() - CLOSED_WINDOW_MS).toISOString();
    try {
      const bounded = <T>(read: () => Promise<T>) => client.withDeadline(Date.now() + COUNT_TIMEOUT_MS, read);
      const resolved = [...(await bounded(() => resolvedEndedShipments(client, since)))];
      const counts = await Promise.all(
        ATTENTION_REASONS.map(async (reason) => {
          const all = (await bounded(() => client.workflow.count(attentionQuery(reason, since)))).count;
          return reason.when !== 'running' ? all - (await countAmong(reason, since, resolved)) : all;
        }),
      );
      ATTENTION_REASONS.forEach((reason, i) => g.set({ reason: reason.reason }, counts[i]!));
    } catch (err) {
      warn('cannot count the shipments needing attention; the gauge keeps its last values', { err });
    }
  };
  /** How many of `ids` the reason's query finds, a chunk of ids per count (a query's length is bounded). */
  const countAmong = async (reason: AttentionReason, since: string, ids: string[]) => {
    let n = 0;
    for (let i = 0; i < ids.length; i += IDS_PER_COUNT) {
      const query = attentionQueryAmong(reason, since, ids.slice(i, i + IDS_PER_COUNT));
      n += (await client.withDeadline(Date.now() + COUNT_TIMEOUT_MS, () => client.workflow.count(query))).count;
    }
    return n;
  };
  gauge ??= new Gauge({
    name: ATTENTION_GAUGE,
    help: 'Shipments waiting for a person, by reason (npm run cli -- attention lists them); ended ones over the last 24 h.',
    labelNames: ['reason'] as const,
    registers: [registry],
    async collect() {
      await refresh(this);
    },
  });
}
