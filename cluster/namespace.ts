/** The cluster's namespace: registered on first start, with this project's search attributes. */
import { Connection, isGrpcServiceError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { ensureSearchAttributes } from '../dev-server/search-attributes';
import { delay } from '../launcher/delay';
import { NAMESPACE, NAMESPACE_RETENTION_DAYS } from './config';

const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;

/** Registers the namespace (first start) and the project's search attributes in it. */
export async function setUpNamespace(connection: Connection, dataDir: string): Promise<{ created: boolean; attributes: string[] }> {
  let created = false;
  try {
    await connection.workflowService.describeNamespace({ namespace: NAMESPACE });
  } catch (err) {
    if (!isGrpcServiceError(err) || Number(err.code) !== GRPC_NOT_FOUND) throw err;
    try {
      await connection.workflowService.registerNamespace({
        namespace: NAMESPACE,
        workflowExecutionRetentionPeriod: msToTs(`${NAMESPACE_RETENTION_DAYS} days`),
        description: 'shipments (npm run cluster)',
      });
      created = true;
    } catch (e) {
      if (!isGrpcServiceError(e) || Number(e.code) !== GRPC_ALREADY_EXISTS) throw e;
    }
  }
  // A new namespace reaches the frontend's namespace cache within seconds; until then it is "not found".
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const attributes = await ensureSearchAttributes(
        connection,
        NAMESPACE,
        `Stop the cluster and delete ${dataDir} to start fresh (this drops its workflow history).`,
      );
      return { created, attributes };
    } catch (err) {
      if (!isGrpcServiceError(err) || Number(err.code) !== GRPC_NOT_FOUND || Date.now() > deadline) throw err;
      await delay(500);
    }
  }
}
