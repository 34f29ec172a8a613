/**
 * Backpressure for the import: holds new starts while the task queue's workflow-task backlog is
 * above a bound, so a large file enters at the speed the workers drain it. A flood of starts
 * pushes the server from handing tasks straight to waiting pollers into writing and re-reading
 * a backlog, which measured 5 times slower on the dev server (see README "Benchmarks").
 *
 * It never stalls an import for good. When the backlog reading stops shrinking, it asks whether
 * workers are taking tasks at all (the server's dispatch rate): if they are, the reading is stale
 * (the server refreshes its approximate count now and then, and a count stuck at 287 for 30 s
 * was seen while a worker ran), so starts go at the rate the workers take tasks; if they are
 * not (no worker running), it opens and says so once. Orders started then wait durably.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';

export interface BacklogGateOptions {
  /** Starts wait while the backlog is at or above this. */
  maxBacklog: number;
  /** How often the backlog is read while waiting (shared by all waiting starts). */
  checkEveryMs?: number;
  /** The gate opens when the backlog has not shrunk for this long. */
  stalledAfterMs?: number;
  /** Reads the backlog; undefined when the server cannot tell (then the gate stays open). */
  readBacklog: () => Promise<number | BacklogReading | undefined>;
  onNotice?: (message: string) => void;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** The workflow-task backlog, and how fast workers take tasks from the queue (when known). */
export interface BacklogReading {
  backlog: number;
  dispatchPerSecond?: number;
}

export class BacklogGate {
  private readonly checkEveryMs: number;
  private readonly stalledAfterMs: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private disabled = false;
  private reading: Promise<number | undefined> | null = null;
  private lastReadAt = -Infinity;
  private lastBacklog: number | undefined;
  private lastDispatch: number | undefined;
  /** While the reading is stale but workers take tasks: when the next start may go. */
  private nextSlotAt = 0;
  private pacingNoticed = false;
  /** Lowest backlog seen in the current wait, and when it was last lowered. */
  private low = Infinity;
  private lowAt = 0;
  /** Times starts waited for the backlog, for the summary. */
  waits = 0;

  constructor(private readonly options: BacklogGateOptions) {
    this.checkEveryMs = options.checkEveryMs ?? 500;
    this.stalledAfterMs = options.stalledAfterMs ?? 30_000;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => sleep(ms));
  }

  /** Resolves when a start may go ahead. */
  async admit(): Promise<void> {
    let waited = false;
    for (;;) {
      if (this.disabled || this.options.maxBacklog <= 0) return;
      const backlog = await this.backlog();
      if (backlog === undefined) return;
      if (backlog < this.options.maxBacklog) {
        this.low = Infinity;
        return;
      }
      if (backlog < this.low) {
        this.low = backlog;
        this.lowAt = this.now();
      } else if (this.now() - this.lowAt >= this.stalledAfterMs && (this.lastDispatch ?? 0) > 0) {
        return this.paceAt(backlog, this.lastDispatch!);
      } else if (this.now() - this.lowAt >= this.stalledAfterMs) {
        this.disabled = true;
        this.options.onNotice?.(
          `the workflow task backlog stayed at ${backlog} for ${Math.round(this.stalledAfterMs / 1000)} s (is a worker running?): ` +
            'starting the remaining orders without waiting; they wait durably for a worker',
        );
        return;
      }
      if (!waited) {
        waited = true;
        this.waits++;
      }
      await this.sleep(this.checkEveryMs);
    }
  }

  /** A stale reading while workers take tasks: one start per task they take, in order of arrival. */
  private async paceAt(backlog: number, perSecond: number): Promise<void> {
    if (!this.pacingNoticed) {
      this.pacingNoticed = true;
      this.options.onNotice?.(
        `the workflow task backlog read ${backlog} for ${Math.round(this.stalledAfterMs / 1000)} s while workers took ` +
          `${perSecond.toFixed(1)} tasks/s: starting orders at that rate until the reading moves`,
      );
    }
    const now = this.now();
    const slot = Math.max(now, this.nextSlotAt);
    this.nextSlotAt = slot + 1000 / perSecond;
    if (slot > now) await this.sleep(slot - now);
  }

  /** The backlog, read at most once per checkEveryMs however many starts are waiting. */
  private async backlog(): Promise<number | undefined> {
    if (this.now() - this.lastReadAt < this.checkEveryMs) return this.lastBacklog;
    this.reading ??= this.options
      .readBacklog()
      .catch((err: unknown) => {
        this.disabled = true;
        this.options.onNotice?.(
          `cannot read the task queue backlog (${err instanceof Error ? err.message : String(err)}): importing without backpressure`,
        );
        return undefined;
      })
      .then((reading) => {
        const value = typeof reading === 'object' ? reading.backlog : reading;
        this.lastDispatch = typeof reading === 'object' ? reading.dispatchPerSecond : undefined;
        this.lastBacklog = value;
        this.lastReadAt = this.now();
        this.reading = null;
        if (value === undefined && !this.disabled) {
          this.disabled = true;
          this.options.onNotice?.('the server does not report task queue backlog: importing without backpressure');
        }
        return value;
      });
    return this.reading;
  }
}

/** The workflow-task backlog of a task queue, from DescribeTaskQueue with stats. */
export function workflowBacklogReader(client: Client, namespace: string, taskQueue: string): () => Promise<BacklogReading | undefined> {
  return async () => {
    const response = await client.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
      reportStats: true,
    });
    const count = response.stats?.approximateBacklogCount;
    if (count === undefined || count === null) return undefined;
    const dispatch = response.stats?.tasksDispatchRate;
    return { backlog: Number(count), ...(typeof dispatch === 'number' ? { dispatchPerSecond: dispatch } : {}) };
  };
}
