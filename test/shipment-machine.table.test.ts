/** docs/workflow.md's phase × event table is the machine's own answer (domain/shipment-machine/table.ts). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { phaseEventTable } from '../domain/shipment-machine/table';

describe('the phase × event table', () => {
  it('in docs/workflow.md is the one generated from the machine', () => {
    const doc = readFileSync('docs/workflow.md', 'utf8');
    const found = /<!-- phase-event-table:start -->\n([\s\S]*?)\n<!-- phase-event-table:end -->/.exec(doc);
    expect(found, 'docs/workflow.md has no phase-event-table markers').not.toBeNull();
    expect(found![1]!.trim()).toBe(phaseEventTable());
  });

  it('says what a merchant cancel does in each phase', () => {
    const row = phaseEventTable()
      .split('\n')
      .find((line) => line.startsWith('| shop: cancelled |'))!;
    expect(row).toContain('finish cancelled_in_shop');
    expect(row).toContain('mark cancelled_in_shop');
    expect(row).toContain('stop the label call');
  });
});
