/**
 * The real worker entry point (`worker/main.ts`, as `npm run worker` runs it) as its own OS
 * process, for tests where the process boundary is the point: kills, restarts, signals, probes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT } from './cli';
import { nodeArgsFor } from './compiled';
import { TEST_CREDENTIALS } from './harness';
import { sharedBundlePath } from './workflow-bundle';

/** What a worker process needs to reach a test's dev server and fake API, on its own task queue. */
export function workerEnv(temporalAddress: string, taskQueue: string, shippingApiBaseUrl: string): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    SHIPPING_API_BASE_URL: shippingApiBaseUrl,
    SHIPPING_API_KEY: TEST_CREDENTIALS.apiKey,
    SHIPPING_API_TOKEN: TEST_CREDENTIALS.apiToken,
  };
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
  /** Its exit code; null when a signal ended it. */
  exited: Promise<number | null>;
}

const started: ChildProcess[] = [];

/**
 * Starts the worker with only PATH and `env` (nothing else of the test's environment). A worker
 * refuses to start without payload keys; tests that give none run it in clear on purpose unless
 * they set PAYLOAD_ENCRYPTION themselves (to '' to see the refusal). It runs the run's shared
 * workflow bundle (WORKFLOW_BUNDLE_PATH, the production start path) from the compiled sources
 * (helpers/compiled.ts) unless `env` names one; a test of bundling at start sets
 * WORKFLOW_BUNDLE_PATH to undefined, and runs the sources through tsx, as `npm run worker` does.
 */
export function spawnWorkerProcess(env: Record<string, string | undefined>): WorkerProcess {
  const shared = sharedBundlePath();
  const bundle = 'WORKFLOW_BUNDLE_PATH' in env || !shared ? {} : { WORKFLOW_BUNDLE_PATH: shared };
  const keyed = 'PAYLOAD_ENCRYPTION_KEYS' in env || 'PAYLOAD_ENCRYPTION_KEYS_FILE' in env || 'PAYLOAD_ENCRYPTION' in env;
  const bundlesAtStart = 'WORKFLOW_BUNDLE_PATH' in env && !env.WORKFLOW_BUNDLE_PATH;
  const child = spawn(process.execPath, bundlesAtStart ? ['--import', 'tsx', 'worker/main.ts'] : nodeArgsFor('worker/main.ts'), {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, ...(keyed ? {} : { PAYLOAD_ENCRYPTION: 'off' }), ...bundle, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Starts the worker and waits until it prints `until` (default: its "worker started" line). */
export async function startWorkerProcess(
  env: Record<string, string | undefined>,
  until = 'worker started',
  timeoutMs = 60_000,
): Promise<WorkerProcess> {
  const worker = spawnWorkerProcess(env);
  const deadline = Date.now() + timeoutMs;
  while (!worker.output().includes(until)) {
    if (worker.child.exitCode !== null) throw new Error(`worker exited early:\n${worker.output()}`);
    if (Date.now() > deadline) throw new Error(`worker did not print "${until}" within ${timeoutMs} ms:\n${worker.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return worker;
}

/** SIGKILLs every worker process this test file started (for afterAll). */
export function killWorkerProcesses(): void {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
