/**
 * `shipments_needing_attention{reason}`: how many shipments wait for a person, per reason of
 * workflows/attention.ts, counted with visibility queries (the same ones `npm run cli -- attention`
 * lists). Ended ones (exception, tracking_timed_out, hold_timed_out, label_failed, and shop changes after a label) count over the last 24 hours.
 * Read at a scrape, at most every REFRESH_MS, each count bounded by COUNT_TIMEOUT_MS; a failed
 * read keeps the last values and is logged, so a slow Temporal never stalls /metrics.
 */
import type { Client } from '@temporalio/client';
import { Gauge } from 'prom-client';
import { ATTENTION_REASONS, attentionQuery } from '../workflows/attention';
import { registry } from './counters';

export const ATTENTION_GAUGE = 'shipments_needing_attention';
export const REFRESH_MS = 30_000;
const COUNT_TIMEOUT_MS = 5_000;
const CLOSED_WINDOW_MS = 24 * 3_600_000;

let gauge: Gauge<'reason'> | undefined;

export function watchAttention(client: Client, warn: (message: string, meta: Record<string, unknown>) => void): void {
  let readAt = 0;
  const refresh = async (g: Gauge<'reason'>) => {
    if (Date.now() - readAt < REFRESH_MS) return;
    readAt = Date.now();
    const since = new Date(Date.now() - CLOSED_WINDOW_MS).toISOString();
    try {
      const counts = await Promise.all(
        ATTENTION_REASONS.map((reason) =>
          client.withDeadline(Date.now() + COUNT_TIMEOUT_MS, () => client.workflow.count(attentionQuery(reason, since))),
        ),
      );
      ATTENTION_REASONS.forEach((reason, i) => g.set({ reason: reason.reason }, counts[i]!.count));
    } catch (err) {
      warn('cannot count the shipments needing attention; the gauge keeps its last values', { err });
    }
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
