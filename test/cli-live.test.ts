/**
 * The operator commands against live workflows: a real Temporal dev server, the fake shipping
 * API and an in-process worker, with the sample export imported first (the docs' walkthrough).
 * Commands run as child processes (`tsx client/cli.ts ...`).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor as poll } from './helpers/wait';
import { EXIT } from '../client/cli-support';
import { importCommand } from '../client/import/main';
import { startShipment } from '../order-import/start-shipment';
import { WORKFLOW_TYPE, stateQuery, type ShipmentState } from '../workflow-definitions/shipment';
import { shipmentWorkflowId } from '../domain/shipment';
import { captureIo, REPO_ROOT, runCli } from './helpers/cli';
import { FAST_TRACKING, startHarness, type Harness } from './helpers/harness';

/** Polls every 200 ms (each probe may be a CLI run) for up to 20 s unless told otherwise. */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000) =>
  poll(probe, { what, timeoutMs, intervalMs: 200 });
import { labelRequest, order } from './helpers/orders';

let h: Harness;
let env: Record<string, string>;
let client: Client;
const tmp = mkdtempSync(path.join(tmpdir(), 'cli-live-'));

/** Orders of examples/orders.ndjson by the ending the fake gives them. */
const EXCEPTION = ['BC-10235', 'AB-20106', 'LC-5526'];
const CANCELLED = ['BC-10237', 'AB-20108', 'NO-7006'];
const REJECTED = { 'lyon-ceramics': 'LC-5531', 'berlin-coffee': 'BC-10240' } as const; // postal code 00000

async function count(query: string): Promise<number> {
  return (await client.workflow.count(`WorkflowType = '${WORKFLOW_TYPE}' AND ${query}`)).count;
}

async function state(shop: string, orderId: string): Promise<ShipmentState> {
  return client.workflow.getHandle(shipmentWorkflowId({ shop, orderId })).query(stateQuery);
}

const cli = (...args: string[]) => runCli(args, { env });
const json = (stdout: string) => JSON.parse(stdout);

beforeAll(async () => {
  // The two rejected sample orders wait for corrected data through the whole file (minutes on a loaded machine).
  h = await startHarness({ tracking: { ...FAST_TRACKING, correctionTimeoutMs: 15 * 60_000 } });
  client = h.env.client;
  env = { TEMPORAL_ADDRESS: h.env.address, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: h.taskQueue, ...h.shippingEnv };
  // The walkthrough's first step (the import itself is covered in import-live.test.ts).
  const { io } = captureIo({ env });
  expect(await importCommand([path.join(REPO_ROOT, 'examples/orders.ndjson')], io)).toBe(EXIT.rejected);
  // Every sample order settles quickly: 25 end on a tracking tag, 2 wait for corrected data.
  await waitFor('the sample orders to settle', async () =>
    (await count(`ShipmentStatus IN ('delivered', 'exception', 'cancelled', 'awaiting_correction')`)) === 30 ? true : undefined,
  );
});
afterAll(async () => {
  await h?.stop();
});

describe('list', () => {
  it('filters on status, tracking tag, courier and shop', async () => {
    const [exception, deliveredOrCancelled, tagged, postnlOfShop, awaiting] = await Promise.all([
      cli('list', '--status', 'exception', '--json'),
      cli('list', '--status', 'delivered,cancelled', '--page-size', '100', '--json'),
      cli('list', '--tag', 'Cancelled', '--json'),
      cli('list', '--courier', 'postnl', '--shop', 'amsterdam-bikes', '--page-size', '100', '--json'),
      cli('list', '--status', 'awaiting_correction'),
    ]);
    for (const run of [exception, deliveredOrCancelled, tagged, postnlOfShop, awaiting]) expect(run.code, run.stderr).toBe(EXIT.ok);

    const ids = (run: { stdout: string }) =>
      json(run.stdout)
        .shipments.map((s: { orderId: string }) => s.orderId)
        .sort();
    expect(ids(exception)).toEqual([...EXCEPTION].sort());
    expect(json(exception.stdout).shipments[0]).toMatchObject({ status: 'exception', trackingTag: 'Exception', execution: 'COMPLETED' });
    expect(json(exception.stdout).query).toBe(`WorkflowType = 'shipmentWorkflow' AND ShipmentStatus = 'exception'`);
    expect(ids(deliveredOrCancelled)).toHaveLength(25);
    expect(ids(tagged)).toEqual([...CANCELLED].sort());
    expect(ids(postnlOfShop)).toEqual(['AB-20101', 'AB-20102', 'AB-20103', 'AB-20104', 'AB-20105', 'AB-20106', 'AB-20108']);
    // Human output: a table with the two orders waiting for corrected data.
    expect(awaiting.stdout).toMatch(/^SHOP\s+ORDER\s+PARCEL\s+COURIER\s+STATUS/);
    expect(awaiting.stdout).toMatch(/lyon-ceramics\s+LC-5531\s+-\s+ups\s+awaiting_correction/);
    expect(awaiting.stdout).toMatch(/berlin-coffee\s+BC-10240\s+-\s+dpd-de\s+awaiting_correction/);
  });

  it('pages with --page-size and --next-page-token', async () => {
    const first = await cli('list', '--shop', 'nordic-outdoor', '--page-size', '4', '--json');
    const page1 = json(first.stdout);
    expect(page1.shipments).toHaveLength(4);
    expect(page1.nextPageToken).toEqual(expect.any(String));
    const second = await cli('list', '--shop', 'nordic-outdoor', '--page-size', '4', '--next-page-token', page1.nextPageToken, '--json');
    const page2 = json(second.stdout);
    const all = [...page1.shipments, ...page2.shipments].map((s: { orderId: string }) => s.orderId);
    expect(new Set(all).size).toBe(all.length);
    expect(all.sort()).toEqual(['NO-7001', 'NO-7002', 'NO-7003', 'NO-7004', 'NO-7005', 'NO-7006', 'NO-7007']);
    expect(page2.nextPageToken).toBeNull();
  });

  it('quotes filter values: a shop name with an apostrophe is matched literally; an injection attempt matches nothing', async () => {
    const shop = `o'brien's bikes ${randomUUID().slice(0, 6)}`;
    await startShipment(client, h.taskQueue, order(shop, 'Q-1', { marker: 'STALL' }));
    const run = await waitFor('the quoted shop to be listed', async () => {
      const r = await cli('list', '--shop', shop, '--json');
      return json(r.stdout).shipments.length === 1 ? r : undefined;
    });
    expect(json(run.stdout).shipments[0]).toMatchObject({ shop, orderId: 'Q-1' });
    // An injection attempt is just a value that matches nothing.
    const injected = await cli('list', '--shop', `x' OR WorkflowType = 'shipmentWorkflow`, '--json');
    expect(injected.code, injected.stderr).toBe(EXIT.ok);
    expect(json(injected.stdout).shipments).toEqual([]);
    await client.workflow.getHandle(shipmentWorkflowId({ shop, orderId: 'Q-1' })).terminate('test cleanup');
  });
});

describe('status', () => {
  it('shows a delivered shipment as JSON: state, workflow status, search attributes and outcome', async () => {
    const run = await cli('status', 'nordic-outdoor', 'NO-7001', '--json');
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const report = json(run.stdout);
    expect(report).toMatchObject({
      workflowId: 'shipment-nordic-outdoor-NO-7001',
      execution: { status: 'COMPLETED', taskQueue: h.taskQueue },
      searchAttributes: {
        shop: 'nordic-outdoor',
        orderId: 'NO-7001',
        courier: 'dhl-express',
        status: 'delivered',
        trackingTag: 'Delivered',
      },
      state: { phase: 'completed', outcome: 'delivered', tag: 'Delivered', revision: 1 },
      outcome: { outcome: 'delivered' },
      pendingActivities: [],
    });
    expect(report.state.labelId).toEqual(expect.any(String));
    expect(report.searchAttributes.trackingNumber).toBe(report.state.trackingNumber);
  });

  it('shows a courier-rejected shipment in words, with the carrier message and the next step', async () => {
    const run = await cli('status', 'lyon-ceramics', 'LC-5531');
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/Shipment of shop lyon-ceramics order LC-5531/);
    expect(run.stdout).toMatch(/Workflow\s+RUNNING/);
    expect(run.stdout).toMatch(/Phase\s+awaiting_correction/);
    expect(run.stdout).toMatch(/Last error\s+courier_error: COURIER_ERROR: 120802: Address Validation Error.*00000/);
    expect(run.stdout).toMatch(/Next step\s+npm run cli -- resubmit lyon-ceramics LC-5531/);
  });

  it('shows a label being retried: the pending activity with its attempt count and last failure', async () => {
    // Six failures: backoff 1, 2, 4, 8 s keeps the label retrying while two CLI processes start.
    h.fake.setFaults({ failNext: [500, 500, 500, 500, 500, 500].map((status) => ({ endpoint: 'POST /labels', status })) });
    await startShipment(client, h.taskQueue, order('retry-shop', 'R-1'));
    const report = await waitFor('a retried createLabel', async () => {
      const run = await cli('status', 'retry-shop', 'R-1', '--json');
      const r = json(run.stdout);
      const pending = r.pendingActivities[0];
      return pending && pending.attempt >= 2 && pending.lastFailure ? r : undefined;
    });
    expect(report.state.phase).toBe('creating_label');
    expect(report.pendingActivities[0]).toMatchObject({ activity: 'createLabel', lastFailure: expect.stringMatching(/HTTP 500/) });
    const human = await cli('status', 'retry-shop', 'R-1');
    expect(human.stdout).toMatch(/Pending activities:\n\s+createLabel\s+\w+\s+attempt \d+/);
    expect(human.stdout).toMatch(/last failure: .*HTTP 500/);
    // Leave nothing behind for later tests: no pending faults, no retrying workflow.
    h.fake.setFaults({ failNext: [] });
    await client.workflow.getHandle(shipmentWorkflowId({ shop: 'retry-shop', orderId: 'R-1' })).terminate('test cleanup');
  });

  it('an unknown order is "no shipment for shop X order Y", exit 4', async () => {
    const run = await cli('status', 'nowhere', 'N-1');
    expect(run.code).toBe(EXIT.notFound);
    expect(run.stderr).toMatch(/no shipment for shop nowhere order N-1/);
  });
});

describe('attention', () => {
  it('lists every shipment waiting for a person, oldest first, with the next command; exit 1 while any does', async () => {
    const run = await cli('attention', '--json');
    expect(run.code, run.stderr).toBe(EXIT.rejected);
    const { shipments } = json(run.stdout) as { shipments: Array<{ reason: string; orderId: string; since: string; next: string }> };
    const of = (reason: string) =>
      shipments
        .filter((s) => s.reason === reason)
        .map((s) => s.orderId)
        .sort();
    expect(of('awaiting_correction')).toEqual(['BC-10240', 'LC-5531']);
    expect(of('exception')).toEqual([...EXCEPTION].sort());
    expect(shipments.map((s) => s.since)).toEqual(shipments.map((s) => s.since).sort());
    expect(shipments.find((s) => s.orderId === 'LC-5531')!.next).toMatch(
      /npm run cli -- resubmit lyon-ceramics LC-5531 <corrected-label\.json>/,
    );

    const human = await cli('attention');
    expect(human.stdout).toMatch(/^SINCE\s+REASON\s+SHOP\s+ORDER\s+NEXT/);
    expect(human.stdout).toMatch(/awaiting_correction\s+berlin-coffee\s+BC-10240\s+npm run cli -- status berlin-coffee BC-10240, then/);
    // Ended ones are listed for the --since window only.
    const none = await cli('attention', '--since', '1ms', '--json');
    expect(json(none.stdout).shipments.filter((s: { reason: string }) => s.reason === 'exception')).toEqual([]);
  });
});

describe('resubmit', () => {
  it('validates the file locally and names the bad fields; nothing is sent', async () => {
    const bad = path.join(tmp, 'bad-label.json');
    const request = labelRequest('LC-5531') as Record<string, any>;
    request.idempotencyKey = 'mine';
    request.shipment.shipTo.address.countryCode = 'de';
    writeFileSync(bad, JSON.stringify(request));
    const run = await cli('resubmit', 'lyon-ceramics', 'LC-5531', bad);
    expect(run.code).toBe(EXIT.rejected);
    expect(run.stdout).toMatch(/idempotencyKey: must not be supplied/);
    expect(run.stdout).toMatch(/shipment\.shipTo\.address\.countryCode: must be an ISO 3166-1 alpha-2/);
    expect((await state('lyon-ceramics', 'LC-5531')).revision).toBe(1);
  });

  it("shows the workflow validator's refusal when the shipment is not awaiting corrected data", async () => {
    await startShipment(client, h.taskQueue, order('stall-shop', 'S-1', { marker: 'STALL' }));
    await waitFor('tracking', async () => ((await state('stall-shop', 'S-1')).phase === 'tracking' ? true : undefined));
    const refused = await cli('resubmit', 'stall-shop', 'S-1', 'examples/corrected-label.json', '--json');
    expect(refused.code).toBe(EXIT.rejected);
    expect(json(refused.stdout).rejected).toMatch(/cannot resubmit: the shipment is tracking, not awaiting corrected label data/);

    const ended = await cli('resubmit', 'nordic-outdoor', 'NO-7001', 'examples/corrected-label.json');
    expect(ended.code).toBe(EXIT.rejected);
    expect(ended.stderr).toMatch(/has already ended \(COMPLETED\)/);

    const unknown = await cli('resubmit', 'nowhere', 'N-1', 'examples/corrected-label.json');
    expect(unknown.code).toBe(EXIT.notFound);
  });

  it("refuses another order's label file, naming each mismatch; the shipment is unchanged", async () => {
    // examples/corrected-label.json is LC-5531's: pasted for BC-10240 it would ship a Berlin order with Lyon's sender.
    const run = await cli('resubmit', 'berlin-coffee', REJECTED['berlin-coffee'], 'examples/corrected-label.json');
    expect(run.code, run.stderr).toBe(EXIT.rejected);
    expect(run.stdout).toMatch(/refused the corrected data: cannot resubmit: the corrected data belongs to another order/);
    expect(run.stdout).toMatch(/order\.customerOrderNumber is "LC-5531", the shipment has "BC-10240"/);
    expect(run.stdout).toMatch(/order\.orderNumbers\.platformOrderNumber is "LC-2024-5531", the shipment has "SHOP-7731030"/);
    expect(run.stdout).toMatch(/shipment\.shipFrom\.contact\.email is not the shop’s sender/);
    expect(run.stdout).toMatch(/shipment\.shipFrom\.contact \(name\) is not the shop’s sender/);
    expect(run.stdout).toMatch(/shipment\.shipFrom\.address\.countryCode is FR, the shop’s sender is in DE/);
    expect(run.stdout).toMatch(/--accept-mismatch/);
    expect(run.stdout).not.toMatch(/Camille|expeditions@/); // the sender is named by field, not shown
    expect(await state('berlin-coffee', 'BC-10240')).toMatchObject({ phase: 'awaiting_correction', revision: 1, courier: 'dpd-de' });
  });

  it('a record of another shop and order is refused by name; a real correction (courier, product, address) goes through', async () => {
    await startShipment(client, h.taskQueue, order('fix-shop', 'F-1', { postalCode: '00000' }));
    await waitFor('F-1 awaiting correction', async () =>
      (await state('fix-shop', 'F-1')).phase === 'awaiting_correction' ? true : undefined,
    );
    const record = path.join(tmp, 'other-record.json');
    writeFileSync(record, JSON.stringify({ shop: 'other-shop', orderId: 'F-2', labelRequest: labelRequest('F-1') }));
    const refused = await cli('resubmit', 'fix-shop', 'F-1', record, '--json');
    expect(refused.code, refused.stderr).toBe(EXIT.rejected);
    expect(json(refused.stdout).rejected).toBe(
      'cannot resubmit: the corrected data belongs to another order: shop is "other-shop", the shipment has "fix-shop"; orderId is "F-2", the shipment has "F-1"',
    );

    const corrected = path.join(tmp, 'f-1-corrected.json');
    writeFileSync(corrected, JSON.stringify(labelRequest('F-1', { courier: 'ups', productCode: 'UPS_STANDARD' })));
    const run = await cli('resubmit', 'fix-shop', 'F-1', corrected, '--json');
    expect(run.code, run.stdout + run.stderr).toBe(EXIT.ok);
    expect(json(run.stdout).result).toMatchObject({ revision: 2, labelCreated: true });
  });

  it('--accept-mismatch sends data naming another order when the operator says so', async () => {
    await startShipment(client, h.taskQueue, order('fix-shop', 'F-3', { postalCode: '00000' }));
    await waitFor('F-3 awaiting correction', async () =>
      (await state('fix-shop', 'F-3')).phase === 'awaiting_correction' ? true : undefined,
    );
    const renamed = path.join(tmp, 'f-3-renamed.json');
    writeFileSync(renamed, JSON.stringify(labelRequest('F-3-REISSUED')));
    const refused = await cli('resubmit', 'fix-shop', 'F-3', renamed);
    expect(refused.code).toBe(EXIT.rejected);
    expect(refused.stdout).toMatch(/order\.customerOrderNumber is "F-3-REISSUED", the shipment has "F-3"/);
    const run = await cli('resubmit', 'fix-shop', 'F-3', renamed, '--accept-mismatch', '--json');
    expect(run.code, run.stdout + run.stderr).toBe(EXIT.ok);
    expect(json(run.stdout).result).toMatchObject({ revision: 2, labelCreated: true });
  });

  it('resubmits the courier-rejected order with examples/corrected-label.json: label created, then delivered', async () => {
    const run = await cli(
      'resubmit',
      'lyon-ceramics',
      REJECTED['lyon-ceramics'],
      'examples/corrected-label.json',
      '--reason',
      'postal code corrected by support',
      '--json',
    );
    expect(run.code, run.stdout + run.stderr).toBe(EXIT.ok);
    const { result } = json(run.stdout);
    expect(result).toMatchObject({ revision: 2, labelCreated: true, error: null });
    expect(result.labelId).toEqual(expect.any(String));
    expect(result.idempotencyKey).toEqual(expect.any(String));
    await waitFor('LC-5531 delivered', async () =>
      (await count(`ShipmentOrderId = 'LC-5531' AND ShipmentStatus = 'delivered'`)) === 1 ? true : undefined,
    );
    const final = await state('lyon-ceramics', 'LC-5531');
    expect(final).toMatchObject({ outcome: 'delivered', revision: 2, labelId: result.labelId });
  });
});

describe('cancel', () => {
  it('cancels a shipment waiting for corrected data, with a reason; a second cancel says it already ended', async () => {
    const run = await cli(
      'cancel',
      'berlin-coffee',
      REJECTED['berlin-coffee'],
      '--reason',
      'customer cancelled the order',
      '--wait',
      '--json',
    );
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(json(run.stdout)).toMatchObject({
      cancelRequested: true,
      outcome: { outcome: 'cancelled_by_operator', reason: 'customer cancelled the order' },
    });
    await waitFor('search attribute', async () =>
      (await count(`ShipmentOrderId = 'BC-10240' AND ShipmentStatus = 'cancelled_by_operator'`)) === 1 ? true : undefined,
    );

    const again = await cli('cancel', 'berlin-coffee', 'BC-10240');
    expect(again.code).toBe(EXIT.rejected);
    expect(again.stderr).toMatch(/already ended \(COMPLETED\); nothing to cancel/);
  });

  it('cancels a shipment that is tracking', async () => {
    const run = await cli('cancel', 'stall-shop', 'S-1');
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/Cancel requested for shop stall-shop order S-1/);
    const outcome = await client.workflow.getHandle(shipmentWorkflowId({ shop: 'stall-shop', orderId: 'S-1' })).result();
    expect(outcome).toMatchObject({ outcome: 'cancelled_by_operator' });
  });

  it('an unknown order is exit 4', async () => {
    const run = await cli('cancel', 'nowhere', 'N-1');
    expect(run.code).toBe(EXIT.notFound);
    expect(run.stderr).toMatch(/no shipment for shop nowhere order N-1/);
  });
});

describe('couriers, products, help and usage', () => {
  it('lists couriers and products from the shipping API', async () => {
    const [couriers, products, unknown] = await Promise.all([
      cli('couriers', '--json'),
      cli('products', 'postnl'),
      cli('products', 'royal-mail'),
    ]);
    expect(couriers.code, couriers.stderr).toBe(EXIT.ok);
    expect(json(couriers.stdout).couriers.map((c: { code: string }) => c.code)).toEqual(['dhl-express', 'ups', 'postnl', 'dpd-de']);
    expect(products.code, products.stderr).toBe(EXIT.ok);
    expect(products.stdout).toMatch(/^CODE\s+NAME\nPOSTNL_STANDARD\s+PostNL Standard Shipment/);
    expect(unknown.code).toBe(EXIT.rejected);
    expect(unknown.stderr).toMatch(/GET \/products for courier royal-mail/);
  });

  it('every command has --help; bad usage is exit 2; a config error prints its message', async () => {
    const helps = await Promise.all(
      ['import', 'status', 'list', 'attention', 'resubmit', 'redeliver', 'cancel', 'couriers', 'products'].map((c) =>
        runCli([c, '--help']),
      ),
    );
    for (const run of helps) {
      expect(run.code).toBe(EXIT.ok);
      expect(run.stdout).toMatch(/^Usage: npm run (cli|import) -- /);
      expect(run.stdout).toMatch(/Exit codes:/);
    }
    const [unknownCommand, missingArgs, badFlag, badConfig] = await Promise.all([
      runCli(['ship']),
      runCli(['status', 'only-shop'], { env }),
      runCli(['list', '--colour'], { env }),
      runCli(['couriers'], { env: { SHIPPING_API_BASE_URL: 'ftp://x' } }),
    ]);
    expect(unknownCommand.code).toBe(EXIT.usage);
    expect(unknownCommand.stderr).toMatch(/unknown command "ship"/);
    expect(missingArgs.code).toBe(EXIT.usage);
    expect(missingArgs.stderr).toMatch(/status takes <shop> <orderId>/);
    expect(badFlag.code).toBe(EXIT.usage);
    expect(badFlag.stderr).toMatch(/--colour/);
    expect(badConfig.code).toBe(EXIT.usage);
    expect(badConfig.stderr).toMatch(
      /Invalid configuration:\n\s+SHIPPING_API_BASE_URL: must be an http\(s\) URL[\s\S]*SHIPPING_API_KEY: is required/,
    );
  });
});
