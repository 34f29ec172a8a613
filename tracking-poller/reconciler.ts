/**
 * The tracking reconciler: every pass (TRACKING_RECONCILE_EVERY, default the span), a worker
 * compares the shipments in tracking (visibility: ShipmentStatus `tracking`) with the members of
 * the running poller shards (each answers the `trackingMembers` query), and tells each shipment
 * no live shard watches to join again (`rejoinTracking`). That is how a shard terminated, reset,
 * failed (its task refused, e.g. an input past the payload limit) or deleted strands no
 * shipment: its members are found by their absence, whatever ended the shard, within one pass.
 * It also sets the gauges of metrics/tracking-membership.ts. A worker process runs it beside its
 * workers; several workers each run it (a shipment told twice joins once more, harmlessly).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { WORKFLOW_TYPE } from '../workflow-definitions/shipment';
import { rejoinTrackingSignal, shardMembersQuery, TRACKING_POLLER_WORKFLOW_TYPE } from '../workflow-definitions/tracking-poller';
import { trackingRejoins, trackingShardBound, trackingShardLabels, trackingUnwatched } from '../metrics/tracking-membership';

export interface TrackingReconcilerOptions {
  client: Client;
  /** Labels a shard takes (for the bound's gauge). */
  maxLabels: number;
  log: { warn(message: string, meta: Record<string, unknown>): void; info(message: string, meta: Record<string, unknown>): void };
}

export interface ReconcilePass {
  inTracking: number;
  shards: number;
  /** Shipments no live shard watches: told to join again. */
  unwatched: string[];
}

/** Shipments told to join again in one pass at most: a lost shard of 4,000 labels rejoins over a few passes, not in one burst. */
const MAX_REJOINS_PER_PASS = 2_000;
const QUERY_TIMEOUT_MS = 10_000;

export const IN_TRACKING_QUERY = `WorkflowType = '${WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND ShipmentStatus = 'tracking'`;
export const RUNNING_SHARDS_QUERY = `WorkflowType = '${TRACKING_POLLER_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`;

export class TrackingReconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly options: TrackingReconcilerOptions) {
    trackingShardBound.set(options.maxLabels);
  }

  /** One pass. Shipments are listed before the shards, so one joining in between is found in its shard. */
  async reconcile(): Promise<ReconcilePass> {
    const { client } = this.options;
    const inTracking: string[] = [];
    for await (const shipment of client.workflow.list({ query: IN_TRACKING_QUERY })) inTracking.push(shipment.workflowId);
    const watched = new Set<string>();
    const shards: string[] = [];
    for await (const shard of client.workflow.list({ query: RUNNING_SHARDS_QUERY })) shards.push(shard.workflowId);
    trackingShardLabels.reset();
    for (const poller of shards) {
      // A shard that does not answer (its worker down, or code from before the query) may watch
      // anyone: nobody is told to join again this pass, rather than everybody twice.
      const members = await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () =>
        client.workflow.getHandle(poller).query(shardMembersQuery),
      );
      trackingShardLabels.set({ poller }, members.members.length);
      for (const member of members.members) watched.add(member.workflowId);
    }
    const unwatched = inTracking.filter((workflowId) => !watched.has(workflowId));
    trackingUnwatched.set(unwatched.length);
    for (const workflowId of unwatched.slice(0, MAX_REJOINS_PER_PASS)) {
      try {
        await client.workflow.getHandle(workflowId).signal(rejoinTrackingSignal, { reason: 'no running tracking poller shard watches it' });
        trackingRejoins.inc();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err; // it completed meanwhile
      }
    }
    if (unwatched.length > 0)
      this.options.log.info('tracking reconciler: shipments no shard watches were told to join again', {
        unwatched: unwatched.length,
        told: Math.min(unwatched.length, MAX_REJOINS_PER_PASS),
      });
    return { inTracking: inTracking.length, shards: shards.length, unwatched };
  }

  /** A pass every `everyMs` (the first after a random part of it, so the fleet's workers spread theirs). */
  start(everyMs: number): void {
    const pass = () => {
      this.running = this.reconcile()
        .catch((err: unknown) => this.options.log.warn('tracking reconciler pass failed; the next one tries again', { err: String(err) }))
        .finally(() => {
          if (this.stopped) return;
          this.timer = setTimeout(pass, everyMs);
          this.timer.unref();
        });
    };
    this.timer = setTimeout(pass, Math.floor(Math.random() * everyMs));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
