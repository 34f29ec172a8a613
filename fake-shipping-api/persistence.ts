/** The fake shipping API's labels across restarts (`--state-file`): see local-http/state-file.ts. */
import { keepState, type StateFile } from '../local-http/state-file';
import type { LabelStore, LabelStoreSnapshot } from './label-store';

export function keepLabels(file: string, labels: LabelStore, warn: (message: string) => void): StateFile {
  return keepState<LabelStoreSnapshot>(file, {
    what: 'fake shipping API',
    version: 1,
    snapshot: () => labels.snapshot(),
    restore: (snapshot) => labels.restore(snapshot),
    warn,
  });
}
