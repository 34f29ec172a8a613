/**
 * Worker Deployment Versioning settings (docs/production.md, "Rolling out a new build"): the
 * worker runs as one version (`deploymentName` + `buildId`) of a named deployment, and Temporal
 * routes new workflows to the deployment's current version while pinned ones finish on theirs.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseEnv, type Env } from './settings';
import { version as PACKAGE_VERSION } from '../package.json';

/** Temporal joins them as `name:buildId` in the TemporalWorkerDeploymentVersion search attribute. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
const BUILD_ID = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$/;

export const DEPLOYMENT_DEFAULTS = { deploymentName: 'shipping-sync' } as const;

/** When a worker that starts makes its own version the current one. */
export type BecomeCurrent = 'never' | 'if-none' | 'always';

const DeploymentEnv = z.object({
  WORKER_VERSIONING: z
    .enum(['on', 'off'])
    .default('off')
    .describe('on: run as a version of WORKER_DEPLOYMENT_NAME (the production launchers set it); off: an unversioned worker'),
  WORKER_DEPLOYMENT_NAME: z
    .string()
    .regex(NAME, 'letters, digits, - and _ (at most 100), starting with a letter or digit')
    .default(DEPLOYMENT_DEFAULTS.deploymentName)
    .describe('The Worker Deployment this worker is a version of'),
  WORKER_BUILD_ID: z
    .string()
    .regex(BUILD_ID, 'letters, digits, . _ + and - (at most 100), starting with a letter or digit')
    .optional()
    .describe("This worker's build id; unset: the package version and a hash of the workflow bundle"),
  WORKER_BECOME_CURRENT: z
    .enum(['never', 'if-none', 'always'])
    .default('never')
    .describe('Whether the started worker makes its version current: never (the operator promotes), if-none, always'),
});

export type DeploymentSettings =
  { versioning: false } | { versioning: true; deploymentName: string; buildId: string | undefined; becomeCurrent: BecomeCurrent };

/** The worker's deployment settings; a ConfigError names each bad variable. */
export function loadDeploymentSettings(env: Env = process.env): DeploymentSettings {
  const e = parseEnv(DeploymentEnv, env);
  if (e.WORKER_VERSIONING === 'off') return { versioning: false };
  return {
    versioning: true,
    deploymentName: e.WORKER_DEPLOYMENT_NAME,
    buildId: e.WORKER_BUILD_ID,
    becomeCurrent: e.WORKER_BECOME_CURRENT,
  };
}

/**
 * The build id of a workflow bundle: the package version and the bundle's hash, so a changed
 * workflow can never run under the build id of the code it replaced.
 */
export function defaultBuildId(bundleCode: string): string {
  return `${PACKAGE_VERSION}-${createHash('sha256').update(bundleCode).digest('hex').slice(0, 12)}`;
}

/** The rows for `npm run worker -- --help`. */
export function deploymentSettingsHelp(): Array<readonly [string, string, string]> {
  return Object.entries(DeploymentEnv.shape).map(([name, schema]) => {
    const def = (schema as unknown as { _zod: { def: { type: string; defaultValue?: unknown } } })._zod.def;
    return [name, def.type === 'default' ? `default ${String(def.defaultValue)}` : 'unset', schema.description ?? ''] as const;
  });
}

/** WORKER_DEPLOYMENT_NAME (or its default), for the operator's commands. */
export function deploymentNameOf(env: Env = process.env): string {
  return parseEnv(DeploymentEnv.pick({ WORKER_DEPLOYMENT_NAME: true }), env).WORKER_DEPLOYMENT_NAME;
}

/** A build id as an operator typed it: checked like WORKER_BUILD_ID. */
export function isBuildId(text: string): boolean {
  return BUILD_ID.test(text);
}
