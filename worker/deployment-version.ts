/**
 * The worker as a version of a Worker Deployment (config/deployment.ts; docs/production.md,
 * "Rolling out a new build"). Every workflow type declares its versioning behavior in
 * workflows/versioning.ts; PINNED here is only the fallback for a type that forgot to.
 */
import { readFile } from 'node:fs/promises';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import { defaultBuildId, type DeploymentSettings } from '../config/deployment';
import { describeDeployment, setCurrentVersion } from '../worker-deployment/deployments';
import { bundleInOwnProcess } from '../worker-deployment/workflow-bundle';

/** Worker.create's options for `version`; nothing for an unversioned worker. */
export function versionedWorker(version: WorkerDeploymentVersion | undefined): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  if (!version) return {};
  return { workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' } };
}

/**
 * The workflow code the worker runs and, when versioned, its version: the build id is the
 * setting's, or derived from that very code, so two different bundles never share one.
 */
export async function workflowCodeAndVersion(
  settings: DeploymentSettings,
  bundlePath: string | undefined,
): Promise<{ code: string; version: WorkerDeploymentVersion | undefined }> {
  // Without a prebuilt bundle, bundled apart: the bundler's memory is not the worker's.
  const code = bundlePath ? await readFile(bundlePath, 'utf8') : (await bundleInOwnProcess()).code;
  if (!settings.versioning) return { code, version: undefined };
  return { code, version: { deploymentName: settings.deploymentName, buildId: settings.buildId ?? defaultBuildId(code) } };
}

interface Log {
  info(meta: object, message: string): void;
  warn(meta: object, message: string): void;
}

/**
 * WORKER_BECOME_CURRENT: makes the running worker's version current (`always`, or `if-none` is
 * current yet). The server knows a version only once its worker polls: retried for a while.
 */
export async function becomeCurrent(
  client: Client,
  settings: Extract<DeploymentSettings, { versioning: true }>,
  version: WorkerDeploymentVersion,
  log: Log,
  signal: AbortSignal,
): Promise<void> {
  if (settings.becomeCurrent === 'never') return;
  const { deploymentName: name, buildId } = version;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const view = await describeDeployment(client, name);
      if (view?.current === buildId) return;
      if (settings.becomeCurrent === 'if-none' && view?.current) {
        log.info(
          { deployment: name, buildId, current: view.current },
          `not current: promote it with "npm run cli -- deployment promote ${buildId}"`,
        );
        return;
      }
      await setCurrentVersion(client, name, buildId, `worker ${buildId} (WORKER_BECOME_CURRENT=${settings.becomeCurrent})`);
      log.info({ deployment: name, buildId }, 'this build is now the current version');
      return;
    } catch (err) {
      if (signal.aborted) return;
      if (Date.now() > deadline) {
        log.warn({ deployment: name, buildId, err: err instanceof Error ? err.message : String(err) }, 'could not make this build current');
        return;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
