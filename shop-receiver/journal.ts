/**
 * The receiver's memory across restarts (`--journal <file>`): every event it accepted, one JSON
 * line each, appended as it arrives and replayed through the store at start. The store
 * de-duplicates and orders as it did the first time, so a restarted shop page shows what the
 * shop was told. The file is the owner's only (0600): events name orders and tracking numbers.
 */
import fs from 'node:fs';
import { ShipmentEvent } from '../domain/events';
import type { ReceiverStore } from './store';

/** Lines longer than this are not an event the receiver wrote: skipped on replay. */
const MAX_LINE_CHARS = 1024 * 1024;

export class EventJournal {
  private constructor(private readonly fd: number) {}

  /** Opens (or creates) the journal and replays it into `store`; returns how many events it held. */
  static open(file: string, store: ReceiverStore, warn: (message: string) => void): { journal: EventJournal; replayed: number } {
    let replayed = 0;
    if (fs.existsSync(file)) {
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (line.trim() === '') return;
        const entry = line.length <= MAX_LINE_CHARS ? parseEntry(line) : null;
        if (!entry) return warn(`${file}:${i + 1}: not an event this receiver wrote; skipped`);
        store.apply(entry.webhookId, entry.event, new Date(entry.receivedAt));
        replayed++;
      });
    }
    const fd = fs.openSync(file, 'a', 0o600);
    fs.fchmodSync(fd, 0o600);
    return { journal: new EventJournal(fd), replayed };
  }

  /** Appends one accepted event (synchronously: the answer goes out after it is kept). */
  append(webhookId: string, event: ShipmentEvent, receivedAt: Date): void {
    fs.writeSync(this.fd, `${JSON.stringify({ webhookId, receivedAt: receivedAt.toISOString(), event })}\n`);
  }

  /** After an admin reset: the receiver forgets, and so does its journal. */
  truncate(): void {
    fs.ftruncateSync(this.fd, 0);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

function parseEntry(line: string): { webhookId: string; receivedAt: string; event: ShipmentEvent } | null {
  try {
    const raw = JSON.parse(line) as { webhookId?: unknown; receivedAt?: unknown; event?: unknown };
    const event = ShipmentEvent.safeParse(raw.event);
    if (!event.success || typeof raw.webhookId !== 'string' || typeof raw.receivedAt !== 'string') return null;
    if (Number.isNaN(Date.parse(raw.receivedAt))) return null;
    return { webhookId: raw.webhookId, receivedAt: raw.receivedAt, event: event.data };
  } catch {
    return null;
  }
}
