/**
 * `npm run cluster` as the cluster tests and the capacity bench run it: a real process on free
 * ports with its own data directory, and the cluster's command line (status, restart, ...) as
 * further processes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { ClusterStatusSchema } from './control';
import { freePort } from '../dev-server/free-port';
import { TEMPORAL_PORT_BLOCK } from './config';

export const ROOT = path.join(__dirname, '..');

export interface RunningCluster {
  proc: ChildProcess;
  dataDir: string;
  output: () => string;
  exited: Promise<number | null>;
  /**
   * Runs `npm run cluster -- <args> --data-dir <dataDir>` (as node --import tsx). Never with
   * spawnSync: a blocked event loop stops reading the cluster's output, which then blocks.
   */
  cli: (...args: string[]) => Promise<{ status: number | null; stdout: string; stderr: string }>;
  status: () => Promise<z.infer<typeof ClusterStatusSchema>>;
  /** SIGTERM (workers first, as Ctrl-C), then the data directory is removed. */
  stop: () => Promise<void>;
}

async function portBlockFree(base: number, size: number): Promise<boolean> {
  const net = await import('node:net');
  for (let p = base; p < base + size; p++) {
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen({ port: p, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
    });
    if (!free) return false;
  }
  return true;
}

/** A block of `size` free loopback ports below 32768 (the Temporal server needs 10 in a row). */
export async function freePortBlock(size: number): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const base = 20_000 + Math.floor(Math.random() * (32_767 - size - 20_000));
    if (await portBlockFree(base, size)) return base;
  }
  throw new Error(`no block of ${size} free ports found`);
}

export async function startCluster(opts: {
  workers: number;
  trackingStepMs: number;
  env: Record<string, string>;
}): Promise<RunningCluster> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-test-'));
  // Run as root, PostgreSQL runs as the postgres user, which must be able to enter the directory.
  fs.chmodSync(tmp, 0o755);
  const dataDir = path.join(tmp, 'data');
  const args = [
    '--import',
    'tsx',
    'cluster/main.ts',
    'up',
    '--data-dir',
    dataDir,
    '--pg-port',
    String(await freePort()),
    '--temporal-port',
    String(await freePortBlock(TEMPORAL_PORT_BLOCK)),
    '--ui-port',
    String(await freePort()),
    '--fake-api-port',
    String(await freePort()),
    '--workers',
    String(opts.workers),
    '--tracking-step-ms',
    String(opts.trackingStepMs),
  ];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...opts.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout.on('data', (d) => (output += d));
  proc.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const cli = (...cliArgs: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'cluster/main.ts', ...cliArgs, '--data-dir', dataDir], {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('exit', (status) => resolve({ status, stdout, stderr }));
    });
  const status = async () => {
    const r = await cli('status', '--json');
    if (r.status !== 0) throw new Error(`cluster status exited ${r.status}: ${r.stdout}${r.stderr}`);
    return ClusterStatusSchema.parse(JSON.parse(r.stdout));
  };
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  };
  // Cold, this includes Go builds: minutes.
  const deadline = Date.now() + 900_000;
  try {
    while (!output.includes('Temporal cluster is running')) {
      if (proc.exitCode !== null) throw new Error(`npm run cluster exited ${proc.exitCode} during start-up:\n${output}`);
      if (Date.now() > deadline) throw new Error(`npm run cluster did not come up:\n${output}`);
      await sleep(200);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { proc, dataDir, output: () => output, exited, cli, status, stop };
}
