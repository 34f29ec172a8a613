/**
 * The README's quick start, as a new user runs it: `npm run dev` (here on free ports and a
 * temporary data dir), the printed exports, the sample import, shipments reaching delivered,
 * the Web UI answering, and Ctrl-C stopping everything.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, expect, it } from 'vitest';
import { shipmentWorkflowId } from '../domain/shipment';
import { runCli } from './helpers/cli';
import { startDevProcess, stopDevProcess } from './helpers/dev-process';
import { waitFor } from './helpers/wait';
import { freePort } from '../dev-server/free-port';

let dev: ChildProcess | undefined;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'quick-start-'));

afterAll(async () => {
  await stopDevProcess(dev);
  rmSync(dataDir, { recursive: true, force: true });
});

async function adminPost(url: string, body: unknown): Promise<Record<string, unknown>> {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(answer.status, await answer.clone().text()).toBe(201);
  return (await answer.json()) as Record<string, unknown>;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

it('npm run dev brings up Temporal, the Web UI, the fake API, the shop receiver, the fake stores and the worker; the samples import, deliver and reach the shop page and the stores; orders placed in the stores become shipments', async () => {
  const [temporalPort, uiPort, fakeApiPort, shopPort, codecPort, shopifyPort, wooPort, triggerPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', TRACKING_POLL_INTERVAL: '500ms' };
  for (const key of [
    'SHIPPING_API_BASE_URL',
    'SHIPPING_API_KEY',
    'SHIPPING_API_TOKEN',
    'TEMPORAL_TASK_QUEUE',
    'SHOP_CONNECTORS',
    'SHOP_CONNECTORS_FILE',
    'PAYLOAD_ENCRYPTION_KEYS',
    'PAYLOAD_ENCRYPTION_KEYS_FILE',
    'PAYLOAD_ENCRYPTION_KEY_ID',
  ])
    delete env[key];
  // A shell set up for a real cluster: the dev worker must still reach the local dev server, in plain text.
  Object.assign(env, { TEMPORAL_API_KEY: 'key-from-the-shell', TEMPORAL_TLS: 'true' });
  const started = await startDevProcess(
    {
      'temporal-port': temporalPort,
      'ui-port': uiPort,
      'fake-api-port': fakeApiPort,
      'shop-port': shopPort,
      'shopify-port': shopifyPort,
      'woocommerce-port': wooPort,
      'codec-port': codecPort,
      'trigger-port': triggerPort,
      'data-dir': dataDir,
      'tracking-step-ms': 300,
    },
    env,
  );
  dev = started.child;
  const { exited } = started;
  const output = started.output();
  expect(output).toContain(`Temporal Web UI   http://localhost:${uiPort}`);
  const shopPage = `http://127.0.0.1:${shopPort}`;
  expect(output).toContain(`Shop page         ${shopPage}`);
  expect(output).toContain('This shell sets TEMPORAL_API_KEY, TEMPORAL_TLS: unset them where you run the import and CLI');
  expect(output).not.toContain('key-from-the-shell');

  // The banner's export line is what the user pastes into the second terminal.
  const exportLine = output.split('\n').find((l) => l.trim().startsWith('export '));
  expect(exportLine).toBeDefined();
  const userEnv = Object.fromEntries(
    exportLine!
      .trim()
      .slice('export '.length)
      .split(' ')
      .map((pair) => pair.split('=') as [string, string]),
  );
  // Personal data is encrypted by default, with a key made once in the data dir, readable by its owner only.
  const keyFile = path.join(dataDir, 'payload-encryption.keys');
  expect(userEnv).toMatchObject({
    TEMPORAL_ADDRESS: `localhost:${temporalPort}`,
    SHIPPING_API_BASE_URL: `http://127.0.0.1:${fakeApiPort}`,
    PAYLOAD_ENCRYPTION_KEYS_FILE: keyFile,
    SHOP_CONNECTORS_FILE: path.join(dataDir, 'shop-connectors.json'),
  });
  expect(statSync(keyFile).mode & 0o777).toBe(0o600);
  expect(output).toContain(`Payloads          encrypted (key "dev-key-1"); the Web UI decrypts through http://127.0.0.1:${codecPort}`);

  const ui = await fetch(`http://localhost:${uiPort}/`);
  expect(ui.status).toBe(200);

  const imported = await runCli(['import', 'examples/orders.ndjson', '--json'], { env: userEnv });
  expect(imported.code).toBe(1); // the sample has five broken records, on purpose
  const summary = JSON.parse(imported.stdout);
  expect(summary.counts).toMatchObject({ records: 35, started: 30, rejected: 5, failed: 0 });

  // The README's second terminal in the same checkout exports no key and no connectors: the CLI
  // finds npm run dev's (its data dir; .data/ by default), reads the encrypted shipments and knows its shops.
  const sameCheckout = { TEMPORAL_ADDRESS: userEnv.TEMPORAL_ADDRESS!, DEV_DATA_DIR: dataDir, PAYLOAD_ENCRYPTION: '' };
  const status = await runCli(['status', '--json', 'lyon-ceramics', 'LC-5531'], { env: sameCheckout });
  expect(status.code, status.stderr).toBe(0);
  expect(JSON.parse(status.stdout)).toMatchObject({ shop: 'lyon-ceramics', orderId: 'LC-5531' });
  const schedule = await runCli(['schedule', 'describe', 'oslo-outdoor', '--json'], { env: sameCheckout });
  expect(schedule.code, schedule.stderr).toBe(0);

  const delivered = await waitFor(
    async () => {
      const list = await runCli(['list', '--status', 'delivered', '--json'], { env: userEnv });
      const rows = JSON.parse(list.stdout).shipments as unknown[];
      return rows.length > 0 ? rows : undefined;
    },
    { what: 'a delivered shipment', timeoutMs: 60_000, intervalMs: 250 },
  );
  expect(delivered.length).toBeGreaterThan(0);

  // What the server stores of an order (its input: name, phone, e-mail) is ciphertext.
  const connection = await Connection.connect({ address: `localhost:${temporalPort}` });
  try {
    const history = await new Client({ connection, namespace: 'default' }).workflow
      .getHandle(shipmentWorkflowId({ shop: 'lyon-ceramics', orderId: 'LC-5522' }))
      .fetchHistory();
    const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(Buffer.from(input.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(Buffer.from(input.data!).toString('latin1')).not.toContain('lyon-ceramics');
  } finally {
    await connection.close();
  }

  // Every started order reaches the shop: label link, tracking number, and for some, delivered.
  const shopOrders = await waitFor(
    async () => {
      const { orders } = (await (await fetch(`${shopPage}/api/orders`)).json()) as {
        orders: Array<{ orderId: string; outcome: string | null; labelId: string | null; missing: number[] }>;
      };
      return orders.length === 30 && orders.some((o) => o.outcome === 'delivered') ? orders : undefined;
    },
    { what: 'the 30 started orders on the shop page, one delivered', timeoutMs: 60_000, intervalMs: 500 },
  );
  for (const o of shopOrders) expect(o.missing).toEqual([]);
  const page = await (await fetch(shopPage)).text();
  expect(page).toContain(shopOrders.find((o) => o.outcome === 'delivered')!.orderId);

  // The platform shops' orders become a fulfillment with tracking in "Shopify" and a tracking item in "WooCommerce".
  expect(output).toContain(`Fake Shopify      http://127.0.0.1:${shopifyPort}`);
  expect(output).toContain(`Fake WooCommerce  http://127.0.0.1:${wooPort}`);
  const platformImport = await runCli(['import', 'examples/platform-orders.ndjson', '--json'], { env: userEnv });
  // The stores are import sources too: their first pull may have started these orders already (one shipment either way).
  const platformCounts = JSON.parse(platformImport.stdout).counts;
  expect(platformCounts).toMatchObject({ records: 6, rejected: 0, failed: 0 });
  expect(platformCounts.started + platformCounts.alreadyKnown).toBe(6);
  await waitFor(
    async () => {
      const shopify = (await (await fetch(`http://127.0.0.1:${shopifyPort}/_fake/orders/5500000001`)).json()) as {
        fulfillments: Array<{ trackingInfo: Array<{ number: string | null }> }>;
      };
      const woo = (await (await fetch(`http://127.0.0.1:${wooPort}/_fake/orders/1001`)).json()) as { trackingItems: unknown[] };
      return shopify.fulfillments[0]?.trackingInfo[0]?.number && woo.trackingItems.length === 1 ? true : undefined;
    },
    {
      what: 'a fulfillment with tracking in the fake Shopify store and a tracking item in the fake WooCommerce store',
      timeoutMs: 60_000,
      intervalMs: 500,
    },
  );
  expect(await (await fetch(`http://127.0.0.1:${shopifyPort}/`)).text()).toContain('#1001');

  // An order placed in each store becomes a shipment without a file: its webhook starts the shop's pull.
  const placed = await adminPost(`http://127.0.0.1:${shopifyPort}/_fake/orders`, {
    lineItems: [{ sku: 'TENT-2', quantity: 1, grams: 2400 }],
  });
  const wooPlaced = await adminPost(`http://127.0.0.1:${wooPort}/_fake/orders`, {
    status: 'processing',
    lineItems: [{ sku: 'PORT-10', quantity: 1 }],
  });
  for (const [shop, orderId] of [
    ['oslo-outdoor', `OO-${String(placed.name).replace('#', '')}`],
    ['porto-wines', `PW-${String(wooPlaced.number)}`],
  ]) {
    await waitFor(async () => ((await runCli(['status', shop!, orderId!], { env: userEnv })).code === 0 ? true : undefined), {
      what: `a shipment for order ${orderId} placed in the fake store of ${shop}`,
      timeoutMs: 60_000,
      intervalMs: 1000,
    });
  }

  // Two example shipping accounts beside the default one: the pull started the stores' orders on their shop's account.
  expect(output).toContain('Shipping accounts sandbox (porto-wines), production (oslo-outdoor), default (every other shop)');
  const accountOf = async (key: string) => {
    const { labels } = (await (await fetch(`http://127.0.0.1:${fakeApiPort}/__admin/labels`)).json()) as {
      labels: Array<{ idempotencyKey: string; account: string }>;
    };
    return labels.find((l) => l.idempotencyKey === key)?.account;
  };
  const placedAccounts = await waitFor(
    async () => {
      const found = [
        await accountOf(`oslo-outdoor:OO-${String(placed.name).replace('#', '')}:r1`),
        await accountOf(`porto-wines:PW-${String(wooPlaced.number)}:r1`),
      ];
      return found.every(Boolean) ? found : undefined;
    },
    { what: 'labels of the orders placed in the stores', timeoutMs: 60_000, intervalMs: 500 },
  );
  expect(placedAccounts).toEqual(['production', 'sandbox']);
  expect(await accountOf('lyon-ceramics:LC-5522:r1')).toBe('default');

  const again = await runCli(['import', 'examples/orders.ndjson', '--json'], { env: userEnv });
  expect(JSON.parse(again.stdout).counts).toMatchObject({ started: 0, alreadyKnown: 30 });

  // Ctrl-C: everything stops, nothing keeps listening.
  process.kill(-dev.pid!, 'SIGINT');
  await exited;
  for (const port of [temporalPort, uiPort, fakeApiPort, shopPort, codecPort, shopifyPort, wooPort, triggerPort])
    expect(await portOpen(port)).toBe(false);
}, 240_000);
