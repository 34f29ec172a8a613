/**
 * The label and the order, decided by the shipment machine (domain/shipment-machine): the run
 * feeds it every answer, message and deadline (run.ts, `decide`), and this carries out the
 * commands it returns, in their order, until tracking begins (tracking.ts) or the shipment ends.
 */
import { CancellationScope, condition, log, sleep } from '@temporalio/workflow';
import type { ShipmentOutcome } from '../../workflow-definitions/shipment';
import type { Deadline, ShopEventDecision } from '../../domain/shipment-machine';
import { formatDuration } from '../../domain/duration';
import { correctionWaits, labelAnswered, sendLabel, tellRejected, type LabelRefused } from './label';
import * as order from './order';
import type { Machine, MachineCommand, MachineEvent, ShipmentShell } from './shell';
import { heldInShop } from '../../domain/shipment-machine/transitions';

const DEFAULT_HOLD_TIMEOUT_MS = 7 * 24 * 60 * 60 * 1000;

/** Label and order; returns the outcome when the shipment ends before tracking. */
export async function labelAndOrder(run: ShipmentShell): Promise<ShipmentOutcome | undefined> {
  const deadline = new DeadlineTimer(run);
  const refused: LabelRefused = { err: undefined };
  run.decide({ type: 'started' });
  for (;;) {
    if (!run.commandsWaiting) await condition(() => run.commandsWaiting);
    await deadline.cancelIfLeft(run.machine);
    let tracks = false;
    for (const c of run.takeCommands()) {
      switch (c.type) {
        case 'createLabel':
          labelAnswered(run, await sendLabel(run, c, refused));
          break;
        case 'readOrder':
          run.decide(await readOrder(run, c.labelId));
          break;
        case 'tellShop':
          tell(run, c.event, refused);
          break;
        case 'startDeadline':
          deadline.start(c.deadline, c.wait);
          break;
        case 'watchTracking':
          tracks = true;
          break;
        case 'unwatchTracking':
          tracks = false;
          break;
        case 'finish':
          await deadline.cancelIfLeft(run.machine);
          return finish(run, c);
        case 'fail':
          // The call's own failure, which the run turns into the shipment's (run.ts).
          throw refused.err instanceof Error ? refused.err : new Error('the label call stopped with nothing to settle');
      }
    }
    // The shard is joined by the tracking step (a watch and an unwatch in one decision join nothing).
    if (tracks) return undefined;
  }
}

/** Reads the label's order: informational, a failure is recorded and tracking goes on (from the tracking number known then). */
async function readOrder(run: ShipmentShell, labelId: string): Promise<MachineEvent> {
  try {
    order.read(run, await run.callApi('readOrder', `Read order ${labelId}`, labelId, ...run.onAccount()));
    return { type: 'orderRead', labelId, ok: true, trackingNumber: run.state.trackingNumber };
  } catch (err) {
    order.notRead(run, err);
    return { type: 'orderRead', labelId, ok: false, trackingNumber: run.state.trackingNumber };
  }
}

/** The shop events of label and order; `shipment.completed` is told by the finish that follows it. */
function tell(run: ShipmentShell, event: ShopEventDecision, refused: LabelRefused): void {
  if (event.type === 'label.rejected') tellRejected(run, refused);
  // Tracking starts: the shop hears of the label after the read that brings its tracking number.
  else if (event.type === 'label.created') order.trackingBegins(run, event.labelId!);
}

function finish(run: ShipmentShell, c: Extract<MachineCommand, { type: 'finish' }>): ShipmentOutcome {
  if (c.outcome === 'cancelled_by_operator') return run.cancelledByOperator();
  if (c.outcome === 'hold_timed_out')
    return run.finish('hold_timed_out', `held in the shop for longer than ${formatDuration(holdTimeoutOf(run))}`);
  return run.finish(c.outcome, c.reason);
}

const holdTimeoutOf = (run: ShipmentShell) => run.policy.shopHoldTimeoutMs ?? DEFAULT_HOLD_TIMEOUT_MS;

interface Timer {
  wait: number;
  deadline: Deadline;
  scope: CancellationScope;
  fired: boolean;
  done?: Promise<void>;
}

/** The timer of the machine's current wait (correction or hold); its end is fed back as `deadlinePassed`. */
class DeadlineTimer {
  private current: Timer | null = null;

  constructor(private readonly run: ShipmentShell) {}

  start(deadline: Deadline, wait: number): void {
    // Tracking keeps its own clock for the run (tracking.ts).
    if (deadline === 'tracking') return;
    const ms = deadline === 'correction' ? this.correction() : this.hold();
    const timer: Timer = { wait, deadline, scope: new CancellationScope(), fired: false };
    this.current = timer;
    timer.done = timer.scope
      .run(() => sleep(ms))
      .then(
        () => {
          timer.fired = true;
          this.run.decide({ type: 'deadlinePassed', deadline, wait });
        },
        () => undefined, // cancelled: the wait ended first
      );
  }

  /** Cancels the timer of a wait the machine has left; a hold left before its deadline is over. */
  async cancelIfLeft(m: Readonly<Machine>): Promise<void> {
    const timer = this.current;
    if (!timer || (m.wait === timer.wait && (m.phase === 'awaiting_correction' || m.phase === 'held_in_shop'))) return;
    this.current = null;
    if (timer.fired) return;
    timer.scope.cancel();
    // Its cancel is issued once the timer saw it: before anything the next command issues.
    await timer.done;
    if (timer.deadline === 'hold') this.run.shop?.released();
  }

  private correction(): number {
    correctionWaits(this.run);
    return this.run.policy.correctionTimeoutMs;
  }

  private hold(): number {
    const { run } = this;
    heldInShop(run.state);
    const since = run.shop!.held();
    run.publish();
    log.info('the order is held in the shop: the label waits', { orderId: run.state.orderId, shop: run.state.shop });
    return Math.max(1, Date.parse(since) + holdTimeoutOf(run) - Date.now());
  }
}
