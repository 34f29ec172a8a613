/**
 * One poller shard's membership: the labels it watches, kept in the workflow so that none is lost
 * whatever happens to a worker. Shipments join by signal; a span of polling (one long-running
 * activity) reports what it did to each label and which ones left; the next run starts with the
 * result. Deterministic: no I/O, no clock but the workflow's.
 */
import type {
  LabelProgress,
  PollerCadence,
  PollerInput,
  ShardBound,
  ShardMembers,
  SpanResult,
  WatchedLabel,
  WatchRequest,
} from './definitions';

export class PollerShard {
  private readonly members = new Map<string, WatchedLabel>();
  private readonly cadences: PollerCadence[];

  constructor(input: PollerInput | undefined) {
    this.cadences = [...(input?.cadences ?? [])];
    for (const member of input?.members ?? []) this.members.set(member.workflowId, member);
  }

  get size(): number {
    return this.members.size;
  }

  labels(): IterableIterator<WatchedLabel> {
    return this.members.values();
  }

  get(workflowId: string): WatchedLabel | undefined {
    return this.members.get(workflowId);
  }

  cadenceOf(member: WatchedLabel): PollerCadence {
    return this.cadences[member.cadence]!;
  }

  /**
   * Whether the shard takes this shipment within `bound`: one it watches already always (a join
   * retried, a relabel); a new one while the shard holds fewer labels and its next input stays
   * under the bytes, counted as the continue-as-new input carries them.
   */
  fits(request: WatchRequest, bound: ShardBound): boolean {
    if (this.members.has(request.workflowId)) return true;
    if (this.members.size >= bound.maxLabels) return false;
    return this.bytes() + JSON.stringify(request).length <= bound.maxBytes;
  }

  /** The bytes of the next run's input, as JSON. */
  bytes(): number {
    return JSON.stringify(this.carried()).length;
  }

  describe(): ShardMembers {
    return { members: [...this.members.values()].map(({ workflowId, labelId }) => ({ workflowId, labelId })), bytes: this.bytes() };
  }

  /** A shipment joins (or joins again, e.g. after its registration was retried: what it knows now wins). */
  watch(request: WatchRequest): void {
    const existing = this.members.get(request.workflowId);
    this.members.set(request.workflowId, {
      workflowId: request.workflowId,
      labelId: request.labelId,
      known: request.known,
      cadence: this.cadenceIndex(request.cadence),
      deadline: request.deadline,
      ...(request.account === undefined ? {} : { account: request.account }),
      // Polled at once, as the shipment's own wait polled at once.
      nextPollAt: existing?.nextPollAt ?? Date.now(),
      polls: existing?.polls ?? 0,
      failures: 0,
      failureTold: existing?.failureTold ?? null,
      ...(request.membership === undefined ? {} : { membership: request.membership }),
      ...(existing?.told === undefined || existing.membership !== request.membership ? {} : { told: existing.told }),
    });
  }

  unwatch(workflowId: string): void {
    this.members.delete(workflowId);
  }

  /**
   * What a span reported: each label's progress, and the labels that left, each only for the
   * label the span polled: a shipment that joined again with a new label meanwhile (a relabel)
   * keeps its new membership, which the old label's drop must not remove.
   */
  merge(result: SpanResult): void {
    for (const progress of result.progress) {
      const member = this.members.get(progress.workflowId);
      if (member && isSameLabel(member, progress.labelId)) Object.assign(member, pick(progress));
    }
    result.dropped.forEach((workflowId, i) => {
      const member = this.members.get(workflowId);
      if (member && isSameLabel(member, result.droppedLabels?.[i])) this.members.delete(workflowId);
    });
  }

  /** The next run's input: the members, and only the cadences they use. */
  carried(): PollerInput {
    const used = [...new Set([...this.members.values()].map((m) => m.cadence))].sort((a, b) => a - b);
    const renumber = new Map(used.map((old, index) => [old, index]));
    return {
      cadences: used.map((index) => this.cadences[index]!),
      members: [...this.members.values()].map((m) => ({ ...m, cadence: renumber.get(m.cadence)! })),
    };
  }

  private cadenceIndex(cadence: PollerCadence): number {
    const key = JSON.stringify(cadence);
    const found = this.cadences.findIndex((c) => JSON.stringify(c) === key);
    if (found >= 0) return found;
    this.cadences.push(cadence);
    return this.cadences.length - 1;
  }
}

/** A span's progress or drop of a label applies to this member: the same label, or none named. */
export function isSameLabel(member: WatchedLabel, labelId: string | undefined): boolean {
  return labelId === undefined || member.labelId === labelId;
}

function pick({ known, nextPollAt, polls, failures, failureTold, told }: LabelProgress): Omit<LabelProgress, 'workflowId'> {
  return { known, nextPollAt, polls, failures, failureTold, ...(told === undefined ? {} : { told }) };
}
