/**
 * Every patch states when it retires (docs/workflow.md, "Patches"): each id given to `patched()` or
 * `deprecatePatch()` in the workflow code is a named constant whose comment has a `Retire:` line.
 * A patch without one is a branch nobody will dare delete.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..');
/** The workflow code: the workflows and the definitions they share (the pull's and the poller's patch ids live there). */
const WORKFLOW_CODE = ['workflows', 'workflow-definitions'];

function sources(): Array<{ file: string; text: string }> {
  return WORKFLOW_CODE.flatMap((dir) => readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .map((file) => ({ file: path.relative(ROOT, file), text: readFileSync(file, 'utf8') }));
}

/** The doc comment right above `export const NAME = '...'`, by name. */
function declaredPatches(files: Array<{ file: string; text: string }>): Map<string, { id: string; comment: string; file: string }> {
  const found = new Map<string, { id: string; comment: string; file: string }>();
  for (const { file, text } of files) {
    for (const m of text.matchAll(/(\/\*\*(?:(?!\*\/)[\s\S])*\*\/)\s*export const ([A-Z0-9_]+) = '([a-z0-9-]+)';/g))
      found.set(m[2]!, { comment: m[1]!, id: m[3]!, file });
  }
  return found;
}

it('every patch id used by the workflows is a named constant whose comment says when it retires', () => {
  const files = sources();
  const declared = declaredPatches(files);
  const used = new Set<string>();
  for (const { file, text } of files) {
    for (const m of text.matchAll(/\b(?:patched|deprecatePatch)\(\s*([^)\s]+)\s*\)/g)) {
      if (file.endsWith('patches.ts') && m[1] === 'id') continue; // the doc's own example
      expect(m[1], `${file}: patched() takes a named constant, not a literal`).toMatch(/^[A-Z0-9_]+$/);
      used.add(m[1]!);
    }
  }
  expect(used.size).toBeGreaterThan(0);
  const missing = [...used].filter((name) => !declared.has(name));
  expect(missing, 'patch constants declared with a doc comment in the workflow code').toEqual([]);
  const withoutRetirement = [...used].filter((name) => !/^\s*\*\s*Retire:\s*\S/m.test(declared.get(name)!.comment));
  expect(withoutRetirement, 'patches whose comment has no "Retire:" line').toEqual([]);
  const ids = [...used].map((name) => declared.get(name)!.id);
  expect(new Set(ids).size, 'patch ids are unique').toBe(ids.length);
});
