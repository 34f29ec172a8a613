/** Recording replay fixtures (test/fixtures/histories) from real runs, for test/replay.test.ts. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';

export const FIXTURES = path.join(__dirname, '..', 'fixtures', 'histories');

/**
 * With RECORD_HISTORIES=1, writes the workflow's history as `<name>.json`. Never overwrites: a
 * recorded history stands for workflows already running, so a new recording gets a new name.
 */
export async function saveFixture(handle: WorkflowHandle, name: string): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  await mkdir(FIXTURES, { recursive: true });
  await writeFile(path.join(FIXTURES, `${name}.json`), historyToJSON(await handle.fetchHistory()), { flag: 'wx' }).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    },
  );
}
