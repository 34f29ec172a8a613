/**
 * What a newcomer's first imports meet at the edges: an empty file is refused (not "0 records"),
 * an explicit empty document is fine, and the rejects file, which holds names, addresses and
 * phones, is readable by its owner only.
 */
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError, EXIT } from '../client/cli-support';
import { importRecords } from '../order-import/engine';
import { importCommand } from '../client/import/main';
import type { Preflight } from '../order-import/preflight';
import { readRecords } from '../order-import/source';
import { captureIo } from './helpers/cli';

const tmp = mkdtempSync(path.join(tmpdir(), 'import-edges-'));
const csvHeader = readFileSync(path.join(__dirname, '..', 'examples', 'orders.csv'), 'utf8').split('\n')[0]!;

async function dryRun(name: string, content: string, extra: string[] = []) {
  const file = path.join(tmp, name);
  writeFileSync(file, content);
  const { io, stdout, stderr } = captureIo();
  try {
    const code = await importCommand(['--dry-run', '--skip-preflight', ...extra, file], io);
    return { code, stdout: stdout(), stderr: stderr() };
  } catch (err) {
    // What the command line prints and exits with (client/cli.ts).
    if (!(err instanceof CliError)) throw err;
    return { code: err.exitCode, stdout: stdout(), stderr: `${stderr()}error: ${err.message}\n` };
  }
}

describe('an empty input', () => {
  it.each([
    ['empty.ndjson', ''],
    ['blank.ndjson', '\n  \n'],
    ['empty.csv', ''],
    ['empty.json', ' '],
  ])('%s is a usage error that says so, not a successful import of nothing', async (name, content) => {
    const { code, stderr } = await dryRun(name, content);
    expect(code).toBe(EXIT.usage);
    expect(stderr).toMatch(/the input is empty: it holds no records/);
  });

  it('an explicit empty document (a JSON array, a CSV header) imports nothing and succeeds', async () => {
    expect((await dryRun('none.json', '[]\n')).code).toBe(EXIT.ok);
    expect((await dryRun('header-only.csv', `${csvHeader}\n`)).code).toBe(EXIT.ok);
  });
});

describe('the rejects file', () => {
  const broken = `${JSON.stringify({ shop: 's', orderId: 'x', labelRequest: { courier: 'ups' } })}\n`;

  it('is created readable by its owner only', async () => {
    const rejects = path.join(tmp, 'new.rejects.ndjson');
    const { code } = await dryRun('broken-1.ndjson', broken, ['--rejects', rejects]);
    expect(code).toBe(EXIT.rejected);
    expect(statSync(rejects).mode & 0o777).toBe(0o600);
    expect(readFileSync(rejects, 'utf8')).toContain('"orderId":"x"');
  });

  it('is narrowed to its owner when it already existed readable by everyone', async () => {
    const rejects = path.join(tmp, 'old.rejects.ndjson');
    writeFileSync(rejects, 'old content\n');
    chmodSync(rejects, 0o644);
    await dryRun('broken-2.ndjson', broken, ['--rejects', rejects]);
    expect(statSync(rejects).mode & 0o777).toBe(0o600);
    expect(readFileSync(rejects, 'utf8')).not.toContain('old content');
  });
});

describe('rejections', () => {
  it('are reported in input order, though a preflight takes time and a bad field does not', async () => {
    const good = { courier: 'ups', service: { productCode: 'UPS_STANDARD' }, shipment: {} };
    const lines = [
      { shop: 's', orderId: 'slow-preflight', labelRequest: { ...good, service: { productCode: 'NO_SUCH_PRODUCT' } } },
      { shop: 's', orderId: 'bad-field', labelRequest: { ...good, courier: 42 } },
      { shop: 's', orderId: 'fine', labelRequest: good },
    ];
    const records = readRecords(
      (async function* () {
        yield lines.map((l) => JSON.stringify(l)).join('\n');
      })(),
      'ndjson',
    );
    // A preflight that answers the first order late: its rejection comes after the bad field's.
    const preflight = {
      check: async (request: { service: { productCode: string } }) => {
        if (request.service.productCode !== 'NO_SUCH_PRODUCT') return [];
        await new Promise((resolve) => setTimeout(resolve, 200));
        return [{ field: 'labelRequest.service.productCode', message: 'unknown product' }];
      },
    } as unknown as Preflight;
    const reported: number[] = [];
    const result = await importRecords({ records, preflight, concurrency: 4, onRejected: (r) => void reported.push(r.line) });
    expect(result.counts).toMatchObject({ records: 3, rejected: 2, accepted: 1 });
    expect(reported).toEqual([1, 2]);
  });
});
