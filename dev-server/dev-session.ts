/**
 * What a running `npm run dev` tells the import and CLI of the same checkout: where its Temporal
 * server is, and the files holding the payload key and the shop connectors the worker got. The
 * README's second terminal then needs no export for them (client/dev-checkout.ts reads it). Only
 * paths are written, never key material; the file is 0600 in the 0700 data dir.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { REPO_ROOT } from './temporal-cli';

export const DEV_SESSION_FILE = 'dev-session.json';
/** The shop connectors npm run dev gives the worker, as a SHOP_CONNECTORS_FILE (their secrets change every start). */
export const DEV_CONNECTORS_FILE = 'shop-connectors.json';
/** npm run dev's data dir when no --data-dir is given. */
export const DEFAULT_DEV_DATA_DIR = path.join(REPO_ROOT, '.data');

export const DevSession = z.strictObject({
  temporalAddress: z.string().min(1).max(300),
  namespace: z.string().min(1).max(300),
  /** Unset with --no-encryption (then `payloadEncryption: "off"`). */
  payloadEncryptionKeysFile: z.string().min(1).max(4096).optional(),
  payloadEncryption: z.literal('off').optional(),
  /** Unset when the shell gave the worker its own SHOP_CONNECTORS(_FILE). */
  shopConnectorsFile: z.string().min(1).max(4096).optional(),
});
export type DevSession = z.infer<typeof DevSession>;

/** Written whole (a temporary file renamed), so a reader never sees half of it. */
export function writeDevFile(dataDir: string, name: string, text: string): string {
  const file = path.join(dataDir, name);
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, text, { mode: 0o600 });
  fs.renameSync(temporary, file);
  return file;
}

export function writeDevSession(dataDir: string, session: DevSession): string {
  return writeDevFile(dataDir, DEV_SESSION_FILE, `${JSON.stringify(DevSession.parse(session), null, 2)}\n`);
}

/** The session of `dataDir`, undefined when there is none or it is not one this version wrote. */
export function readDevSession(dataDir: string): DevSession | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dataDir, DEV_SESSION_FILE), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = DevSession.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
