/** `npm run dev` as a user runs it (its own process group), for the tests that need the whole demo. */
import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT } from './cli';
import { waitFor } from './wait';
import { freePort } from '../../dev-server/free-port';

export interface DevProcess {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** Its exit code, once it has exited. */
  exited: Promise<number | null>;
}

/** Starts `dev-server/dev.ts` with `flags` (e.g. `{ 'temporal-port': 7233 }`) and waits for its banner. */
export async function startDevProcess(flags: Record<string, string | number | true>, env: NodeJS.ProcessEnv): Promise<DevProcess> {
  // The worker's metrics endpoints listen by default: on free ports, so two tests never meet.
  const all: Record<string, string | number | true> = { 'health-port': await freePort(), 'sdk-metrics-port': await freePort(), ...flags };
  const args = Object.entries(all).flatMap(([flag, value]) => (value === true ? [`--${flag}`] : [`--${flag}`, String(value)]));
  const child = spawn(process.execPath, ['--import', 'tsx', 'dev-server/dev.ts', ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`npm run dev exited early:\n${output}`);
      return output.includes('dev environment is running') ? true : undefined;
    },
    { what: 'the dev banner', timeoutMs: 120_000, intervalMs: 250 },
  );
  return { child, output: () => output, exited };
}

/**
 * After a failed test: Ctrl-C, as a user would, so dev stops the children it started (each in
 * a process group of its own, which a SIGKILL of dev's group does not reach); SIGKILL only if it
 * has not stopped within `graceMs`.
 */
export async function stopDevProcess(child: ChildProcess | undefined, graceMs = 20_000): Promise<void> {
  if (!child?.pid || child.exitCode !== null) return;
  const exited = new Promise<boolean>((resolve) => child.once('exit', () => resolve(true)));
  process.kill(-child.pid, 'SIGINT');
  const stopped = await Promise.race([exited, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs))]);
  if (!stopped && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
}
