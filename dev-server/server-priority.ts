/**
 * Temporal task queue priority on the servers this project runs (domain/priority.ts). Server
 * 1.29.1 dispatches a queue's tasks by priority only with its new matcher, which is off by
 * default there: "To disable Priority in self-hosted Temporal, set the dynamic config
 * matching.useNewMatcher to false" (docs.temporal.io/develop/task-queue-priority-fairness) holds
 * for later servers; on 1.29.1 the old matcher, FIFO, is the default (test/live-orders-first.test.ts
 * checks the dev server). One list for the dev server's flags, the cluster's and compose's file.
 */
export const PRIORITY_DYNAMIC_CONFIG: ReadonlyArray<readonly [key: string, value: boolean]> = [['matching.useNewMatcher', true]];

/** `temporal server start-dev` flags that turn priority on. */
export function priorityDevServerArgs(): string[] {
  return PRIORITY_DYNAMIC_CONFIG.flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${value}`]);
}

/** The same as dynamic config YAML (the cluster's file; docker-compose mounts cluster/dynamicconfig.yaml). */
export function priorityDynamicConfigYaml(): string {
  return PRIORITY_DYNAMIC_CONFIG.map(([key, value]) => `${key}:\n  - value: ${value}\n`).join('');
}
