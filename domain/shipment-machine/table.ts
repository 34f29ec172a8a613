/**
 * The phase × event table of docs/workflow.md, generated from the machine itself: each event is
 * played on a shipment in each phase and the machine's answer summarised (test/docs.test.ts
 * keeps the doc's copy equal to it).
 */
import type { ShipmentCommand } from './commands';
import type { ShipmentEvent } from './events';
import { shipmentMachine } from './index';
import { initialMachineState, type MachineState } from './state';

type R = string;
type S = MachineState<R>;
const machine = shipmentMachine<R>();

const play = (events: Array<ShipmentEvent<R> | ((s: S) => ShipmentEvent<R>)>): S =>
  events.reduce<S>(
    (s, e) => machine.decide(s, typeof e === 'function' ? e(s) : e).state,
    initialMachineState<R>({
      labelRequest: 'request',
      config: { terminalTags: ['Delivered', 'Exception', 'Cancelled'], connector: 'shopify' },
      shopOrder: { facts: { status: 'open', address: 'a', lines: 'l' }, modifiedAt: '2026-01-01T00:00:00Z' },
    }),
  );

const shop =
  (status: 'open' | 'on_hold' | 'cancelled' | 'refunded', address = 'a', at = '2026-01-01T00:00:01Z') =>
  (s: S): ShipmentEvent<R> => ({
    type: 'shopChanged',
    facts: { status, address: s.shop!.facts.address === address ? address : address, lines: 'l' },
    modifiedAt: at,
    labelRequest: `request to ${address}`,
  });
const created = (s: S): ShipmentEvent<R> => ({
  type: 'labelCreated',
  revision: s.relabel?.revision ?? s.labelCall ?? s.revision,
  labelId: `label-${s.revision}`,
});
const tracked: Array<ShipmentEvent<R> | ((s: S) => ShipmentEvent<R>)> = [
  { type: 'started' },
  created,
  { type: 'orderRead', labelId: 'label-1', ok: true },
  shop('open', 'b'),
];

/** A shipment in each phase (and one whose operator's relabel is being made). */
export const PHASE_STATES: Array<[string, S]> = [
  ['creating_label', play([{ type: 'started' }])],
  ['awaiting_correction', play([{ type: 'started' }, { type: 'labelRejected', revision: 1, correctable: true, kind: 'courier_error' }])],
  ['held_in_shop', play([{ type: 'started' }, shop('on_hold'), { type: 'labelCallStopped', revision: 1 }])],
  ['reading_order', play([{ type: 'started' }, created])],
  ['tracking', play(tracked)],
  ['tracking, relabel being made', play([...tracked, (s) => ({ type: 'relabelRequested', modifiedAt: s.shop!.modifiedAt })])],
  ['completed', play([...tracked, { type: 'operatorCancelled' }])],
];

const LATER = '2026-01-01T00:00:02Z';

/** The events of the table's rows, as they would come to a shipment in that state. */
export const TABLE_EVENTS: Array<[string, (s: S) => ShipmentEvent<R>]> = [
  ['label created', created],
  [
    'label rejected',
    (s) => ({
      type: 'labelRejected',
      revision: s.relabel?.revision ?? s.labelCall ?? s.revision,
      correctable: true,
      kind: 'courier_error',
    }),
  ],
  ['label call stopped', (s) => ({ type: 'labelCallStopped', revision: s.relabel?.revision ?? s.labelCall ?? s.revision })],
  ['order read', (s) => ({ type: 'orderRead', labelId: s.relabel?.labelId ?? s.labelId ?? 'label-1', ok: true })],
  [
    'tracking news',
    (s) => ({
      type: 'trackingNews',
      labelId: s.labelId ?? 'label-1',
      failed: false,
      change: { tag: 'InTransit', subtag: null, trackingNumber: 'T1', checkpoints: 1, lastCheckpointTime: 't1' },
    }),
  ],
  [
    'tracking news: Delivered',
    (s) => ({
      type: 'trackingNews',
      labelId: s.labelId ?? 'label-1',
      failed: false,
      change: { tag: 'Delivered', subtag: null, trackingNumber: 'T1', checkpoints: 0, lastCheckpointTime: null },
    }),
  ],
  ['tracking lost (reconciler)', () => ({ type: 'trackingLost' })],
  ['shop: cancelled', (s) => shop('cancelled', s.shop!.facts.address, LATER)(s)],
  ['shop: on hold', (s) => shop('on_hold', s.shop!.facts.address, LATER)(s)],
  ['shop: released', (s) => ({ type: 'shopChanged', facts: { ...s.shop!.facts, status: 'open' }, modifiedAt: LATER })],
  ['shop: address changed', (s) => shop(s.shop!.facts.status, 'c', LATER)(s)],
  ['operator: resubmit', () => ({ type: 'resubmitted', labelRequest: 'corrected' })],
  ['operator: relabel from the shop', (s) => ({ type: 'relabelRequested', modifiedAt: s.shop!.modifiedAt })],
  ['operator: cancel', () => ({ type: 'operatorCancelled' })],
  ['operator: resolve', () => ({ type: 'attentionResolved' })],
  ['operator: redeliver', () => ({ type: 'redeliverRequested' })],
  [
    'deadline of the wait',
    (s) => ({
      type: 'deadlinePassed',
      deadline: s.phase === 'held_in_shop' ? 'hold' : s.phase === 'awaiting_correction' ? 'correction' : 'tracking',
      wait: s.wait,
    }),
  ],
];

function describeCommand(c: ShipmentCommand<R>): string {
  switch (c.type) {
    case 'createLabel':
      return c.fromOffer ? "make the offer's label" : 'make the label';
    case 'stopLabelCall':
      return 'stop the label call';
    case 'readOrder':
      return 'read the order';
    case 'watchTracking':
      return 'watch tracking';
    case 'unwatchTracking':
      return 'stop watching';
    case 'tellShop':
      return `tell ${c.event.type}`;
    case 'dropUntold':
      return 'drop untold events';
    case 'redeliver':
      return 'redeliver';
    case 'startDeadline':
      return `${c.deadline} deadline`;
    case 'finish':
      return `finish ${c.outcome}`;
    case 'fail':
      return 'fail';
    case 'relabelEnded':
      return c.made ? 'relabel made' : 'relabel not made';
  }
}

/** The machine's answer, in a few words. */
function cell(s: S, event: ShipmentEvent<R>): string {
  const why = machine.refusal(s, event);
  if (why !== null) return 'refused';
  const { state, commands } = machine.decide(s, event);
  const parts: string[] = [];
  if (state.phase !== s.phase) parts.push(`→ ${state.phase}`);
  if (state.revision !== s.revision) parts.push(`revision ${state.revision}`);
  const mark = state.shop?.attention ?? null;
  if (mark !== (s.shop?.attention ?? null)) parts.push(mark ? `mark ${mark}` : 'mark cleared');
  if (JSON.stringify(state.shop?.resolved) !== JSON.stringify(s.shop?.resolved)) parts.push('mark resolved');
  if ((state.shop?.offerSeq ?? 0) !== (s.shop?.offerSeq ?? 0)) parts.push(state.shop?.offer ? 'new offer' : 'no offer');
  if (state.labelsToVoid.length !== s.labelsToVoid.length) parts.push('label left to void');
  if (JSON.stringify(state.deferred) !== JSON.stringify(s.deferred)) parts.push('held until the relabel settles');
  if (state.cancelRequested && !s.cancelRequested && commands.length === 0) parts.push('noted: ends once the call answers');
  parts.push(...commands.map(describeCommand));
  if (parts.length === 0) return JSON.stringify(state) === JSON.stringify(s) ? '—' : 'noted';
  return parts.join('; ');
}

/** The table as markdown: one row per event, one column per phase. */
export function phaseEventTable(): string {
  const header = `| event | ${PHASE_STATES.map(([phase]) => phase).join(' | ')} |`;
  const rule = `|---|${PHASE_STATES.map(() => '---').join('|')}|`;
  const rows = TABLE_EVENTS.map(([name, make]) => `| ${name} | ${PHASE_STATES.map(([, s]) => cell(s, make(s))).join(' | ')} |`);
  return [header, rule, ...rows].join('\n');
}
