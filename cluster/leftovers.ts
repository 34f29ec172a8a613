/**
 * What `up` records in <data-dir>/cluster.json, so `down` (or the next `up`) can stop what a
 * killed `npm run cluster` left running.
 */
import fs from 'node:fs';
import { z } from 'zod';
import { delay } from '../launcher/delay';
import type { ClusterLayout } from './config';
import type { Service } from './services';

const StateFile = z.object({
  pid: z.number(),
  services: z.array(z.object({ name: z.string(), pid: z.number(), command: z.string(), stopSignal: z.string() })),
});

/** The program `pid` runs, or undefined when there is no such process. */
export function processCommand(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
  } catch {
    return undefined;
  }
}

export function writeStateFile(layout: ClusterLayout, services: readonly Service[]): void {
  const state: z.infer<typeof StateFile> = {
    pid: process.pid,
    services: services
      .filter((s) => s.pid !== undefined)
      .map((s) => ({ name: s.name, pid: s.pid!, command: s.spec.command, stopSignal: s.spec.stopSignal })),
  };
  fs.writeFileSync(layout.stateFile, JSON.stringify(state, null, 2));
}

/** Stops processes a killed `up` left running (only those still running the recorded program). */
export async function stopLeftovers(layout: ClusterLayout): Promise<string[]> {
  if (!fs.existsSync(layout.stateFile)) return [];
  const state = StateFile.safeParse(JSON.parse(fs.readFileSync(layout.stateFile, 'utf8')));
  const stopped: string[] = [];
  if (state.success) {
    // Reverse start order, as a normal stop does.
    for (const s of [...state.data.services].reverse()) {
      if (processCommand(s.pid) !== s.command) continue;
      try {
        process.kill(s.pid, s.stopSignal);
      } catch {
        continue;
      }
      const deadline = Date.now() + 20_000;
      while (processCommand(s.pid) === s.command && Date.now() < deadline) await delay(100);
      if (processCommand(s.pid) === s.command) {
        try {
          process.kill(-s.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      stopped.push(`${s.name} (pid ${s.pid})`);
    }
  }
  removeStateFiles(layout);
  return stopped;
}

export function removeStateFiles(layout: ClusterLayout): void {
  fs.rmSync(layout.stateFile, { force: true });
  fs.rmSync(layout.controlSocket, { force: true });
}
