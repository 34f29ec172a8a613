/**
 * The README and docs/ match the repository: every relative link leads to a file and heading
 * that exist, every `npm run` script they name is in package.json, and every source path they
 * quote exists. A moved file or a renamed heading fails here, not in a reader's browser.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');
const pages = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
/** Paths that a build, a run or an install writes: named in the docs, absent from a clone. */
const WRITTEN_BY_RUNS = /^(dist|\.data|\.tools|node_modules)\/|^bench\/results\.json$/;
const text = new Map(pages.map((p) => [p, readFileSync(path.join(root, p), 'utf8')]));

/** The text outside fenced code blocks (commands in them are checked separately). */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

describe.each(pages)('%s', (page) => {
  const markdown = text.get(page)!;

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const [, target] of prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:
      const [file, anchor] = target!.split('#') as [string, string | undefined];
      const resolved = file === '' ? page : path.normalize(path.join(path.dirname(page), file));
      if (!existsSync(path.join(root, resolved))) broken.push(`${target}: no file ${resolved}`);
      else if (anchor && resolved.endsWith('.md')) {
        const headings = anchorsOf(text.get(resolved) ?? readFileSync(path.join(root, resolved), 'utf8'));
        if (!headings.has(anchor)) broken.push(`${target}: no heading #${anchor} in ${resolved}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names only npm scripts that package.json has', () => {
    const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const named = [...markdown.matchAll(/npm run (?:-s )?([a-z][\w:-]*)/g)].map((m) => m[1]!);
    expect(named.filter((s) => !(s in scripts))).toEqual([]);
  });

  it('quotes only source paths that exist', () => {
    const quoted = [...markdown.matchAll(/`((?:[\w-]+\/)+[\w.-]+\.(?:ts|js|json|md|toml|yml|sql))`/g)].map((m) => m[1]!);
    const missing = quoted.filter((p) => !WRITTEN_BY_RUNS.test(p) && !existsSync(path.join(root, p)));
    expect(missing).toEqual([]);
  });
});
