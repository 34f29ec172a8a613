/**
 * The scale bench's heap summary (bench/heap-profile.ts): live objects summed by constructor
 * from a real V8 heap snapshot (of a small worker thread, so it stays fast).
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { byConstructor } from '../bench/heap-profile';

async function snapshotOfThread(code: string): Promise<string> {
  const worker = new Worker(`${code}\nrequire('node:worker_threads').parentPort.postMessage('ready'); setInterval(() => {}, 1000);`, {
    eval: true,
  });
  try {
    await new Promise((resolve) => worker.once('message', resolve));
    const chunks: string[] = [];
    for await (const chunk of await worker.getHeapSnapshot()) chunks.push(String(chunk));
    return chunks.join('');
  } finally {
    await worker.terminate();
  }
}

describe('heap profile by constructor', () => {
  it('counts the objects a thread holds under their constructor, largest first', async () => {
    const json = await snapshotOfThread(
      'class HeldLabel { constructor(i) { this.id = i; this.a = i + 1; this.b = i + 2; } }\n' +
        'globalThis.held = Array.from({ length: 20000 }, (_, i) => new HeldLabel(i));',
    );
    const summary = byConstructor(json, 50);
    const held = summary.find((c) => c.name === 'HeldLabel');
    expect(held?.count).toBe(20000);
    // Each instance is a header plus its in-object fields: tens of bytes, so about 0.3 to 2 MB in all.
    expect(held!.mb).toBeGreaterThan(0.2);
    expect(held!.mb).toBeLessThan(2);
    const sizes = summary.map((c) => c.mb);
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    expect(byConstructor(json, 3)).toHaveLength(3);
  });
});
