/**
 * "Down" means what a stopped shop looks like to the sender: the listening socket is closed
 * (new connections are refused) and open keep-alive connections are destroyed, so no request
 * reaches the receiver. Clearing `down` listens again on the same port.
 */
import type { LocalHttpServer } from '../local-http';
import type { ReceiverState } from './receiver-state';

export class DownSwitch {
  private listening = true;
  private closed = false;
  /** Transitions run one after another, so a quick down-up-down ends as the last one says. */
  private transition: Promise<void> = Promise.resolve();

  constructor(
    private readonly http: LocalHttpServer,
    private readonly host: string,
    private readonly port: number,
    private readonly receiver: ReceiverState,
  ) {}

  /** Makes the socket match `faults.down`. */
  sync(): Promise<void> {
    this.transition = this.transition.then(async () => {
      if (this.closed) return;
      if (this.receiver.faults.down && this.listening) {
        this.listening = false;
        await this.http.stopListening();
      } else if (!this.receiver.faults.down && !this.listening) {
        try {
          await this.http.listen(this.port, this.host);
          this.listening = true;
        } catch (e) {
          this.receiver.faults.down = true;
          process.emitWarning(`shop receiver: could not listen again on port ${this.port}: ${(e as Error).message}`);
        }
      }
    });
    return this.transition;
  }

  /** No more transitions; waits for the one under way, then stops listening for good. */
  async close(): Promise<void> {
    this.closed = true;
    await this.transition;
    if (this.listening) await this.http.stopListening();
  }
}
