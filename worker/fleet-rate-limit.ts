/**
 * Relays the shipping API account's Retry-After between the workers of a fleet through the
 * account's workflow (workflows/account.ts): a 429 one worker gets holds every worker's calls.
 * Costs history only when a 429 is relayed: a signal, and one update per listening worker.
 */
import { createHash } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { accountRateLimitedSignal, ACCOUNT_WORKFLOW_TYPE, awaitAccountRateLimitUpdate } from '../workflows/account';
import { boundHold } from '../shipping-api/retry-after';

export interface FleetRateLimits {
  /** Tells the fleet: no call before `until` (fire and forget). */
  publish(until: number): void;
  /**
   * Calls `listener` with each later not-before time the fleet learns, starting with the one
   * already recorded (resolves once that is read, before this worker makes any call).
   */
  subscribe(listener: (until: number) => void): Promise<void>;
  close(): Promise<void>;
}

/**
 * The account's workflow id: a digest of the API's address and key and the task queue, so the
 * workers of one fleet (one task queue, one account) meet, and the key never reaches Temporal.
 * (The workflow runs on that task queue: workers of another queue could not run it.)
 */
export function accountWorkflowId(baseUrl: string, apiKey: string, taskQueue: string): string {
  const digest = createHash('sha256')
    .update(new URL(baseUrl).origin)
    .update('\u0000')
    .update(apiKey)
    .update('\u0000')
    .update(taskQueue)
    .digest('hex');
  return `shipping-api-account-${digest.slice(0, 16)}`;
}

export function fleetRateLimits(options: {
  client: Client;
  taskQueue: string;
  workflowId: string;
  log: {
    warn(message: string, meta?: Record<string, unknown>): void;
    info(message: string, meta?: Record<string, unknown>): void;
    debug(message: string, meta?: Record<string, unknown>): void;
  };
}): FleetRateLimits {
  const { client, taskQueue, workflowId, log } = options;
  const listeners: Array<(until: number) => void> = [];
  const stop = new AbortController();
  let known = 0;
  let published = 0;
  let started: Promise<WorkflowHandle> | null = null;

  const handle = (): Promise<WorkflowHandle> => {
    started ??= client.workflow
      .start(ACCOUNT_WORKFLOW_TYPE, { taskQueue, workflowId, args: [], workflowIdConflictPolicy: 'USE_EXISTING' })
      .catch((err: unknown) => {
        started = null;
        throw err;
      });
    return started;
  };

  async function listen(): Promise<void> {
    while (!stop.signal.aborted) {
      try {
        const account = await handle();
        const until = boundHold(
          await client.withAbortSignal(stop.signal, () => account.executeUpdate(awaitAccountRateLimitUpdate, { args: [known] })),
          Date.now(),
        );
        if (until > known) {
          known = until;
          for (const listener of listeners) listener(until);
          // One line per relayed 429 and worker: when this worker learned of the hold.
          log.info('account held by the fleet', { until: new Date(until).toISOString() });
        }
      } catch (err) {
        if (stop.signal.aborted) return;
        // The run continued as new, or was terminated: start (or find) it again.
        started = null;
        if (!(err instanceof WorkflowUpdateFailedError)) log.debug('fleet rate-limit relay: retrying', { error: String(err) });
        await new Promise((resolve) => setTimeout(resolve, 1000).unref());
      }
    }
  }

  /**
   * The hold recorded before this worker started, read from the account workflow's history:
   * a worker (re)started right after a 429 knows it before its first call, even when no worker
   * has run the account workflow's task for that signal yet.
   */
  async function recordedHold(): Promise<number> {
    try {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      const converter = client.options.loadedDataConverter;
      let until = 0;
      for (const event of history.events ?? []) {
        const payloads =
          event.workflowExecutionSignaledEventAttributes?.signalName === accountRateLimitedSignal.name
            ? event.workflowExecutionSignaledEventAttributes.input?.payloads
            : event.workflowExecutionStartedEventAttributes?.input?.payloads;
        if (!payloads || payloads.length === 0) continue;
        const value = await decodeFromPayloadsAtIndex<unknown>(converter, 0, payloads);
        const time = typeof value === 'number' ? value : (value as { notBefore?: unknown } | undefined)?.notBefore;
        if (typeof time === 'number' && time > until) until = time;
      }
      return boundHold(until, Date.now());
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) log.debug('fleet rate-limit relay: no recorded hold read', { error: String(err) });
      return 0;
    }
  }

  let listening: Promise<void> | null = null;
  return {
    publish(until) {
      // Calls in flight when the 429 came get 429s too: relay a new time, not each of them.
      if (until <= Math.max(known, published) + 100) return;
      published = until;
      void handle()
        .then((account) => account.signal(accountRateLimitedSignal, until))
        .catch((err: unknown) => log.warn('fleet rate-limit relay: could not tell the fleet', { error: String(err) }));
    },
    async subscribe(listener) {
      listeners.push(listener);
      const recorded = await recordedHold();
      if (recorded > Date.now()) {
        known = Math.max(known, recorded);
        listener(recorded);
        log.info('account held by the fleet', { until: new Date(recorded).toISOString(), recorded: true });
      }
      listening ??= listen();
    },
    async close() {
      stop.abort();
      // A waiting update may not end with the abort on every connection type: do not wait for it.
      await Promise.race([listening, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    },
  };
}
