/**
 * Which workflow task emitted each pending shop event. An event is first sent only once that
 * task is recorded: a worker lost before then would make the retried task emit it again, maybe
 * with other contents (another occurredAt, a label's first attempt run again), under the same id.
 * An event built only from recorded inputs (`fixed`: a tracking change, dated by its poll) is the
 * same bytes in any retry of its task, so it need not wait. Workflow state only in memory: replay
 * rebuilds it, and a new run's pending events were all recorded by the run before.
 */
import { workflowInfo } from '@temporalio/workflow';
import type { ShopEventDraft } from '../../domain/shipment';

export class EventTasks {
  /** Sequence → the history length of the task that emitted it; fixed events are not kept. */
  private readonly emittedIn = new Map<number, number>();

  emitted(sequence: number, fixed: boolean): void {
    if (!fixed) this.emittedIn.set(sequence, workflowInfo().historyLength);
  }

  /** Whether the batch holds an event of the current task (not recorded yet) whose body a retried task could build otherwise. */
  unrecorded(batch: ShopEventDraft[]): boolean {
    const task = workflowInfo().historyLength;
    return batch.some((event) => this.emittedIn.get(event.sequence) === task);
  }

  /** The shop has every event up to `sequence`. */
  acknowledged(sequence: number): void {
    for (const known of this.emittedIn.keys()) if (known <= sequence) this.emittedIn.delete(known);
  }
}
