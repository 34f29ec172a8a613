/**
 * The tracking reconciler's gauges (tracking-poller/reconciler.ts), read at each pass:
 * labels per poller shard against the shard's bound, and shipments in tracking that no live
 * shard watches (each is told to join again; one that stays is stranded).
 */
import { Counter, Gauge } from 'prom-client';
import { registry } from './counters';

export const trackingShardLabels = new Gauge({
  name: 'tracking_poller_labels',
  help: 'Labels each running tracking poller shard watches (by shard workflow id), at the reconciler’s last pass.',
  labelNames: ['poller'] as const,
  registers: [registry],
});

export const trackingShardBound = new Gauge({
  name: 'tracking_poller_max_labels',
  help: 'Labels a tracking poller shard takes before new ones overflow to the next shard (TRACKING_POLLER_MAX_LABELS).',
  registers: [registry],
});

export const trackingUnwatched = new Gauge({
  name: 'tracking_shipments_unwatched',
  help: 'Shipments in tracking that no running tracking poller shard watches, at the reconciler’s last pass (each is told to join again).',
  registers: [registry],
});

export const trackingRejoins = new Counter({
  name: 'tracking_rejoins_total',
  help: 'Shipments the tracking reconciler told to join a tracking poller shard again.',
  registers: [registry],
});
