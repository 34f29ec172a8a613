/**
 * In a checkout where `npm run dev` runs, the import and CLI use the payload key and shop
 * connectors it gave the worker, so the README's second terminal needs no export for them: the
 * dev session file (dev-server/dev-session.ts) names them, and is used only when this process
 * talks to the same Temporal server and namespace. Anything the shell sets wins.
 */
import { loadTemporalSettings } from '../config/temporal-connection';
import { DEFAULT_DEV_DATA_DIR, readDevSession } from '../dev-server/dev-session';

type Env = Record<string, string | undefined>;

/** `env` with the dev session's settings for what it leaves unset; `env` itself when there is no matching session. */
export function withDevCheckout(env: Env): Env {
  const session = readDevSession(env.DEV_DATA_DIR || DEFAULT_DEV_DATA_DIR);
  if (!session || !sameServer(env, session)) return env;
  const added: Env = {};
  const keysGiven = env.PAYLOAD_ENCRYPTION_KEYS || env.PAYLOAD_ENCRYPTION_KEYS_FILE || env.PAYLOAD_ENCRYPTION;
  if (!keysGiven) {
    if (session.payloadEncryptionKeysFile) added.PAYLOAD_ENCRYPTION_KEYS_FILE = session.payloadEncryptionKeysFile;
    else if (session.payloadEncryption === 'off') added.PAYLOAD_ENCRYPTION = 'off';
  }
  if (!env.SHOP_CONNECTORS && !env.SHOP_CONNECTORS_FILE && session.shopConnectorsFile) {
    added.SHOP_CONNECTORS_FILE = session.shopConnectorsFile;
  }
  return Object.keys(added).length === 0 ? env : { ...env, ...added };
}

function sameServer(env: Env, session: { temporalAddress: string; namespace: string }): boolean {
  try {
    const settings = loadTemporalSettings(env);
    return sameAddress(settings.address, session.temporalAddress) && settings.namespace === session.namespace;
  } catch {
    return false; // the command reports its own bad settings
  }
}

/** localhost and 127.0.0.1 are one host here. */
function sameAddress(a: string, b: string): boolean {
  const loopback = (address: string) => address.replace(/^(localhost|127\.0\.0\.1|\[::1\])(?=:)/, 'loopback');
  return loopback(a) === loopback(b);
}
