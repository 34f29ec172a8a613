/**
 * Temporal's Worker Deployment calls this project makes (the `deployment` command and a worker
 * with WORKER_BECOME_CURRENT): what a deployment's versions are, which is current, what still
 * runs on each, and the changes an operator makes to them.
 */
import { isGrpcServiceError, type Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SA, WORKFLOW_TYPE } from '../workflow-definitions/shipment';

const { WorkerDeploymentVersionStatus, VersionDrainageStatus } = temporal.api.enums.v1;
const GRPC_NOT_FOUND = 5;

export interface DeploymentVersionView {
  buildId: string;
  /** The server's: CURRENT, RAMPING, DRAINING, DRAINED, INACTIVE. */
  status: string;
  /** Once not current: whether pinned workflows still run on it (DRAINING) or not (DRAINED). */
  drainage: string | null;
  createdAt: string | null;
}

export interface DeploymentView {
  name: string;
  current: string | null;
  ramping: { buildId: string; percent: number } | null;
  versions: DeploymentVersionView[];
}

/** The workflow types the worker runs, as the per-build counts name them. */
export const WORKFLOW_TYPES = ['shipmentWorkflow', 'trackingPollerWorkflow', 'shippingAccountWorkflow', 'shopPullWorkflow'] as const;

/**
 * The pinned ones (workflows/versioning.ts): a build keeps them until they end, so it drains
 * when none is open. The others move to the current build at their next task by themselves.
 */
export const PINNED_TYPES: ReadonlyArray<(typeof WORKFLOW_TYPES)[number]> = ['shipmentWorkflow', 'shopPullWorkflow'];

/** The deployment, or null while no versioned worker of it has polled yet. */
export async function describeDeployment(client: Client, name: string): Promise<DeploymentView | null> {
  let info;
  try {
    info = (await client.workflowService.describeWorkerDeployment({ namespace: client.options.namespace, deploymentName: name }))
      .workerDeploymentInfo;
  } catch (err) {
    if (isGrpcServiceError(err) && Number(err.code) === GRPC_NOT_FOUND) return null;
    throw err;
  }
  const routing = info?.routingConfig;
  const ramping = routing?.rampingDeploymentVersion?.buildId;
  return {
    name,
    current: routing?.currentDeploymentVersion?.buildId || null,
    ramping: ramping ? { buildId: ramping, percent: routing?.rampingVersionPercentage ?? 0 } : null,
    versions: (info?.versionSummaries ?? []).map((v) => ({
      buildId: v.deploymentVersion?.buildId ?? '',
      status: enumName(WorkerDeploymentVersionStatus[v.status ?? 0], 'WORKER_DEPLOYMENT_VERSION_STATUS_'),
      drainage: v.drainageInfo?.status ? enumName(VersionDrainageStatus[v.drainageInfo.status], 'VERSION_DRAINAGE_STATUS_') : null,
      createdAt: v.createTime?.seconds ? new Date(Number(v.createTime.seconds) * 1000).toISOString() : null,
    })),
  };
}

/** `TemporalWorkerDeploymentVersion` holds `name:buildId` for every run a versioned worker ran. */
export function versionQuery(name: string, buildId: string): string {
  return `TemporalWorkerDeploymentVersion = '${quote(`${name}:${buildId}`)}' AND ExecutionStatus = 'Running'`;
}

/** Open workflows on one build, by type (visibility lags the server by a second or so). */
export async function openOnBuild(client: Client, name: string, buildId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const type of WORKFLOW_TYPES)
    counts[type] = (await client.workflow.count(`${versionQuery(name, buildId)} AND WorkflowType = '${type}'`)).count;
  return counts;
}

export interface OpenShipment {
  workflowId: string;
  status: string | null;
  startedAt: string;
}

/** Open shipments on one build: how many in each phase (ShipmentStatus) and the `limit` oldest. */
export async function shipmentsOnBuild(
  client: Client,
  name: string,
  buildId: string,
  limit: number,
): Promise<{ total: number; byStatus: Record<string, number>; oldest: OpenShipment[] }> {
  const query = `${versionQuery(name, buildId)} AND WorkflowType = '${WORKFLOW_TYPE}'`;
  const byStatus: Record<string, number> = {};
  const oldest: OpenShipment[] = [];
  let total = 0;
  for await (const w of client.workflow.list({ query })) {
    total += 1;
    const status = w.typedSearchAttributes.get(SA.status) ?? null;
    byStatus[status ?? '(none)'] = (byStatus[status ?? '(none)'] ?? 0) + 1;
    oldest.push({ workflowId: w.workflowId, status, startedAt: w.startTime.toISOString() });
  }
  oldest.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  return { total, byStatus, oldest: oldest.slice(0, limit) };
}

/** Routes new workflows (and auto-upgrading ones) to `buildId`; ramping stops. */
export async function setCurrentVersion(client: Client, name: string, buildId: string, identity: string): Promise<void> {
  await client.workflowService.setWorkerDeploymentCurrentVersion({
    namespace: client.options.namespace,
    deploymentName: name,
    buildId,
    identity,
  });
}

/** Sends `percent` of new workflows to `buildId`, the rest to the current version. */
export async function setRampingVersion(client: Client, name: string, buildId: string, percent: number, identity: string): Promise<void> {
  await client.workflowService.setWorkerDeploymentRampingVersion({
    namespace: client.options.namespace,
    deploymentName: name,
    buildId,
    percentage: percent,
    identity,
  });
}

/** Removes a drained version the server no longer sees pollers of. */
export async function deleteVersion(client: Client, name: string, buildId: string, identity: string): Promise<void> {
  await client.workflowService.deleteWorkerDeploymentVersion({
    namespace: client.options.namespace,
    deploymentVersion: { deploymentName: name, buildId },
    identity,
  });
}

function quote(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

function enumName(name: string | undefined, prefix: string): string {
  return (name ?? 'UNSPECIFIED').replace(prefix, '');
}
