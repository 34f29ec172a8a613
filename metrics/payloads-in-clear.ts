/**
 * A worker with encryption keys that decodes a payload in clear: some client without the keys
 * (an import, a CLI, a script) started or steered that workflow, and its personal data sits in
 * clear in Temporal's database. Each workflow is logged (by id, never its data) and counted once
 * per process; the set of those seen is bounded, so a flood costs no memory.
 */
import type { PlainPayloadListener } from '../codec/encryption-codec';
import { workflowsInClear } from './counters';

const REMEMBERED = 10_000;

export function payloadsInClearWatch(warn: (message: string, meta: Record<string, unknown>) => void): PlainPayloadListener {
  const seen = new Set<string>();
  return (workflowId) => {
    const key = workflowId ?? '(unknown workflow)';
    if (seen.has(key)) return;
    if (seen.size >= REMEMBERED) seen.delete(seen.values().next().value!);
    seen.add(key);
    workflowsInClear.inc();
    warn(
      `${key}: its payloads reached this worker unencrypted (started or steered by a client without PAYLOAD_ENCRYPTION_KEYS): its names, addresses and phones are in clear in Temporal's database`,
      { workflowId: key },
    );
  };
}
