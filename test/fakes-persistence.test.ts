/**
 * The demo survives its restart: the fake shipping API and both fake stores, as real processes
 * with `--state-file` (as `npm run dev` starts them), keep what they were told across a stop
 * (SIGTERM) and a crash (SIGKILL): labels and their tracking, orders with their fulfillments,
 * notes and tracking items; a restored store seeds nothing again; the files are 0600.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleLabelRequest } from './helpers/api';
import { waitFor } from './helpers/wait';

const ROOT = path.resolve(__dirname, '..');
const dir = mkdtempSync(path.join(tmpdir(), 'fakes-persistence-'));
const running = new Set<ChildProcess>();

interface Fake {
  url: string;
  child: ChildProcess;
  stderr: () => string;
}

/** Starts `<fake>/main.ts` on a free port and resolves with the URL it prints. */
async function start(main: string, args: string[]): Promise<Fake> {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('SHIPPING_API_')) delete env[k];
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, main), '--port', '0', ...args], { cwd: ROOT, env });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const url = await waitFor(() => /listening on (\S+)/.exec(out)?.[1], { what: `${main} to listen (stderr: ${err})`, timeoutMs: 60_000 });
  return { url, child, stderr: () => err };
}

async function stop(fake: Fake, signal: NodeJS.Signals): Promise<void> {
  const exited = new Promise((resolve) => fake.child.once('exit', resolve));
  fake.child.kill(signal);
  await exited;
}

async function call(url: string, init: RequestInit & { json?: unknown } = {}): Promise<{ status: number; body: any }> {
  const { json, ...rest } = init;
  const answer = await fetch(url, {
    ...rest,
    ...(json === undefined ? {} : { method: rest.method ?? 'POST', body: JSON.stringify(json) }),
    headers: { 'content-type': 'application/json', ...(rest.headers as Record<string, string>) },
  });
  const text = await answer.text();
  return { status: answer.status, body: text === '' ? null : JSON.parse(text) };
}

afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

describe('the fake shipping API with --state-file', () => {
  const file = path.join(dir, 'fake-shipping-api.json');
  const args = ['--tracking-step-ms', '2000', '--state-file', file];
  const auth = { 'x-rr-apikey': 'dev-api-key', 'x-rr-apitoken': 'dev-api-token' };

  it('keeps its labels through a SIGKILL: the label and its tracking are found after the restart', async () => {
    const first = await start('fake-shipping-api/main.ts', args);
    const created = await call(`${first.url}/labels`, { headers: auth, json: sampleLabelRequest() });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const before = await call(`${first.url}/labels/${id}`, { headers: auth });
    // Written within a second; a crash after that loses nothing.
    await waitFor(() => (safeSize(file) > 0 ? true : undefined), { what: 'the state file', timeoutMs: 5_000 });
    await stop(first, 'SIGKILL');

    const second = await start('fake-shipping-api/main.ts', args);
    const { id: _, createdAt, courier, customerOrderNumber, courierOrderNumber } = before.body;
    expect(await call(`${second.url}/labels/${id}`, { headers: auth })).toMatchObject({
      status: 200,
      body: { id, createdAt, courier, customerOrderNumber, courierOrderNumber },
    });
    // Not registered by the courier (404) for the first step after creation, then found: the restart lost nothing.
    const tracking = await waitFor(
      async () => {
        const t = await call(`${second.url}/tracking/${id}`, { headers: auth });
        return t.status === 200 ? t : undefined;
      },
      { what: 'tracking after the restart', timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(typeof tracking.body.tag).toBe('string');
    // Time goes on from the label's creation: the parcel ends as it would have without the restart.
    const ended = await waitFor(
      async () => {
        const t = await call(`${second.url}/tracking/${id}`, { headers: auth });
        return t.body.tag === 'Delivered' ? t : undefined;
      },
      { what: 'Delivered after the restart', timeoutMs: 20_000, intervalMs: 500 },
    );
    expect(ended.status).toBe(200);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await stop(second, 'SIGTERM');
  });
});

describe('the fake stores with --state-file', () => {
  it('Shopify keeps orders, fulfillments and tracking through a stop, and seeds nothing again', async () => {
    const file = path.join(dir, 'fake-shopify.json');
    const args = ['--seed-orders', '2', '--state-file', file];
    const first = await start('fake-shopify/main.ts', args);
    const placed = await call(`${first.url}/_fake/orders`, { json: { lineItems: [{ sku: 'TENT-2', quantity: 1 }] } });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    const orderId = (placed.body.order ?? placed.body).id as string;
    const graphql = (query: string) =>
      call(`${first.url}/admin/api/2026-10/graphql.json`, {
        headers: { 'x-shopify-access-token': 'shpat_fake_dev_token' },
        json: { query },
      });
    const fos = await graphql(`{ order(id: "${orderId}") { fulfillmentOrders(first: 5) { nodes { id } } } }`);
    const foId = fos.body.data.order.fulfillmentOrders.nodes[0].id as string;
    const fulfilled = await graphql(
      `mutation { fulfillmentCreate(fulfillment: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: "${foId}" }], trackingInfo: { number: "JD014600006281230704", company: "DHL Express" } }) { fulfillment { id } userErrors { message } } }`,
    );
    expect(fulfilled.body.data.fulfillmentCreate.userErrors).toEqual([]);
    const before = (await call(`${first.url}/_fake/orders`)).body.orders;
    expect(before).toHaveLength(3);
    await stop(first, 'SIGTERM');

    const second = await start('fake-shopify/main.ts', args);
    expect(second.stderr()).toMatch(/read back from .*: nothing seeded/);
    expect((await call(`${second.url}/_fake/orders`)).body.orders).toEqual(before);
    // The id counters came back too: a new order gets a new id and name.
    const next = await call(`${second.url}/_fake/orders`, { json: { lineItems: [{ sku: 'TENT-2', quantity: 1 }] } });
    const nextOrder = next.body.order ?? next.body;
    expect(before.map((o: { id: string }) => o.id)).not.toContain(nextOrder.id);
    expect(before.map((o: { name: string }) => o.name)).not.toContain(nextOrder.name);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await stop(second, 'SIGTERM');
  });

  it('WooCommerce keeps orders, notes and tracking items through a stop, and seeds nothing again', async () => {
    const file = path.join(dir, 'fake-woocommerce.json');
    const args = ['--seed-orders', '2', '--state-file', file];
    const first = await start('fake-woocommerce/main.ts', args);
    const basic = { authorization: `Basic ${Buffer.from('ck_fake_dev_key:cs_fake_dev_secret').toString('base64')}` };
    const orders = (await call(`${first.url}/_fake/orders`)).body as Array<{ id: number }>;
    const id = orders[0]!.id;
    const note = await call(`${first.url}/wp-json/wc/v3/orders/${id}/notes`, { headers: basic, json: { note: 'Label created' } });
    expect(note.status, JSON.stringify(note.body)).toBe(201);
    const tracking = await call(`${first.url}/wp-json/wc-shipment-tracking/v3/orders/${id}/shipment-trackings`, {
      headers: basic,
      json: { tracking_provider: 'DHL', tracking_number: 'JD014600006281230704' },
    });
    expect(tracking.status, JSON.stringify(tracking.body)).toBe(201);
    const before = (await call(`${first.url}/_fake/orders`)).body;
    await stop(first, 'SIGTERM');

    const second = await start('fake-woocommerce/main.ts', args);
    expect(second.stderr()).toMatch(/read back from .*: nothing seeded/);
    expect((await call(`${second.url}/_fake/orders`)).body).toEqual(before);
    const again = await call(`${second.url}/wp-json/wc/v3/orders/${id}/notes`, { headers: basic, json: { note: 'Delivered' } });
    expect(before[0].notes.map((n: { id: number }) => n.id)).not.toContain(again.body.id);
    await stop(second, 'SIGTERM');
  });

  it('a state file that cannot be read back is set aside, named, and the store starts as new', async () => {
    const file = path.join(dir, 'broken.json');
    writeFileSync(file, '{"version":1,"state":', { mode: 0o600 });
    const fake = await start('fake-woocommerce/main.ts', ['--seed-orders', '1', '--state-file', file]);
    expect(fake.stderr()).toMatch(/could not read back .*broken\.json .*set aside as .*broken\.json\.unreadable-\d+, starting empty/);
    expect((await call(`${fake.url}/_fake/orders`)).body).toHaveLength(1);
    expect(readdirSync(dir).some((f) => f.startsWith('broken.json.unreadable-'))).toBe(true);
    await stop(fake, 'SIGTERM');
  });
});

function safeSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
