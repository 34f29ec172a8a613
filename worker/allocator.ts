/**
 * Which C allocator serves this process: most of a busy worker's memory is outside the V8 heaps
 * (the SDK's Rust core, gRPC buffers), and with glibc's allocator it stays after an import's
 * peak; with jemalloc (the Dockerfile preloads it) the same worker holds far less
 * (docs/configuration.md, "Worker memory"). The worker says which in its "worker started" line.
 */
import { existsSync, readFileSync } from 'node:fs';

export type Allocator = 'jemalloc' | 'tcmalloc' | 'mimalloc' | 'system';

/** Where Debian's libjemalloc2 puts it, per architecture (`npm start` and the Dockerfile preload it). */
export const JEMALLOC_PATHS = ['/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2'];

/** LD_PRELOAD for a worker process started from Node (`npm run dev`, the scale bench): jemalloc where installed, unless the environment names a preload already. */
export function jemallocPreload(env: NodeJS.ProcessEnv): { LD_PRELOAD?: string } {
  const installed = JEMALLOC_PATHS.find((p) => existsSync(p));
  return installed && env.LD_PRELOAD === undefined ? { LD_PRELOAD: installed } : {};
}

/** The allocator a process's memory map (the text of /proc/<pid>/maps) shows loaded. */
export function allocatorInMaps(maps: string): Allocator {
  for (const name of ['jemalloc', 'tcmalloc', 'mimalloc'] as const) {
    if (new RegExp(`/lib${name}[^/\\s]*\\.so`).test(maps)) return name;
  }
  return 'system';
}

/** This process's allocator; "system" where /proc is not there to tell (not Linux). */
export function currentAllocator(): Allocator {
  try {
    return allocatorInMaps(readFileSync('/proc/self/maps', 'utf8'));
  } catch {
    return 'system';
  }
}

/**
 * What the worker warns at start on Linux without a better allocator: glibc's keeps what an
 * import's peak took (10,000 brought to tracking: about 1 GB settled, against about 500 MB on
 * jemalloc; docs/configuration.md, "Worker memory"). Elsewhere, or on any other, nothing.
 */
export function allocatorWarning(allocator: Allocator, platform: NodeJS.Platform): string | undefined {
  if (platform !== 'linux' || allocator !== 'system') return undefined;
  return "the worker runs on glibc's allocator, which keeps an import's peak (about twice the memory at 10,000 shipments): install libjemalloc2 (apt-get install libjemalloc2); npm start and npm run worker preload it, or set LD_PRELOAD";
}
