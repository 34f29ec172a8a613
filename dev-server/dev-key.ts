/**
 * `npm run dev` encrypts payloads by default: the demo is where real exports get tried first, and
 * a recipient's name, phone and e-mail must not sit in clear in the Temporal database. The key is
 * made once, kept beside that database (0600, its folder 0700) and used until the data dir is
 * deleted with it; `--no-encryption` opts out.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const DEV_KEY_FILE = 'payload-encryption.keys';
const DEV_KEY_ID = 'dev-key-1';

/** The path of the data dir's key file, made now when missing. */
export function ensureDevKeyFile(dataDir: string, madeBy = 'npm run dev'): { file: string; created: boolean } {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, DEV_KEY_FILE);
  const line = `# made by ${madeBy}; payloads in ${dataDir}'s Temporal database need it\n${DEV_KEY_ID}=${randomBytes(32).toString('base64')}\n`;
  try {
    fs.writeFileSync(file, line, { flag: 'wx', mode: 0o600 });
    return { file, created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    fs.chmodSync(file, 0o600); // kept private even if someone loosened it
    return { file, created: false };
  }
}
