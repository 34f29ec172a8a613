/**
 * The shipment's code has no circle of imports (type-only imports count too): the workflow's
 * steps name the shell they need (workflows/shipment/shell.ts), not the run that reads them, and
 * the machine's modules import each other one way.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..');
const FOLDERS = ['workflows/shipment', 'domain/shipment-machine'];

/** Each file's imports of a sibling in its folder (`./x`), type-only ones included. */
function siblingImports(files: Map<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of files) {
    const dir = path.posix.dirname(file);
    const targets = [...text.matchAll(/\bfrom\s+'(\.\/[^']+)'/g)].map((m) => path.posix.join(dir, `${m[1]}.ts`));
    graph.set(
      file,
      targets.filter((t) => files.has(t)),
    );
  }
  return graph;
}

/** The circles of a graph, each as the files around it (empty when there is none). */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    trail.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...trail.slice(trail.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    trail.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

function sources(): Map<string, string> {
  const files = new Map<string, string>();
  for (const folder of FOLDERS)
    for (const name of readdirSync(path.join(ROOT, folder)))
      if (name.endsWith('.ts') && !name.endsWith('.test.ts'))
        files.set(`${folder}/${name}`, readFileSync(path.join(ROOT, folder, name), 'utf8'));
  return files;
}

describe('the circle finder', () => {
  it('finds a circle of type-only imports', () => {
    const files = new Map([
      ['w/run.ts', "import { makeLabel } from './label';"],
      ['w/label.ts', "import type { ShipmentRun } from './run';"],
      ['w/state.ts', ''],
    ]);
    expect(circles(siblingImports(files))).toEqual([['w/label.ts', 'w/run.ts', 'w/label.ts']]);
  });

  it('finds none where imports run one way', () => {
    const files = new Map([
      ['w/run.ts', "import { makeLabel } from './label';\nimport type { Shell } from './shell';"],
      ['w/label.ts', "import type { Shell } from './shell';"],
      ['w/shell.ts', ''],
    ]);
    expect(circles(siblingImports(files))).toEqual([]);
  });
});

describe("the shipment's workflow and machine", () => {
  it('import one way only', () => {
    const files = sources();
    expect(files.size).toBeGreaterThan(20);
    expect(circles(siblingImports(files))).toEqual([]);
  });
});
