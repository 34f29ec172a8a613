/**
 * The shipment's decisions are made in one place, its machine (domain/shipment-machine): no file
 * of the workflow code assigns a phase, a revision or an attention mark itself; it calls the
 * machine's transitions (domain/shipment-machine/transitions.ts), which the model test drives too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..');

/** `.phase =`, `.attention =`, and `.revision` written by `=`, `++`, `--`, `+=` or `-=` (either side). */
const ASSIGNMENTS = [
  /\.phase\s*=(?!=)/,
  /\.attention\s*=(?!=)/,
  /\.revision\s*(?:=(?!=)|\+\+|--|[+-]=)/,
  /(?:\+\+|--)\s*[\w.?!]*\.revision\b/,
];

/** Each line of `text` that assigns one of the three, as `file:line: code` (comments left out). */
function assignments(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => {
    const code = line.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '');
    return ASSIGNMENTS.some((re) => re.test(code)) ? [`${file}:${i + 1}: ${line.trim()}`] : [];
  });
}

function workflowSources(): Array<{ file: string; text: string }> {
  return readdirSync(path.join(ROOT, 'workflows'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .map((file) => ({ file: path.relative(ROOT, file), text: readFileSync(file, 'utf8') }));
}

describe('the scan for decisions outside the machine', () => {
  it('finds each way of writing a phase, a revision or a mark', () => {
    const found = (code: string) => assignments('a.ts', code).length;
    expect(found("state.phase = 'tracking';")).toBe(1);
    expect(found('this.state.phase = next;')).toBe(1);
    expect(found('shopOrder.attention = back.attention;')).toBe(1);
    expect(found('if (x) shop.attention = null;')).toBe(1);
    expect(found('state.revision++;')).toBe(1);
    expect(found('++state.revision;')).toBe(1);
    expect(found('state.revision += 1;')).toBe(1);
    expect(found('run.state.revision = 3;')).toBe(1);
  });

  it('leaves reads, comparisons and comments alone', () => {
    const found = (code: string) => assignments('a.ts', code).length;
    expect(found("if (state.phase === 'tracking') go();")).toBe(0);
    expect(found('const r = state.revision + 1;')).toBe(0);
    expect(found('return order.attention !== null;')).toBe(0);
    expect(found('// state.phase = tracking, said in words')).toBe(0);
    expect(found(' * state.revision++ in a doc comment')).toBe(0);
  });
});

describe('the workflow code', () => {
  it('assigns no phase, revision or attention mark: the machine does', () => {
    const files = workflowSources();
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap(({ file, text }) => assignments(file, text))).toEqual([]);
  });
});

/** The values each workflow file imports from the machine (types left out), as `file: a, b`. */
function machineImports(files: Array<{ file: string; text: string }>): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const { file, text } of files) {
    for (const m of text.matchAll(/^import\s+\{([^}]*)\}\s+from\s+'[./]*domain\/shipment-machine[^']*';/gm)) {
      const names = m[1]!
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== '' && !n.startsWith('type '));
      if (names.length > 0) found[file] = [...(found[file] ?? []), ...names].sort();
    }
  }
  return found;
}

describe("the workflow's use of the machine", () => {
  it('takes the label step, the order read and tracking from `decide`: it calls no decision of theirs itself', () => {
    // The label step and the order read mirror the machine's phase only (labelAsked, correctionAwaited,
    // heldInShop, labelMade, tracks, ends as each command is carried out); tracking (news, its deadline,
    // a lost shard), the relabel, a change after the label and a resolve carry out the machine's
    // commands. The update validators ask the machine (`refusal`, through the run) from its own
    // state, and a change before the label is worded from how the machine took it (`shop.taken`).
    // What is left: markAttention, with which the order's marks mirror the machine's; the relabel's words for a
    // relabel whose handler still moves tracking after the machine ended it (RELABEL_IN_FLIGHT);
    // and the split order's workflow, which has no machine, reading the machine's rule for a reading
    // of the order (shopChangeRefusalOf). This list only shrinks.
    expect(machineImports(workflowSources())).toEqual({
      'workflows/shipment/decisions.ts': ['heldInShop'],
      'workflows/shipment/label.ts': ['correctionAwaited', 'labelAsked'],
      'workflows/shipment/order.ts': ['tracks'],
      'workflows/shipment/relabel.ts': ['RELABEL_IN_FLIGHT'],
      'workflows/shipment/run.ts': ['decide', 'ends', 'initialMachineState', 'refusal'],
      'workflows/shipment/shop-changes.ts': ['markAttention'],
      'workflows/shipment/split-order.ts': ['ends', 'shopChangeRefusalOf'],
      'workflows/shipment/state.ts': ['labelMade'],
    });
  });
});
