/**
 * A simulated shipping API account and a fleet of paced workers on vitest's fake clock, for the
 * account pacer's tests. The API, like the fake (fake-shipping-api/fault-injector.ts), first takes
 * a token from the account's bucket (`limit` a second, one second's worth of burst; 429 with the
 * whole seconds until a token, at least 1), or counts the call in a sliding window of a second
 * (`limiter: 'window'`), then refuses a `noise` share of the calls it let through at random (429,
 * Retry-After drawn from `noiseRetryAfterS`): a quota shared with other clients or a flaky proxy,
 * which no pace causes. Each worker has its own pacer; a 429 its pacer takes as the limit's
 * reaches every worker's pacer (its own too) `relayMs` later, as the fleet channel does, and the
 * workers' fresh answers are pooled, read every 10 s by a worker learning noise
 * (worker/fleet-rate-limit.ts). A refused call waits its own Retry-After and tries again.
 */
import { setMaxListeners } from 'node:events';
import { vi } from 'vitest';
import { AccountPacer } from '../../pacing/account-pacer';
import { FleetPace } from '../../pacing/fleet-pace';
import { mulberry32 } from '../../fake-shipping-api/faults';
import { nextPollDue } from '../../domain/tracking';
import { FRESH_READ_MS } from '../../pacing/fleet-rate-limit';
import { poolFresh, type FreshAnswers } from '../../workflow-definitions/account';

export interface SimOptions {
  seconds: number;
  /** Calls a second the account allows at second `t` of the run; null: no limit. */
  limit: (t: number) => number | null;
  /** Share of the calls let through that are answered 429 anyway, at second `t`. */
  noise?: (t: number) => number;
  /** Whole seconds, drawn evenly: the Retry-After of a random 429. Default [1, 1]. */
  noiseRetryAfterS?: [number, number];
  /**
   * `clients`: that many loops always have a call to make (a backlog), each waiting its own
   * retries, and due again `thinkMs` after the last was due (a tracking poller's interval, by
   * its rule: domain/tracking.ts, nextPollDue).
   * `rampMs`: the loops join evenly over this span, not all at once (shipments reaching tracking
   * one by one after their labels).
   * `pauseS`: the loops make no call from second `pauseS[0]` of the run to `pauseS[1]` (a batch
   * done, the next not yet in: the fleet idle beside its rate).
   * `single`: besides the loops, one call every `everyS` seconds on worker `worker` (a label on
   * a worker with nothing else for the account).
   * `perSecond`: new calls arrive at that rate whatever happens (orders coming in).
   */
  demand:
    | { clients: number; thinkMs?: number; rampMs?: number; pauseS?: [number, number]; single?: { everyS: number; worker: number } }
    | { perSecond: number };
  /** The limit counts refused calls too (its bucket goes below empty, down to a second's worth); default: only accepted ones. */
  refusedTakesToken?: boolean;
  /**
   * `window`: at most `limit` calls in any second (a sliding log: 429 with the whole seconds until
   * the window has room, at least 1), no burst over it; default the token bucket above.
   */
  limiter?: 'bucket' | 'window';
  /** Random 429s before the bucket (they then use none of the limit); default after it, as the fake. */
  noiseFirst?: boolean;
  workers?: number;
  relayMs?: number;
  /** The pacers are told that holds are relayed (AccountPacerOptions.fleetRelays); default true, as the worker does with a fleet channel. */
  fleetRelays?: boolean;
  roundTripMs?: number;
  /**
   * The worker a call of loop `loop` goes to; default `loop % workers`, every loop pinned, the
   * workers evenly busy. `random` draws from the run's seeded generator (Temporal hands an
   * activity task to whichever worker polls).
   */
  workerOf?: (loop: number, random: () => number) => number;
  initialRate?: number;
  seed?: number;
  /**
   * `fleet` (default): the account's one rate kept for the fleet (pacing/fleet-pace.ts, in the
   * account workflow), each worker's report answered `relayMs` later; `worker`: each worker finds
   * its own pace (the pacer before issue 44).
   */
  shares?: 'fleet' | 'worker';
  /** The account's ceiling (maxRequestsPerSecond), as every worker reports it. */
  maxRate?: number;
}

/** One second of the run. */
export interface SimSecond {
  accepted: number;
  /** 429s of the account's bucket (the limit's). */
  limited: number;
  /** 429s at random (not the pace's doing). */
  noise: number;
  /** The first worker's pace and the noise it knows, at the end of the second. */
  rate: number;
  noiseShare: number | null;
  /** Every worker's pace and noise, for tracing. */
  workers: Array<{ rate: number; noiseShare: number | null }>;
  /** The fleet's rate and noise floor (0: none) at the end of the second (shares 'fleet'). */
  fleet?: { rate: number; noise: number };
}

export interface SimRun {
  seconds: SimSecond[];
  /** Accepted calls a second over [from, to) (seconds of the run). */
  acceptedPerSecond(from: number, to: number): number;
  /** 429s (both kinds) over all answers in [from, to). */
  share429(from: number, to: number): number;
  /** The limit's 429s over all answers in [from, to). */
  limitShare(from: number, to: number): number;
  /** Calls arrived (perSecond demand) and not yet accepted at the end. */
  backlog: number;
  /** The given quantile of the time calls that asked in [from, to) waited for their turn under the pace, in ms. */
  paceWaitMs(from: number, to: number, quantile: number): number;
}

export async function simulate(options: SimOptions): Promise<SimRun> {
  const { seconds, limit, noise = () => 0, noiseRetryAfterS = [1, 1], demand, workers = 1, relayMs = 300, roundTripMs = 20 } = options;
  // A fixed start: the pacer counts answers in quarter seconds of the clock, so a run is the same every time.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.parse('2026-11-24T10:00:00Z') });
  try {
    const random = mulberry32(options.seed ?? 42);
    const start = Date.now();
    let pool: FreshAnswers | null = null;
    // A given initial pace is each worker's: the fleet's starts at all of theirs.
    const fleet =
      (options.shares ?? 'fleet') === 'fleet' ? new FleetPace(options.initialRate ? { rate: options.initialRate * workers } : {}) : null;
    const pacers = Array.from(
      { length: workers },
      (_, worker) =>
        new AccountPacer({
          initialRate: options.initialRate,
          maxRate: options.maxRate,
          random,
          fleetRelays: options.fleetRelays ?? true,
          ...(fleet
            ? {
                share: (report) =>
                  new Promise<{ rate: number; phase: number }>((resolve) =>
                    setTimeout(
                      () => resolve(fleet.report({ ...report, worker: String(worker), maxRate: options.maxRate }, Date.now())),
                      relayMs,
                    ),
                  ),
              }
            : {}),
          onFresh: (limited) => (pool = poolFresh(pool, { answers: 1, limited: limited ? 1 : 0, at: Date.now() })),
        }),
    );
    const perSecond: SimSecond[] = Array.from({ length: seconds }, () => ({
      accepted: 0,
      limited: 0,
      noise: 0,
      rate: 0,
      noiseShare: null,
      workers: [],
    }));
    const second = (now: number) => perSecond[Math.floor((now - start) / 1000)];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    let bucket = { tokens: limit(0) ?? 0, at: start };
    let stop = false;
    const stopped = new AbortController();
    // Every waiting call listens to it (each listener goes with its turn): 60 loops waiting at once
    // are no leak, and Node's warning for more than 10 filled the bench's output.
    setMaxListeners(0, stopped.signal);
    let backlog = 0;
    const waits: Array<{ at: number; ms: number }> = [];

    /** The API's answer at `now`: 0 accepted, else the 429's Retry-After in ms. */
    function answer(now: number): { retryAfterMs: number; kind: 'accepted' | 'limited' | 'noise' } {
      const t = (now - start) / 1000;
      if (options.noiseFirst) {
        const noisy = randomRefusal(t);
        if (noisy) return noisy;
      }
      const limited = takeToken(now, t);
      if (limited) return limited;
      return (!options.noiseFirst && randomRefusal(t)) || { retryAfterMs: 0, kind: 'accepted' };
    }

    /** The calls the window counts, oldest first (limiter `window`). */
    const windowed: number[] = [];
    function takeToken(now: number, t: number): { retryAfterMs: number; kind: 'limited' } | null {
      const perS = limit(t);
      if (perS !== null && options.limiter === 'window') return takeInWindow(now, perS);
      if (perS !== null) {
        bucket = { tokens: Math.min(perS, bucket.tokens + ((now - bucket.at) / 1000) * perS), at: now };
        if (bucket.tokens < 1) {
          const retryAfterMs = Math.max(1, Math.ceil((1 - bucket.tokens) / perS)) * 1000;
          // A limiter that counts refused calls too: each one spends a token it did not have.
          if (options.refusedTakesToken) bucket.tokens = Math.max(-perS, bucket.tokens - 1);
          return { retryAfterMs, kind: 'limited' };
        }
        bucket.tokens -= 1;
      }
      return null;
    }

    function takeInWindow(now: number, perS: number): { retryAfterMs: number; kind: 'limited' } | null {
      while (windowed.length > 0 && windowed[0]! <= now - 1000) windowed.shift();
      if (windowed.length < perS) {
        windowed.push(now);
        return null;
      }
      // Room once the oldest of the last `perS` calls leaves the window.
      const retryAfterMs = Math.max(1, Math.ceil((windowed[windowed.length - Math.floor(perS)]! + 1000 - now) / 1000)) * 1000;
      if (options.refusedTakesToken) windowed.push(now);
      return { retryAfterMs, kind: 'limited' };
    }

    function randomRefusal(t: number): { retryAfterMs: number; kind: 'noise' } | null {
      if (random() >= noise(t)) return null;
      const [min, max] = noiseRetryAfterS;
      return { retryAfterMs: (min + Math.floor(random() * (max - min + 1))) * 1000, kind: 'noise' };
    }

    /** One call of loop `loop` through its worker's pacer (callThrough). */
    function call(loop: number): Promise<number> {
      return callThrough(pacers[options.workerOf ? options.workerOf(loop, random) : loop % workers]!);
    }

    /**
     * One call through `pacer` until the API accepts it (or the run stops); the time its last
     * attempt was asked for (a retry is due when its Retry-After ends).
     */
    async function callThrough(pacer: AccountPacer): Promise<number> {
      let asked = Date.now();
      while (!stop) {
        asked = Date.now();
        const turn = await pacer.acquire('tracking', stopped.signal).then(
          (granted) => granted,
          () => null, // the run is over
        );
        if (!turn) return asked;
        waits.push({ at: (asked - start) / 1000, ms: Date.now() - asked });
        await sleep(roundTripMs);
        const now = Date.now();
        const { retryAfterMs, kind } = answer(now);
        const s = second(now);
        if (s) s[kind]++;
        if (kind === 'accepted') {
          pacer.recordAccepted(turn);
          return asked;
        }
        const until = pacer.recordRateLimited(retryAfterMs, turn);
        if (until !== null) {
          // The account workflow tells every subscriber, the worker that published too.
          setTimeout(() => fleet?.overshoot(until, Date.now()), relayMs / 2);
          for (const each of pacers) setTimeout(() => each.recordFleetRateLimited(until), relayMs);
        }
        await sleep(retryAfterMs); // this call's own retry waits its Retry-After
      }
      return asked;
    }

    const loops: Promise<void>[] = [];
    if ('clients' in demand) {
      for (let c = 0; c < demand.clients; c++) {
        loops.push(
          (async () => {
            if (demand.rampMs) await sleep((c * demand.rampMs) / demand.clients);
            while (!stop) {
              const t = (Date.now() - start) / 1000;
              if (demand.pauseS && t >= demand.pauseS[0] && t < demand.pauseS[1]) {
                await sleep((demand.pauseS[1] - t) * 1000);
                continue;
              }
              const due = await call(c);
              if (demand.thinkMs) await sleep(nextPollDue(due, Date.now(), demand.thinkMs) - Date.now());
            }
          })(),
        );
      }
    }
    if ('clients' in demand && demand.single) {
      const { everyS, worker } = demand.single;
      for (let at = everyS; at < seconds; at += everyS)
        loops.push(sleep(at * 1000).then(async () => void (stop ? 0 : await callThrough(pacers[worker % workers]!))));
    }
    let arrived = 0;
    for (let t = 0; t < seconds * 1000; t += 100) {
      if ('perSecond' in demand) {
        const due = Math.floor(((t + 100) / 1000) * demand.perSecond);
        for (; arrived < due; arrived++) {
          backlog++;
          loops.push(call(arrived).then(() => void backlog--));
        }
      }
      await vi.advanceTimersByTimeAsync(100);
      if ((t + 100) % FRESH_READ_MS === 0 && pool) {
        for (const pacer of pacers) if (pacer.wantsFleetFresh()) pacer.adoptFleetFresh(pool);
      }
      if ((t + 100) % 1000 === 0) {
        const s = perSecond[(t + 100) / 1000 - 1]!;
        const snap = pacers[0]!.snapshot();
        s.rate = snap.rate;
        s.noiseShare = snap.noiseShare;
        s.workers = pacers.map((p) => ({ rate: p.snapshot().rate, noiseShare: p.snapshot().noiseShare }));
        if (fleet) s.fleet = { rate: fleet.state().rate, noise: fleet.noiseFloor().share };
      }
    }
    const left = backlog;
    stop = true;
    stopped.abort(new Error('the run is over'));
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.allSettled(loops);
    for (const pacer of pacers) pacer.close();

    const slice = (from: number, to: number) => perSecond.slice(from, to);
    const sum = (from: number, to: number, f: (s: SimSecond) => number) => slice(from, to).reduce((n, s) => n + f(s), 0);
    const answers = (from: number, to: number) => sum(from, to, (s) => s.accepted + s.limited + s.noise);
    return {
      seconds: perSecond,
      backlog: left,
      acceptedPerSecond: (from, to) => sum(from, to, (s) => s.accepted) / (to - from),
      share429: (from, to) => sum(from, to, (s) => s.limited + s.noise) / answers(from, to),
      limitShare: (from, to) => sum(from, to, (s) => s.limited) / answers(from, to),
      paceWaitMs: (from, to, quantile) => {
        const ms = waits.filter((w) => w.at >= from && w.at < to).map((w) => w.ms);
        ms.sort((a, b) => a - b);
        return ms[Math.min(ms.length - 1, Math.floor(quantile * ms.length))] ?? 0;
      },
    };
  } finally {
    vi.useRealTimers();
  }
}
