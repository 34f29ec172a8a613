/**
 * The import against a real Temporal dev server, the fake shipping API and an in-process
 * worker; the CLI runs as a child process (`tsx client/cli.ts import ...`) for output and
 * exit codes, exactly as an operator runs it.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../client/cli-support';
import { SA, WORKFLOW_TYPE } from '../workflow-definitions/shipment';
import { shipmentWorkflowId } from '../domain/shipment';
import { runCli, REPO_ROOT } from './helpers/cli';
import { startHarness, type Harness } from './helpers/harness';
import { labelRequest } from './helpers/orders';
import { waitFor } from './helpers/wait';
import { freePort } from '../dev-server/free-port';

const SAMPLE = 'examples/orders.ndjson';
const sampleRecords = readFileSync(path.join(REPO_ROOT, SAMPLE), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as { shop: string; orderId: string; labelRequest: { courier: string } & Record<string, unknown> });
/** Lines of examples/orders.ndjson that are broken on purpose, and the field each one names. */
const BROKEN: Record<number, string> = {
  5: 'labelRequest.service.productCode',
  12: 'labelRequest.shipment.shipTo.address.countryCode',
  19: 'labelRequest.shipment.parcels[0].weight',
  27: 'labelRequest.idempotencyKey',
  34: 'labelRequest.courier', // unknown courier: a preflight rejection
};
const validSample = sampleRecords.filter((_, i) => BROKEN[i + 1] === undefined);

let h: Harness;
let env: Record<string, string>;
let client: Client;
const tmp = mkdtempSync(path.join(tmpdir(), 'import-live-'));

beforeAll(async () => {
  h = await startHarness();
  client = h.env.client;
  env = { TEMPORAL_ADDRESS: h.env.address, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: h.taskQueue, ...h.shippingEnv };
});
afterAll(async () => {
  await h?.stop();
});

/** Visibility is eventually consistent: lists until `expected` workflows match (the CLI has already started them). */
async function listShipments(expected: number, query = `WorkflowType = '${WORKFLOW_TYPE}'`) {
  return waitFor(
    async () => {
      const out = [];
      for await (const wf of client.workflow.list({ query })) out.push(wf);
      return out.length >= expected ? out : undefined;
    },
    { what: `${expected} workflows listed for ${query}`, timeoutMs: 20_000, intervalMs: 100 },
  );
}

async function exists(shop: string, orderId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(shipmentWorkflowId({ shop, orderId })).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

function writeNdjson(name: string, records: unknown[]): string {
  const file = path.join(tmp, name);
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

describe('import of the sample export', () => {
  it('starts one workflow per valid order, with the right search attributes; every broken record is reported and kept', async () => {
    const rejects = path.join(tmp, 'sample-rejects.ndjson');
    const run = await runCli(['import', SAMPLE, '--json', '--rejects', rejects], { env });
    expect(run.code, run.stderr).toBe(EXIT.rejected);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts).toEqual({ records: 35, accepted: 30, started: 30, alreadyKnown: 0, rejected: 5, failed: 0 });
    expect(summary.preflight).toBe('checked');
    expect(
      summary.rejections.map((r: { line: number; shop: string; orderId: string; reasons: Array<{ field: string }> }) => [
        r.line,
        r.orderId,
        r.reasons.map((x) => x.field),
      ]),
    ).toEqual(Object.entries(BROKEN).map(([line, field]) => [Number(line), sampleRecords[Number(line) - 1]!.orderId, [field]]));

    // The reject file: each bad record's original text and its reasons.
    const sourceLines = readFileSync(path.join(REPO_ROOT, SAMPLE), 'utf8').split('\n');
    const written = readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(written.map((w) => w.line).sort((a, b) => a - b)).toEqual(Object.keys(BROKEN).map(Number));
    for (const w of written) {
      expect(w.kind).toBe('rejected');
      expect(w.raw).toBe(sourceLines[w.line - 1]);
      expect(w.reasons.map((r: { field: string }) => r.field)).toEqual([BROKEN[w.line]]);
    }

    // Exactly the valid orders have workflows, carrying shop, orderId and courier as search attributes.
    const listed = await listShipments(validSample.length);
    expect(listed.map((wf) => wf.workflowId).sort()).toEqual(validSample.map(shipmentWorkflowId).sort());
    for (const record of validSample) {
      const wf = listed.find((w) => w.workflowId === shipmentWorkflowId(record))!;
      expect(wf.taskQueue).toBe(h.taskQueue);
      expect(wf.typedSearchAttributes.get(SA.shop)).toBe(record.shop);
      expect(wf.typedSearchAttributes.get(SA.orderId)).toBe(record.orderId);
      expect(wf.typedSearchAttributes.get(SA.courier)).toBe(record.labelRequest.courier);
    }
    for (const line of Object.keys(BROKEN).map(Number)) {
      const broken = sampleRecords[line - 1]!;
      expect(await exists(broken.shop, broken.orderId), `${broken.orderId} must not have a workflow`).toBe(false);
    }
  });

  it('importing the same file again starts nothing: every valid order is "already known"', async () => {
    const run = await runCli(['import', SAMPLE], { env });
    expect(run.code, run.stderr).toBe(EXIT.rejected); // the 5 broken records are still broken
    expect(run.stdout).toMatch(/started\s+0\n\s+already known\s+30\n\s+rejected\s+5\n\s+failed\s+0/);
    // Human mode: one line per rejection on stderr, with line and field.
    expect(run.stderr).toMatch(/rejected line 5 \(shop berlin-coffee order BC-10241\): labelRequest\.service\.productCode/);
    expect(run.stderr).toMatch(/rejected line 34 .*labelRequest\.courier: unknown courier "fedex"/);
    expect(await client.workflow.count(`WorkflowType = '${WORKFLOW_TYPE}'`)).toMatchObject({ count: 30 });
  });

  it('the CSV sample: multi-row orders grouped, a bad cell and an unknown product rejected', async () => {
    const run = await runCli(['import', 'examples/orders.csv', '--json'], { env });
    expect(run.code, run.stderr).toBe(EXIT.rejected);
    const summary = JSON.parse(run.stdout);
    expect(summary.format).toBe('csv');
    expect(summary.counts).toMatchObject({ records: 14, started: 12, alreadyKnown: 0, rejected: 2, failed: 0 });
    expect(
      summary.rejections.map((r: { line: number; orderId: string; reasons: Array<{ field: string }> }) => [
        r.line,
        r.orderId,
        r.reasons.map((x) => x.field),
      ]),
    ).toEqual([
      [21, 'VT-3006', ['labelRequest.service.productCode']],
      [22, 'AB-30104', ['labelRequest.shipment.parcels[0].items[0].quantity']],
    ]);
    const [vt3003] = await listShipments(1, `${SA.shop.name} = 'vienna-tea' AND ${SA.orderId.name} = 'VT-3003'`);
    expect(vt3003?.typedSearchAttributes.get(SA.courier)).toBe('dpd-de');
    expect(await exists('vienna-tea', 'VT-3006')).toBe(false);
  });
});

describe('preflight, duplicates and exit codes', () => {
  it("unknown courier and product codes are rejected before any start; each courier's products are read once", async () => {
    h.fake.resetStats();
    const file = writeNdjson('preflight.ndjson', [
      { shop: 'pf', orderId: '1', labelRequest: labelRequest('pf-1', { courier: 'ups', productCode: 'UPS_STANDARD' }) },
      { shop: 'pf', orderId: '2', labelRequest: labelRequest('pf-2', { courier: 'royal-mail', productCode: 'TRACKED_48' }) },
      { shop: 'pf', orderId: '3', labelRequest: labelRequest('pf-3', { courier: 'ups', productCode: 'UPS_OVERNIGHT' }) },
      { shop: 'pf', orderId: '4', labelRequest: labelRequest('pf-4', { courier: 'postnl', productCode: 'POSTNL_STANDARD' }) },
      { shop: 'pf', orderId: '5', labelRequest: labelRequest('pf-5', { courier: 'ups', productCode: 'UPS_EXPRESS' }) },
    ]);
    const run = await runCli(['import', file, '--json', '--concurrency', '4'], { env });
    expect(run.code, run.stderr).toBe(EXIT.rejected);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts).toMatchObject({ records: 5, started: 3, rejected: 2 });
    expect(summary.rejections).toEqual([
      {
        line: 2,
        shop: 'pf',
        orderId: '2',
        reasons: [{ field: 'labelRequest.courier', message: expect.stringMatching(/unknown courier "royal-mail"/) }],
      },
      {
        line: 3,
        shop: 'pf',
        orderId: '3',
        reasons: [
          { field: 'labelRequest.service.productCode', message: expect.stringMatching(/courier "ups" has no product "UPS_OVERNIGHT"/) },
        ],
      },
    ]);
    expect(await exists('pf', '2')).toBe(false);
    expect(await exists('pf', '3')).toBe(false);
    expect(await exists('pf', '1')).toBe(true);
    const requests = h.fake.stats().requests;
    expect(requests['GET /couriers']).toEqual({ 200: 1 });
    expect(requests['GET /products']).toEqual({ 200: 2 }); // ups and postnl, once each
  });

  it('a clean file exits 0; a duplicate shop+orderId in one file is rejected as a duplicate', async () => {
    const clean = writeNdjson('clean.ndjson', [
      { shop: 'ok', orderId: '1', labelRequest: labelRequest('ok-1') },
      { shop: 'ok', orderId: '2', labelRequest: labelRequest('ok-2') },
    ]);
    const first = await runCli(['import', clean], { env });
    expect(first.code, first.stderr).toBe(EXIT.ok);
    expect(first.stdout).toMatch(/started\s+2\n/);

    const dup = writeNdjson('dup.ndjson', [
      { shop: 'dup', orderId: '1', labelRequest: labelRequest('dup-1') },
      { shop: 'dup', orderId: '1', labelRequest: labelRequest('dup-1', { courier: 'ups', productCode: 'UPS_STANDARD' }) },
    ]);
    const second = await runCli(['import', dup, '--json'], { env });
    expect(second.code).toBe(EXIT.rejected);
    const summary = JSON.parse(second.stdout);
    expect(summary.counts).toMatchObject({ started: 1, rejected: 1 });
    expect(summary.rejections[0]).toMatchObject({
      line: 2,
      reasons: [{ field: 'orderId', message: expect.stringMatching(/duplicate.*line 1/) }],
    });
    const [wf] = await listShipments(1, `${SA.shop.name} = 'dup'`);
    expect(wf?.typedSearchAttributes.get(SA.courier)).toBe('dhl-express'); // the first one won
  });

  it('exit 3 when valid orders fail to start (unknown namespace); the failure is reported and kept', async () => {
    const file = writeNdjson('fail.ndjson', [
      { shop: 'ns', orderId: '1', labelRequest: labelRequest('ns-1') },
      { shop: 'ns', orderId: '2' },
    ]);
    const rejects = path.join(tmp, 'fail-rejects.ndjson');
    const run = await runCli(['import', file, '--json', '--rejects', rejects], {
      env: { ...env, TEMPORAL_NAMESPACE: 'no-such-namespace' },
    });
    expect(run.code, run.stderr).toBe(EXIT.failedToStart);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts).toMatchObject({ started: 0, rejected: 1, failed: 1 });
    expect(summary.failures[0]).toMatchObject({ line: 1, shop: 'ns', orderId: '1', message: expect.stringMatching(/namespace/i) });
    const kinds = readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).kind)
      .sort();
    expect(kinds).toEqual(['failed_to_start', 'rejected']);
  });

  it('a wrong key or a forgotten export line points at the credentials and the banner, not at --skip-preflight alone', async () => {
    const file = writeNdjson('hints.ndjson', [{ shop: 'x', orderId: '1', labelRequest: labelRequest('x-1') }]);
    const { SHIPPING_API_BASE_URL: _url, ...withoutApi } = env;
    const [wrongKey, noExport] = await Promise.all([
      runCli(['import', file], { env: { ...env, SHIPPING_API_KEY: 'not-the-key' } }),
      runCli(['import', file], { env: withoutApi }),
    ]);
    expect(wrongKey.code, wrongKey.stderr).toBe(EXIT.unavailable);
    expect(wrongKey.stderr).toContain('Check SHIPPING_API_KEY and SHIPPING_API_TOKEN');
    expect(wrongKey.stderr).not.toContain('--skip-preflight');
    expect(noExport.code, noExport.stderr).toBe(EXIT.usage);
    expect(noExport.stderr).toMatch(/SHIPPING_API_BASE_URL: is required[\s\S]*`npm run dev` prints in its banner/);
  });

  it('exit 5 when Temporal or the shipping API is unreachable, exit 2 on configuration and usage errors', async () => {
    const closedPort = await freePort();
    const file = writeNdjson('one.ndjson', [{ shop: 'x', orderId: '1', labelRequest: labelRequest('x-1') }]);
    const [noTemporal, noApi, badConfig, noInput, dryRun] = await Promise.all([
      runCli(['import', file], { env: { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${closedPort}` } }),
      runCli(['import', file], { env: { ...env, SHIPPING_API_BASE_URL: `http://127.0.0.1:${closedPort}` } }),
      runCli(['import', file], { env: { ...env, SHIPPING_API_BASE_URL: 'not a url' } }),
      runCli(['import'], { env }),
      // --dry-run --skip-preflight needs neither Temporal nor the API.
      runCli(['import', '--dry-run', '--skip-preflight', file], { env: { TEMPORAL_ADDRESS: `127.0.0.1:${closedPort}` } }),
    ]);
    expect(noTemporal.code, noTemporal.stderr).toBe(EXIT.unavailable);
    expect(noTemporal.stderr).toMatch(new RegExp(`cannot connect to Temporal at 127\\.0\\.0\\.1:${closedPort}`));
    expect(noApi.code, noApi.stderr).toBe(EXIT.unavailable);
    expect(noApi.stderr).toMatch(/preflight: cannot read GET \/couriers/);
    // Each failure names what to check next, not the same way out for all.
    expect(noApi.stderr).toContain(`Is the shipping API running at http://127.0.0.1:${closedPort}?`);
    expect(noTemporal.stderr).toMatch(/Is a Temporal server running there \(`npm run dev` starts one/);
    expect(badConfig.code).toBe(EXIT.usage);
    expect(badConfig.stderr).toMatch(/SHIPPING_API_BASE_URL: must be an http\(s\) URL/);
    expect(noInput.code).toBe(EXIT.usage);
    expect(noInput.stderr).toMatch(/import takes one input/);
    expect(dryRun.code, dryRun.stderr).toBe(EXIT.ok);
    expect(dryRun.stdout).toMatch(/valid\s+1/);
    expect(await exists('x', '1')).toBe(false);
  });
});
