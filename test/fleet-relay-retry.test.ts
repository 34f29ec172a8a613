/**
 * The fleet's relay of a hold (pacing/fleet-rate-limit.ts) reads the account workflow's history as
 * the server writes it: it reads the next run from its start when one continues as new, and backs
 * off only while reading fails. (Through a real server: test/fleet-noise.test.ts.)
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { accountHoldsWorkflowId, ALONE_WARN_MS, fleetRateLimits, listenRetryMs } from '../pacing/fleet-rate-limit';
import {
  accountRateLimitedSignal,
  ACCOUNT_HOLDS_RUN_MS,
  ACCOUNT_HOLDS_TASK_QUEUE,
  ACCOUNT_HOLDS_WORKFLOW_TYPE,
  LEASE_MS,
} from '../workflow-definitions/account';

const silentLog = { warn: () => undefined, info: () => undefined, debug: () => undefined };

type Event = temporal.api.history.v1.IHistoryEvent;
const payloads = (value: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(value)] });
const runStarted = (notBefore: number): Event => ({ workflowExecutionStartedEventAttributes: { input: payloads({ notBefore }) } });
const held = (until: number): Event => ({
  workflowExecutionSignaledEventAttributes: { signalName: accountRateLimitedSignal.name, input: payloads(until) },
});
const continuedAsNew: Event = { workflowExecutionContinuedAsNewEventAttributes: { newExecutionRunId: 'next' } };

/** A page of the history (`token` null: the run has closed), or a failed read. */
type Page = { events: Event[]; token: string | null } | Error;

/**
 * A client whose account workflow's history ('w') is read as `pages`, in turn, and its hold
 * mailbox's ('w-holds') as `mailboxPages` (then a long poll with nothing new); the account
 * workflow's requests' page tokens are kept in `reads`, the mailbox's in `mailboxReads`.
 */
function clientReading(pages: Page[], mailboxPages: Page[] = []) {
  const reads: Array<{ at: number; token: string | undefined }> = [];
  const mailboxReads: Array<{ at: number; token: string | undefined }> = [];
  const signal = vi.fn(async () => undefined);
  const client = {
    workflow: {
      start: vi.fn(async () => ({})),
      signalWithStart: vi.fn(async () => ({})),
      getHandle: () => ({ fetchHistory: async () => ({ events: [] }), signal }),
    },
    workflowService: {
      getWorkflowExecutionHistory: vi.fn((request: { execution: { workflowId: string }; nextPageToken?: Uint8Array }) => {
        const mailbox = request.execution.workflowId === accountHoldsWorkflowId('w');
        (mailbox ? mailboxReads : reads).push({
          at: Date.now(),
          token: request.nextPageToken ? Buffer.from(request.nextPageToken).toString() : undefined,
        });
        const next = (mailbox ? mailboxPages : pages).shift();
        if (next === undefined) return new Promise(() => undefined); // a long poll with nothing new
        if (next instanceof Error) return Promise.reject(next);
        return Promise.resolve({
          history: { events: next.events },
          nextPageToken: next.token === null ? new Uint8Array() : Buffer.from(next.token),
        });
      }),
    },
    connection: { withAbortSignal: (_signal: AbortSignal, fn: () => unknown) => fn() },
    options: { namespace: 'default', loadedDataConverter: { payloadConverter: defaultPayloadConverter, payloadCodecs: [] } },
  } as unknown as Client;
  return { client, reads, mailboxReads, signal };
}

describe('the relay reading the account workflow history', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('hears a hold signalled to the run it reads, and one the next run carries or is signalled after a continue-as-new', async () => {
    const first = Date.now() + 5000;
    const carried = first + 1000;
    const signalled = first + 2000;
    const { client, reads } = clientReading([
      { events: [runStarted(0)], token: 'a' },
      { events: [held(first), held(first - 500)], token: 'b' },
      { events: [continuedAsNew], token: null },
      { events: [runStarted(carried)], token: 'c' },
      { events: [held(signalled)], token: 'd' },
    ]);
    const fleet = fleetRateLimits({ client, taskQueue: 'q', workflowId: 'w', log: silentLog });
    const heard: number[] = [];
    await fleet.subscribe((t) => heard.push(t));
    await vi.advanceTimersByTimeAsync(0);
    // Each page asked for at once; the next run read from its start (no token), as the first was.
    expect(reads.map((r) => r.token)).toEqual([undefined, 'a', 'b', undefined, 'c', 'd']);
    expect(reads.every((r) => r.at === reads[0]!.at)).toBe(true);
    // The earlier time a late 429 named is no news; the carried one is.
    expect(heard).toEqual([first, carried, signalled]);
    void fleet.close();
    await vi.advanceTimersByTimeAsync(1000);
  });

  it('skips an event it cannot read, warning once, and hears the holds after it without reading the run again', async () => {
    const until = Date.now() + 5000;
    const unreadable: Event = {
      workflowExecutionSignaledEventAttributes: {
        signalName: accountRateLimitedSignal.name,
        input: { payloads: [{ metadata: { encoding: Buffer.from('binary/encrypted') }, data: Buffer.from('?') }] },
      },
    };
    const { client, reads } = clientReading([{ events: [runStarted(0), unreadable, held(until)], token: 'a' }]);
    const warnings: string[] = [];
    const fleet = fleetRateLimits({ client, taskQueue: 'q', workflowId: 'w', log: { ...silentLog, warn: (m) => warnings.push(m) } });
    const heard: number[] = [];
    await fleet.subscribe((t) => heard.push(t));
    await vi.advanceTimersByTimeAsync(0);
    expect(heard).toEqual([until]);
    expect(reads.map((r) => r.token)).toEqual([undefined, 'a']);
    expect(warnings).toEqual(['fleet rate-limit relay: an event of the account workflow could not be read']);
    void fleet.close();
    await vi.advanceTimersByTimeAsync(1000);
  });

  it('passes on no hold already over', async () => {
    const { client } = clientReading([{ events: [runStarted(Date.now() - 1000), held(Date.now() - 10)], token: 'a' }]);
    const fleet = fleetRateLimits({ client, taskQueue: 'q', workflowId: 'w', log: silentLog });
    const heard: number[] = [];
    await fleet.subscribe((t) => heard.push(t));
    await vi.advanceTimersByTimeAsync(0);
    expect(heard).toEqual([]);
    void fleet.close();
    await vi.advanceTimersByTimeAsync(1000);
  });

  it("hears a hold from the account's mailbox, and starts the mailbox again when its run has closed (timed out)", async () => {
    const first = Date.now() + 5000;
    const next = first + 1000;
    const { client, mailboxReads } = clientReading(
      [],
      [
        { events: [held(first)], token: 'm' },
        { events: [], token: null },
        { events: [held(next)], token: 'n' },
      ],
    );
    const fleet = fleetRateLimits({ client, taskQueue: 'q', workflowId: 'w', log: silentLog });
    const heard: number[] = [];
    await fleet.subscribe((t) => heard.push(t));
    await vi.advanceTimersByTimeAsync(0);
    expect(heard).toEqual([first, next]);
    expect(mailboxReads.map((r) => r.token)).toEqual([undefined, 'm', undefined, 'n']);
    const mailboxStarts = vi.mocked(client.workflow.start).mock.calls.filter(([type]) => type === ACCOUNT_HOLDS_WORKFLOW_TYPE);
    expect(mailboxStarts).toHaveLength(2);
    expect(mailboxStarts[0]![1]).toMatchObject({
      workflowId: 'w-holds',
      taskQueue: ACCOUNT_HOLDS_TASK_QUEUE,
      workflowRunTimeout: ACCOUNT_HOLDS_RUN_MS,
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    void fleet.close();
    await vi.advanceTimersByTimeAsync(1000);
  });

  it('relays a hold to the mailbox (started if none runs) and to the account workflow, once for calls in flight', async () => {
    const { client, signal } = clientReading([]);
    const fleet = fleetRateLimits({ client, taskQueue: 'q', workflowId: 'w', log: silentLog });
    const until = Date.now() + 5000;
    fleet.publish(until);
    fleet.publish(until + 50); // another call in flight at the 429
    await vi.advanceTimersByTimeAsync(0);
    expect(client.workflow.signalWithStart).toHaveBeenCalledTimes(1);
    expect(client.workflow.signalWithStart).toHaveBeenCalledWith(ACCOUNT_HOLDS_WORKFLOW_TYPE, {
      taskQueue: ACCOUNT_HOLDS_TASK_QUEUE,
      workflowId: 'w-holds',
      args: [],
      workflowRunTimeout: ACCOUNT_HOLDS_RUN_MS,
      signal: accountRateLimitedSignal,
      signalArgs: [until],
    });
    expect(signal).toHaveBeenCalledWith(accountRateLimitedSignal, until);
    void fleet.close();
    await vi.advanceTimersByTimeAsync(1000);
  });

  it('backs off while reading keeps failing, to a second at most, and reads the run from its start again', async () => {
    expect([1, 2, 3, 4, 5, 6, 10].map(listenRetryMs)).toEqual([50, 100, 200, 400, 800, 1000, 1000]);
    const failing = Array.from({ length: 4 }, () => new Error('unavailable'));
    const { client, reads } = clientReading([{ events: [], token: 'a' }, ...failing]);
    const fleet = fleetRateLimits({ client, taskQueue: 'q', workflowId: 'w', log: silentLog });
    await fleet.subscribe(() => undefined);
    await vi.advanceTimersByTimeAsync(50 + 100 + 200 + 400 + 10);
    expect(reads.map((r) => r.at - reads[0]!.at)).toEqual([0, 0, 50, 150, 350, 750]);
    expect(reads.map((r) => r.token)).toEqual([undefined, 'a', undefined, undefined, undefined, undefined]);
    void fleet.close();
    await vi.advanceTimersByTimeAsync(1000);
  });
});

describe("the fleet channel's pace report", () => {
  /** A client whose account workflow answers each pace report with `answer`, or what it returns then (an Error: the update fails with it). */
  function clientAnswering(answer: unknown) {
    const now = () => (typeof answer === 'function' ? (answer as () => unknown)() : answer);
    const account = { executeUpdate: vi.fn(async () => (now() instanceof Error ? Promise.reject(now() as Error) : now())) };
    return {
      // Updates go through a handle by workflow id alone: start's names the run it found as the chain's first.
      workflow: { start: vi.fn(async () => ({ firstExecutionRunId: 'found' })), getHandle: () => account },
      withAbortSignal: (_signal: AbortSignal, fn: () => unknown) => fn(),
    } as unknown as Client;
  }
  const grant = {
    rate: 2.5,
    phase: 0.25,
    grid: { rate: 10.2, origin: 1 },
    accountRate: 10,
    slowStart: false,
    noise: { share: 0.1, answers: 40 },
    freshShare: 0.5,
  };
  const report = { want: 3, accepted: 2, limited: 0 };

  /** A channel whose account workflow answers with `answer()`, its warn and info lines and what it told onAlone. */
  function watchedChannel(answer: () => unknown) {
    const lines: string[] = [];
    const log = {
      debug: () => undefined,
      warn: (m: string) => void lines.push(`warn ${m}`),
      info: (m: string) => void lines.push(`info ${m}`),
    };
    const alone: boolean[] = [];
    const fleet = fleetRateLimits({
      client: clientAnswering(answer),
      taskQueue: 'q',
      workflowId: 'w',
      log,
      onAlone: (a) => void alone.push(a),
    });
    return { fleet, lines, alone };
  }

  it('warns once (and tells onAlone) when the account workflow has answered no report for ALONE_WARN_MS, and says when it answers again', async () => {
    vi.useFakeTimers();
    try {
      let answer: unknown = new Error('workflow execution not found');
      const { fleet, lines, alone } = watchedChannel(() => answer);
      // Reports a lease or more apart are not in a row (the worker had no calls between them).
      expect(await fleet.pace(report)).toBeNull();
      await vi.advanceTimersByTimeAsync(30_000);
      for (let s = 0; s < ALONE_WARN_MS / 1000; s++) {
        expect(await fleet.pace(report)).toBeNull();
        await vi.advanceTimersByTimeAsync(1000);
      }
      expect(lines).toEqual([]);
      expect(alone).toEqual([]);
      for (let s = 0; s < 5; s++) expect(await fleet.pace(report)).toBeNull();
      expect(lines).toEqual(['warn fleet pace: no share from the account workflow for 10 s, this worker paces alone']);
      answer = grant;
      expect(await fleet.pace(report)).not.toBeNull();
      expect(await fleet.pace(report)).not.toBeNull();
      expect(lines.slice(1)).toEqual(['info fleet pace: the account workflow answers again, this worker shares its rate']);
      expect(alone).toEqual([true, false]);
      await fleet.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops counting a warned worker as alone once it has made no report for two leases (it has no calls to pace)', async () => {
    vi.useFakeTimers();
    try {
      const { fleet, lines, alone } = watchedChannel(() => new Error('workflow execution not found'));
      for (let s = 0; s <= ALONE_WARN_MS / 1000; s++) {
        expect(await fleet.pace(report)).toBeNull();
        await vi.advanceTimersByTimeAsync(1000);
      }
      expect(alone).toEqual([true]);
      // Reports a second apart keep it alone; then the worker's calls stop.
      await vi.advanceTimersByTimeAsync(2 * LEASE_MS - 1000 - 1);
      expect(alone).toEqual([true]);
      await vi.advanceTimersByTimeAsync(2);
      expect(alone).toEqual([true, false]);
      expect(lines.at(-1)).toBe('info fleet pace: no calls to pace for two leases, this worker no longer counts as pacing alone');
      // Calls again, still unanswered: warned again only after ALONE_WARN_MS in a row.
      for (let s = 0; s < ALONE_WARN_MS / 1000; s++) {
        expect(await fleet.pace(report)).toBeNull();
        await vi.advanceTimersByTimeAsync(1000);
      }
      expect(alone).toEqual([true, false]);
      expect(await fleet.pace(report)).toBeNull();
      expect(alone).toEqual([true, false, true]);
      await fleet.close();
      await vi.advanceTimersByTimeAsync(3 * LEASE_MS);
      expect(alone).toEqual([true, false, true]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("passes a grant on as the share to pace by, and logs the fleet's rate at debug", async () => {
    const debug: Array<[string, unknown]> = [];
    const log = { ...silentLog, debug: (m: string, meta?: unknown) => void debug.push([m, meta]) };
    const fleet = fleetRateLimits({ client: clientAnswering(grant), taskQueue: 'q', workflowId: 'w', log });
    expect(await fleet.pace(report)).toEqual({
      rate: 2.5,
      phase: 0.25,
      slowStart: false,
      grid: grant.grid,
      noise: grant.noise,
      freshShare: 0.5,
      accountRate: 10,
    });
    expect(debug).toEqual([['fleet pace: share', { rate: 2.5, accountRate: 10, slowStart: false, noiseShare: 0.1, want: 3 }]]);
    await fleet.close();
  });

  // A rate that is not a number left every waiting call of the worker unpaced (its next slot NaN,
  // never in the future); a floor over 1 would take every 429 as noise and hold nothing.
  it.each([
    ['a rate that is not a number (NaN through JSON)', { ...grant, rate: null }],
    ['a rate below zero', { ...grant, rate: -1 }],
    ['no rate', { phase: 0 }],
    ['a grid of no slots', { ...grant, grid: { rate: 0, origin: 1 } }],
    ['a noise floor over 1', { ...grant, noise: { share: 7, answers: 40 } }],
    ["an account's rate of none", { ...grant, accountRate: 0 }],
    ['not an object', 'fast'],
  ])('ignores %s, warning: the worker paces alone until a grant is a pace', async (_what, answer) => {
    const warnings: string[] = [];
    const log = { ...silentLog, warn: (message: string) => void warnings.push(message) };
    const fleet = fleetRateLimits({ client: clientAnswering(answer), taskQueue: 'q', workflowId: 'w', log });
    expect(await fleet.pace(report)).toBeNull();
    expect(warnings).toEqual(['fleet pace: a grant that is no pace, ignored']);
    await fleet.close();
  });
});
