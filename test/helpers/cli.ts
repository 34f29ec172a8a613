/**
 * Running the operator CLI in tests: as a real child process (`client/cli.ts` compiled as
 * `npm run build` does, or through tsx: helpers/compiled.ts; the CLI an operator runs, for exit
 * codes and output), or in-process with captured streams (fast, for many small cases).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { Io } from '../../client/cli-support';
import { nodeArgsFor } from './compiled';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Variables of the parent that would leak into the child's configuration; and npm's own (under
 * `npm test` the child would spell its hints as `npm run cli --`: it runs as the bin does).
 */
const CONFIG_PREFIXES = ['TEMPORAL_', 'SHIPPING_API_', 'npm_', 'PAYLOAD_ENCRYPTION', 'DEV_DATA_DIR'];

/**
 * The tests' workers mostly run without keys, so their CLI is told to send in clear, as an operator
 * of such a worker would have to (PAYLOAD_ENCRYPTION=off); a test that gives keys, or names
 * PAYLOAD_ENCRYPTION itself, or passes `PAYLOAD_ENCRYPTION: ''` to test the refusal, is left alone.
 */
export function keylessUnlessGiven<E extends Record<string, string | undefined>>(env: E): E {
  const given = ['PAYLOAD_ENCRYPTION', 'PAYLOAD_ENCRYPTION_KEYS', 'PAYLOAD_ENCRYPTION_KEYS_FILE'].some((k) => k in env);
  return given ? env : { ...env, PAYLOAD_ENCRYPTION: 'off' };
}

/**
 * Runs the CLI (`client/cli.ts <args>`) with only the given configuration variables (the test
 * process's own TEMPORAL_* / SHIPPING_API_* are removed, so a test states everything it relies on).
 * One node process, compiled JavaScript when the run has it: hundreds of commands a run.
 */
export function runCli(args: string[], opts: { env?: Record<string, string>; stdin?: string; timeoutMs?: number } = {}): Promise<CliRun> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !CONFIG_PREFIXES.some((p) => k.startsWith(p))) env[k] = v;
  }
  Object.assign(env, keylessUnlessGiven(opts.env ?? {}), { NO_COLOR: '1' });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgsFor('client/cli.ts'), ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`shipments ${args.join(' ')} did not finish within ${opts.timeoutMs ?? 30_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`),
      );
    }, opts.timeoutMs ?? 30_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

/** An Io whose output is collected (synchronously), for calling a command function in-process. */
export function captureIo(opts: { env?: Record<string, string | undefined>; stdin?: string; tty?: boolean } = {}) {
  const collected = { out: '', err: '' };
  const sink = (key: 'out' | 'err') =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        collected[key] += chunk.toString();
        callback();
      },
    });
  const stderr = sink('err') as Writable & { isTTY?: boolean; columns?: number };
  if (opts.tty) {
    stderr.isTTY = true;
    stderr.columns = 100;
  }
  const io: Io = { stdout: sink('out'), stderr, stdin: Readable.from([opts.stdin ?? '']), env: keylessUnlessGiven(opts.env ?? {}) };
  return { io, stdout: () => collected.out, stderr: () => collected.err };
}
