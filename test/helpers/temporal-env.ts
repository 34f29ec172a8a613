/**
 * Integration-test helpers: a real Temporal dev server (the CLI found by dev-server/temporal-cli,
 * with this project's search attributes registered) and the workflow bundle, built once per test
 * process.
 *
 *   const env = await createTestEnv();               // in beforeAll (hookTimeout covers startup)
 *   const worker = await Worker.create({
 *     connection: env.nativeConnection, taskQueue, workflowBundle: await getWorkflowBundle(), activities,
 *   });
 *   ...
 *   await env.teardown();                            // in afterAll
 */
import { readFile } from 'node:fs/promises';
import { TestWorkflowEnvironment, type LocalTestWorkflowEnvironmentOptions } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, type WorkflowBundle } from '@temporalio/worker';
import { freePort } from '../../dev-server/free-port';
import { priorityDevServerArgs } from '../../dev-server/server-priority';
import { WORKFLOW_CODE } from '../../worker-deployment/workflow-bundle';
import { temporalServerExecutable } from '../../dev-server/temporal-cli';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflow-definitions/shipment';
import { sharedBundlePath } from './workflow-bundle';

/**
 * How much the SDK and the dev servers log in tests: ERROR unless TEST_LOG_LEVEL says otherwise
 * (e.g. TEST_LOG_LEVEL=WARN to see the expected warnings of failing activities while debugging);
 * a passing run then shows its results, not hundreds of anticipated warnings.
 */
const LOG_LEVEL =
  (['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const).find((l) => l === process.env.TEST_LOG_LEVEL?.toUpperCase()) ?? 'ERROR';

/**
 * Installs the SDK Runtime with quiet logging (LOG_LEVEL; the SDK default, INFO, floods test
 * output with worker lifecycle lines). Must run before any Worker, NativeConnection or test
 * environment is created in this process; harmless if a Runtime already exists.
 */
export function installQuietRuntime(): void {
  if (Runtime._instance) return;
  Runtime.install({
    logger: new DefaultLogger(LOG_LEVEL),
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
  });
}

/**
 * A local Temporal dev server (in-memory, random free port, no UI) with SEARCH_ATTRIBUTE_KEYS
 * registered. `opts.server` fields override the defaults here. Call `env.teardown()` when done.
 */
export async function createTestEnv(opts: LocalTestWorkflowEnvironmentOptions = {}): Promise<TestWorkflowEnvironment> {
  installQuietRuntime();
  return TestWorkflowEnvironment.createLocal({
    ...opts,
    server: {
      executable: temporalServerExecutable(),
      // Not the SDK's listen(0) pick, which an outgoing connection can take before the server binds it.
      port: await freePort(),
      searchAttributes: SEARCH_ATTRIBUTE_KEYS,
      namespace: 'default',
      log: { format: 'pretty', level: LOG_LEVEL === 'ERROR' ? 'error' : 'warn' },
      // As `npm run dev` runs it: task queue priority on.
      extraArgs: priorityDevServerArgs(),
      ...opts.server,
    },
  });
}

let bundle: Promise<WorkflowBundle> | undefined;

/**
 * The workflow bundle of `workflows/index.ts`: the run's shared one (test/helpers/workflow-bundle.ts),
 * or built once per test process (bundling takes seconds; give each Worker `workflowBundle`
 * instead of `workflowsPath`). Resolved at call time.
 */
export function getWorkflowBundle(): Promise<WorkflowBundle> {
  bundle ??= (async () => {
    installQuietRuntime();
    const shared = sharedBundlePath();
    if (shared) return { code: await readFile(shared, 'utf8') };
    return bundleWorkflowCode({
      ...WORKFLOW_CODE,
      logger: new DefaultLogger(LOG_LEVEL),
    });
  })().catch((err: unknown) => {
    bundle = undefined; // let a later call retry (e.g. after a syntax error is fixed in watch mode)
    throw err;
  });
  return bundle;
}
