/**
 * A local fake's memory across restarts (`--state-file <file>`): a snapshot of what its store
 * holds, written as JSON (0600: the stores hold names and addresses) whenever it changed, at
 * most once a second, and at close; read back at the next start. Each fake says what its
 * snapshot holds (its persistence.ts), so the stores themselves stay as they are. A file that
 * cannot be read back is set aside (renamed `.unreadable-<time>`), named in a warning, and the
 * fake starts empty: a demo's leftover never stops it.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';

/** A snapshot larger than this is not read back (a demo's stores hold kilobytes). */
const MAX_BYTES = 256 * 1024 * 1024;

export interface StateFileOptions<S> {
  /** What the snapshot is of, for messages ("fake Shopify store"). */
  what: string;
  /** Bumped when the snapshot's shape changes: another version is set aside, not misread. */
  version: number;
  snapshot(): S;
  restore(snapshot: S): void;
  warn(message: string): void;
  intervalMs?: number;
}

export interface StateFile {
  /** Whether a snapshot was read back (a fake then does not seed its sample orders again). */
  readonly restored: boolean;
  /** Writes the snapshot now if it changed. */
  flush(): void;
  /** The last write; the timer stops. */
  close(): void;
}

export function keepState<S>(file: string, o: StateFileOptions<S>): StateFile {
  const restored = readBack(file, o);
  let written = restored ? serialise(o) : '';
  const flush = () => {
    const text = serialise(o);
    if (text === written) return;
    writeAtomically(file, text);
    written = text;
  };
  const timer = setInterval(() => {
    try {
      flush();
    } catch (err) {
      o.warn(`${o.what}: cannot write ${file}: ${(err as Error).message}`);
    }
  }, o.intervalMs ?? 1000);
  timer.unref();
  return {
    restored,
    flush,
    close() {
      clearInterval(timer);
      flush();
    },
  };
}

function serialise<S>(o: StateFileOptions<S>): string {
  return JSON.stringify({ version: o.version, state: o.snapshot() });
}

function readBack<S>(file: string, o: StateFileOptions<S>): boolean {
  if (!existsSync(file)) return false;
  try {
    const size = statSync(file).size;
    if (size > MAX_BYTES) throw new Error(`${size} bytes, more than ${MAX_BYTES}`);
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown; state?: unknown };
    if (parsed?.version !== o.version || typeof parsed.state !== 'object' || parsed.state === null) {
      throw new Error(`not a version ${o.version} snapshot`);
    }
    o.restore(parsed.state as S);
    return true;
  } catch (err) {
    const aside = `${file}.unreadable-${Date.now()}`;
    renameSync(file, aside);
    o.warn(`${o.what}: could not read back ${file} (${(err as Error).message}); set aside as ${aside}, starting empty`);
    return false;
  }
}

/** Write, flush, rename: a crash mid-write leaves the previous snapshot, never half of one. */
function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
