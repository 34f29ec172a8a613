/**
 * The code as it was before change-driven tracking, taken from git: the benchmark's baseline
 * (its worker and workflow bundle), and the "already running" side of the migration test.
 * Extracted under .baseline/ in the repo so its imports resolve against this project's
 * node_modules.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundle } from '@temporalio/worker';

/** The last commit with the timer loop (one timer and one activity per poll). */
export const TIMER_LOOP_COMMIT = '7f133dc1bdfa11b41827fed0bf1fe7de6ae48bbc';
/** The last commit with change-driven tracking per shipment (one activity whose retries are the polls), before the fleet's pollers. */
export const PER_SHIPMENT_TRACKING_COMMIT = '268169e99a154d69eaa4e34b61963c0f6ea55165';
/** The last commit whose shipments told the shop a tracking change only after the task that applied it was recorded (the regular activity). */
export const TOLD_AFTER_ITS_TASK_COMMIT = '03d1ce40419cf99f08dbd241dae3e1613881abf6';
const LATER_PARTS = [
  'domain',
  'order-import',
  'shop-sync',
  'shop-import',
  'metrics',
  'codec',
  'launcher',
  'local-http',
  'shop-trigger',
  'dev-server',
];

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

function hasPath(commit: string, part: string): boolean {
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}:${part}`], { cwd: ROOT, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The source tree at `commit`: its worker (worker/main.ts) and import (client/import.ts, as it was then) run from there with tsx. */
export function baselineDir(commit = TIMER_LOOP_COMMIT): string {
  const dir = path.join(ROOT, '.baseline', commit.slice(0, 12));
  if (!existsSync(path.join(dir, 'workflows'))) {
    mkdirSync(dir, { recursive: true });
    // The folders its worker, workflows and import need (later trees have more of them).
    const parts = [
      'workflows',
      'activities',
      'shipping-api',
      'worker',
      'config',
      'client',
      ...LATER_PARTS.filter((p) => hasPath(commit, p)),
    ];
    const archive = execFileSync('git', ['archive', commit, ...parts], { cwd: ROOT, maxBuffer: 64 << 20 });
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
  }
  return dir;
}

export async function baselineWorkflowBundle(commit = TIMER_LOOP_COMMIT): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: path.join(baselineDir(commit), 'workflows'), logger: new DefaultLogger('WARN') });
}
