/**
 * What one running receiver knows: its secrets, the orders and events (store), the stats and
 * the injected faults. Going down is decided here; the socket follows in listening.ts.
 */
import { fieldProblems, type FieldProblem } from '../shipping-api/contract';
import { InvalidFaultsError, mulberry32, TokenBuckets } from '../fake-shipping-api/faults';
import { WebhookSecrets } from '../platforms/webhook/write-back';
import { cloneFaults, NO_FAULTS, ReceiverFaultsPatch, type ReceiverFaults } from './faults';
import type { ShipmentEvent } from '../domain/events';
import type { EventJournal } from './journal';
import { ReceiverStore } from './store';
import { RECEIVER_DEFAULTS, type ShopReceiverOptions, type ShopReceiverState, type ShopReceiverStats } from './types';

const emptyStats = (): ShopReceiverStats => ({ answers: {}, applied: 0, late: 0, duplicates: 0 });

export class ReceiverState {
  readonly secrets: string[];
  readonly random: () => number;
  readonly store = new ReceiverStore();
  stats = emptyStats();
  faults = cloneFaults(NO_FAULTS);
  buckets: TokenBuckets | null = null;
  private downTimer: NodeJS.Timeout | null = null;
  /** When a downForMs period ends (epoch ms); null while up or down with no end. */
  downUntil: number | null = null;
  /** Set when the receiver keeps its events across restarts. */
  journal: EventJournal | null = null;

  /** `onDownEnds` runs when a downForMs period is over, to listen again. */
  constructor(
    options: ShopReceiverOptions,
    private readonly onDownEnds: () => void,
  ) {
    const parsedSecrets = WebhookSecrets.safeParse(options.secrets);
    if (!parsedSecrets.success) {
      const problems = fieldProblems(parsedSecrets.error, ['secrets']);
      throw new Error(`startShopReceiver: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
    }
    this.secrets = parsedSecrets.data;
    this.random = mulberry32(options.seed ?? RECEIVER_DEFAULTS.seed);
  }

  /** Validates and applies a patch to the fault state; the socket follows in syncListening. */
  updateFaults(patch: unknown, overHttp: boolean): ReceiverFaults {
    const parsed = ReceiverFaultsPatch.safeParse(patch);
    const problems: FieldProblem[] = parsed.success ? [] : fieldProblems(parsed.error);
    if (parsed.success) {
      const p = parsed.data;
      if (p.down !== undefined && p.downForMs !== undefined) problems.push({ field: 'down', message: 'give down or downForMs, not both' });
      if (overHttp && p.down === true) {
        problems.push({ field: 'down', message: 'down: true over HTTP would take this admin endpoint down with it; use downForMs' });
      }
    }
    if (!parsed.success || problems.length > 0) throw new InvalidFaultsError(problems);
    const { down, downForMs, ...rest } = parsed.data;
    this.faults = cloneFaults({ ...this.faults, ...(rest as Partial<ReceiverFaults>) });
    if (rest.rateLimit !== undefined) this.buckets = this.faults.rateLimit === null ? null : new TokenBuckets(this.faults.rateLimit);
    if (down !== undefined || downForMs !== undefined) {
      this.stopDownTimer();
      this.faults.down = down ?? true;
      if (downForMs !== undefined) {
        this.downUntil = Date.now() + downForMs;
        // Not unref'd: while down, this timer is what keeps a CLI receiver alive.
        this.downTimer = setTimeout(() => {
          this.downTimer = null;
          this.downUntil = null;
          this.faults.down = false;
          this.onDownEnds();
        }, downForMs);
      }
    }
    return cloneFaults(this.faults);
  }

  /** A verified event into the store, and into the journal unless the store had it already. */
  accept(webhookId: string, event: ShipmentEvent): ReturnType<ReceiverStore['apply']> {
    const receivedAt = new Date();
    const result = this.store.apply(webhookId, event, receivedAt);
    if (result.status !== 'duplicate') this.journal?.append(webhookId, event, receivedAt);
    return result;
  }

  stopDownTimer(): void {
    if (this.downTimer) clearTimeout(this.downTimer);
    this.downTimer = null;
    this.downUntil = null;
  }

  /** Forgets orders, events, de-duplication ids and stats (not faults). */
  reset(): void {
    this.store.clear();
    this.journal?.truncate();
    this.stats = emptyStats();
  }

  snapshot(): ShopReceiverState {
    return {
      orders: this.store.orderViews(),
      events: this.store.events(),
      stats: structuredClone(this.stats),
      faults: cloneFaults(this.faults),
    };
  }
}
