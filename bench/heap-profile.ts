/**
 * What holds a worker process's memory, asked of the running process by signals (Node's own
 * diagnostics, no code in the worker): a diagnostic report gives the heap of each thread (the
 * main thread runs the activities and the pollers' spans, a worker thread the workflows) and the
 * RSS; a heap snapshot of the main thread gives its live objects by constructor. The workflow
 * thread's heap is divided by the workflows in its cache (the SDK's sticky cache gauge).
 *
 * Hand-written rather than a snapshot library (v8-heapsnapshot and the like build an object per
 * node and edge: millions here): a summary by constructor needs only the flat node array.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { sleep } from './stack';

const REPORT_SIGNAL = 'SIGWINCH';
const SNAPSHOT_SIGNAL = 'SIGURG';
/** Larger snapshots than this are not read (a string of the whole file would not fit V8). */
const MAX_SNAPSHOT_BYTES = 480 << 20;

export interface HeapProfile {
  rssMb: number;
  /** The main thread's heap in use (activities, spans, the SDK's client side). */
  mainHeapMb: number;
  /** The workflow threads' heap in use (the cached workflows, the bundle). */
  workflowHeapMb: number;
  /** RSS outside the V8 heaps: the SDK's Rust core, buffers, code. */
  otherMb: number;
  /** Of the RSS, pages mapped from files (node's and the SDK's native code): shared, not allocated. */
  fileBackedMb: number;
  cachedWorkflows: number;
  /** The workflow threads' heap ÷ cached workflows. */
  kbPerCachedWorkflow: number;
  /** Live objects of the main thread by constructor (from its heap snapshot), largest first. */
  mainByConstructor: Array<{ name: string; count: number; mb: number }>;
}

/** NODE_OPTIONS for a process to be profiled: its reports and snapshots go to `dir`. */
export function heapProfileNodeOptions(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return [
    process.env.NODE_OPTIONS ?? '',
    '--report-on-signal',
    `--report-signal=${REPORT_SIGNAL}`,
    '--report-compact',
    `--report-directory=${dir}`,
    `--heapsnapshot-signal=${SNAPSHOT_SIGNAL}`,
    `--diagnostic-dir=${dir}`,
  ]
    .join(' ')
    .trim();
}

/** The SDK's workflow cache in a worker's metrics, summed over its task queues and workflow types. */
export interface WorkflowCacheStats {
  /** Workflows cached now. */
  size: number;
  /** Tasks of a workflow not in the cache: each replays its history. */
  misses: number;
  /** Workflows evicted to make room. */
  forcedEvictions: number;
}

/** The workflow cache's figures from the SDK's Prometheus metrics at `metricsAddress` (NaN when it does not answer). */
export async function workflowCache(metricsAddress: string): Promise<WorkflowCacheStats> {
  try {
    const text = await (await fetch(`http://${metricsAddress}/metrics`)).text();
    const sum = (name: string) =>
      text
        .split('\n')
        .filter((l) => new RegExp(`^${name}(\\{|\\s)`).test(l))
        .reduce((total, l) => total + Number(l.trim().split(/\s+/).at(-1)), 0);
    return {
      size: sum('temporal_sticky_cache_size'),
      misses: sum('temporal_sticky_cache_miss'),
      forcedEvictions: sum('temporal_sticky_cache_total_forced_eviction'),
    };
  } catch {
    return { size: NaN, misses: NaN, forcedEvictions: NaN };
  }
}

/** Asks process `pid` (started with heapProfileNodeOptions(dir)) for a report and a snapshot, and sums them up. */
export async function profileHeap(pid: number, dir: string, cached: number): Promise<HeapProfile> {
  const report = JSON.parse(readFileSync(await fileAfterSignal(pid, REPORT_SIGNAL, dir, '.json'), 'utf8')) as NodeReport;
  const snapshot = await fileAfterSignal(pid, SNAPSHOT_SIGNAL, dir, '.heapsnapshot');
  const mb = (bytes: number) => Math.round(bytes / 1024 / 102.4) / 10;
  const mainHeap = report.javascriptHeap.usedMemory;
  const workflowHeap = report.workers.reduce((sum, w) => sum + w.javascriptHeap.usedMemory, 0);
  const rss = report.resourceUsage.rss;
  const fileBacked = statusKb(pid, 'RssFile') * 1024;
  return {
    rssMb: mb(rss),
    mainHeapMb: mb(mainHeap),
    workflowHeapMb: mb(workflowHeap),
    otherMb: mb(rss - mainHeap - workflowHeap),
    fileBackedMb: mb(fileBacked),
    cachedWorkflows: cached,
    kbPerCachedWorkflow: cached > 0 ? Math.round(workflowHeap / cached / 102.4) / 10 : NaN,
    mainByConstructor: statSync(snapshot).size <= MAX_SNAPSHOT_BYTES ? byConstructor(readFileSync(snapshot, 'utf8'), 12) : [],
  };
}

function statusKb(pid: number, key: string): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
}

interface NodeReport {
  javascriptHeap: { usedMemory: number };
  workers: Array<{ javascriptHeap: { usedMemory: number } }>;
  resourceUsage: { rss: number };
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/**
 * Self sizes summed by constructor (objects) or by kind (strings, arrays, code…, in
 * parentheses, as DevTools shows them): the `top` largest.
 */
export function byConstructor(snapshotJson: string, top: number): HeapProfile['mainByConstructor'] {
  const heap = JSON.parse(snapshotJson) as HeapSnapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const sums = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const type = types[heap.nodes[i + typeAt]!]!;
    const name = type === 'object' || type === 'native' ? heap.strings[heap.nodes[i + nameAt]!]! : `(${type})`;
    const sum = sums.get(name) ?? { count: 0, bytes: 0 };
    sum.count++;
    sum.bytes += heap.nodes[i + sizeAt]!;
    sums.set(name, sum);
  }
  return [...sums]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, top)
    .map(([name, s]) => ({ name, count: s.count, mb: Math.round(s.bytes / 1024 / 102.4) / 10 }));
}

/** Sends `signal` and waits for the file it makes in `dir` to be complete (a JSON document whose size stopped changing). */
async function fileAfterSignal(pid: number, signal: NodeJS.Signals, dir: string, ending: string, timeoutMs = 180_000): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, signal);
  const deadline = Date.now() + timeoutMs;
  let lastSize = -1;
  while (Date.now() < deadline) {
    await sleep(1000);
    const found = readdirSync(dir).find((f) => f.endsWith(ending) && !before.has(f));
    if (!found) continue;
    const file = path.join(dir, found);
    const size = statSync(file).size;
    if (size > 0 && size === lastSize && endsWithBrace(file, size)) return file;
    lastSize = size;
  }
  throw new Error(`no ${ending} from the worker in ${dir} within ${timeoutMs / 1000} s`);
}

function endsWithBrace(file: string, size: number): boolean {
  const fd = openSync(file, 'r');
  try {
    const tail = Buffer.alloc(Math.min(16, size));
    readSync(fd, tail, 0, tail.length, size - tail.length);
    return tail.toString().trimEnd().endsWith('}');
  } finally {
    closeSync(fd);
  }
}
