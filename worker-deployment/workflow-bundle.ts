/** The workflow code every bundle is made of: the worker's at start, `npm run build`'s, the tests' and benches'. */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';

const WORKFLOWS = path.join(__dirname, '..', 'workflows');

export const WORKFLOW_CODE = {
  workflowsPath: WORKFLOWS,
  workflowInterceptorModules: [
    // A shipment's priority for its local activities (without it they wait as default-priority calls).
    path.join(WORKFLOWS, 'priority-interceptor'),
    // OpenTelemetry spans of a workflow started in an order's trace; pass-throughs otherwise.
    path.join(WORKFLOWS, 'tracing-interceptor'),
  ],
};

/** Bundles the workflows at start (development); webpack's module listing is kept out of the logs. */
export function bundleFromSource(): Promise<{ code: string }> {
  const runtimeLogger = Runtime.instance().logger;
  return bundleWorkflowCode({
    ...WORKFLOW_CODE,
    logger: new DefaultLogger('WARN', (entry) => {
      runtimeLogger.log(entry.level, entry.message, entry.meta);
    }),
  });
}

const ROOT = path.join(__dirname, '..');
const BUILD_SCRIPT = path.join(ROOT, 'worker', `build-bundle${path.extname(__filename)}`);

/**
 * The same bundle, made by a process of its own (`npm run build`'s script): webpack's heap and
 * buffers (about 100 MB of a worker's RSS, measured: docs/configuration.md, "Worker memory and
 * concurrency") leave with that process instead of staying in the worker for good.
 */
export async function bundleInOwnProcess(): Promise<{ code: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'workflow-bundle-'));
  const out = path.join(dir, 'workflow-bundle.js');
  try {
    await new Promise<void>((resolve, reject) => {
      // From source (tsx) as the worker runs, or compiled (dist/).
      const args = path.extname(BUILD_SCRIPT) === '.ts' ? ['--import', 'tsx', BUILD_SCRIPT, out] : [BUILD_SCRIPT, out];
      const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
      child.on('error', reject);
      child.on('exit', (code, signal) => {
        if (code === 0) resolve();
        else reject(new Error(`bundling the workflow code failed (${signal ?? `exit code ${code}`}): ${stderr.trim()}`));
      });
    });
    return { code: await readFile(out, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
