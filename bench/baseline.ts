/**
 * The workflow code as it was before change-driven tracking, bundled from git: the benchmark's
 * baseline, and the "already running" side of the migration test. Extracted under .baseline/
 * in the repo so its imports resolve against this project's node_modules.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundle } from '@temporalio/worker';

/** The last commit with the timer loop (one timer and one activity per poll). */
export const TIMER_LOOP_COMMIT = '7f133dc1bdfa11b41827fed0bf1fe7de6ae48bbc';

const ROOT = path.join(__dirname, '..');

/** Whether this clone has the baseline commit (a shallow clone may not). */
export function hasBaselineCommit(commit = TIMER_LOOP_COMMIT): boolean {
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function baselineWorkflowBundle(commit = TIMER_LOOP_COMMIT): Promise<WorkflowBundle> {
  const dir = path.join(ROOT, '.baseline', commit.slice(0, 12));
  if (!existsSync(path.join(dir, 'workflows', 'index.ts'))) {
    mkdirSync(dir, { recursive: true });
    const archive = execFileSync('git', ['archive', commit, 'workflows', 'activities', 'shipping-api'], { cwd: ROOT, maxBuffer: 64 << 20 });
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
  }
  return bundleWorkflowCode({ workflowsPath: path.join(dir, 'workflows'), logger: new DefaultLogger('WARN') });
}
