/**
 * Every patch states when it retires (docs/workflow.md, "Patches"): each id given to `patched()` or
 * `deprecatePatch()` in the workflow code is a named constant whose comment has a `Retire:` line.
 * A patch without one is a branch nobody will dare delete. 1.0 starts with none; the checker is
 * also run on samples, so it still fails on a patch without its line once there are some.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const WORKFLOWS = path.resolve(__dirname, '..', 'workflows');

type Source = { file: string; text: string };

function sources(): Source[] {
  return readdirSync(WORKFLOWS, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .map((file) => ({ file: path.relative(WORKFLOWS, file), text: readFileSync(file, 'utf8') }));
}

/** The doc comment right above `export const NAME = '...'`, by name. */
function declaredPatches(files: Source[]): Map<string, { id: string; comment: string; file: string }> {
  const found = new Map<string, { id: string; comment: string; file: string }>();
  for (const { file, text } of files) {
    for (const m of text.matchAll(/(\/\*\*(?:(?!\*\/)[\s\S])*\*\/)\s*export const ([A-Z0-9_]+) = '([a-z0-9-]+)';/g))
      found.set(m[2]!, { comment: m[1]!, id: m[3]!, file });
  }
  return found;
}

/** What is wrong with the patches of these sources (empty when nothing is); the ids used, by constant. */
function checkPatches(files: Source[]): { problems: string[]; used: string[] } {
  const declared = declaredPatches(files);
  const problems: string[] = [];
  const used = new Set<string>();
  for (const { file, text } of files) {
    for (const m of text.matchAll(/\b(?:patched|deprecatePatch)\(\s*([^)\s]+)\s*\)/g)) {
      if (!/^[A-Z0-9_]+$/.test(m[1]!)) problems.push(`${file}: patched(${m[1]}) takes a named constant, not a literal`);
      else used.add(m[1]!);
    }
  }
  for (const name of used) {
    const patch = declared.get(name);
    if (!patch) problems.push(`${name}: no constant with a doc comment in workflows/`);
    else if (!/^\s*\*\s*Retire:\s*\S/m.test(patch.comment)) problems.push(`${name}: its comment has no "Retire:" line`);
  }
  const ids = [...used].flatMap((name) => declared.get(name)?.id ?? []);
  if (new Set(ids).size !== ids.length) problems.push('patch ids are not unique');
  return { problems, used: [...used] };
}

describe('the patch checker', () => {
  const declare = (name: string, id: string, retire: boolean) =>
    `/**\n * What changes.\n${retire ? ' * Retire: once no run started before it is open.\n' : ''} */\nexport const ${name} = '${id}';\n`;

  it('passes a patch whose constant says when it retires', () => {
    const files = [{ file: 'a.ts', text: `${declare('NEW_PATH', 'new-path', true)}if (patched(NEW_PATH)) go();` }];
    expect(checkPatches(files)).toEqual({ problems: [], used: ['NEW_PATH'] });
  });

  it('fails a patch without a Retire line, a literal id, an undeclared constant and a duplicate id', () => {
    const files = [
      { file: 'a.ts', text: `${declare('NO_RETIRE', 'no-retire', false)}patched(NO_RETIRE);` },
      { file: 'b.ts', text: `patched('literal-id'); deprecatePatch(NOWHERE);` },
      { file: 'c.ts', text: `${declare('ONE', 'same', true)}${declare('TWO', 'same', true)}patched(ONE); patched(TWO);` },
    ];
    expect(checkPatches(files).problems).toEqual([
      "b.ts: patched('literal-id') takes a named constant, not a literal",
      'NO_RETIRE: its comment has no "Retire:" line',
      'NOWHERE: no constant with a doc comment in workflows/',
      'patch ids are not unique',
    ]);
  });
});

it('every patch id used by the workflows is a named constant whose comment says when it retires (1.0: none)', () => {
  const files = sources();
  expect(files.length).toBeGreaterThan(10);
  expect(checkPatches(files).problems).toEqual([]);
});
