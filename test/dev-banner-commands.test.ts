/**
 * The banner's merchant commands, pasted as a user pastes them, at the demo's own pace (a
 * checkpoint a minute): each acts on an order in the phase its comment names. The cancel before
 * the label stops a shipment (cancelled_in_shop) instead of meeting a fulfilled order, and the
 * WooCommerce edits reach a shipment still tracked instead of a finished one.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../dev-server/free-port';
import { runCli } from './helpers/cli';
import { startDevProcess, stopDevProcess } from './helpers/dev-process';
import { waitFor } from './helpers/wait';

let dev: ChildProcess | undefined;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dev-banner-'));

afterAll(async () => {
  await stopDevProcess(dev);
  rmSync(dataDir, { recursive: true, force: true });
});

it("the banner's merchant cancel stops an order before its label, and its WooCommerce edits reach a shipment still tracked", async () => {
  const ports = {
    'temporal-port': await freePort(),
    'ui-port': await freePort(),
    'fake-api-port': await freePort(),
    'shop-port': await freePort(),
    'shopify-port': await freePort(),
    'woocommerce-port': await freePort(),
    'trigger-port': await freePort(),
  };
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const key of ['SHIPPING_API_BASE_URL', 'SHOP_CONNECTORS', 'SHOP_CONNECTORS_FILE', 'TRACKING_POLL_INTERVAL']) delete env[key];
  const started = await startDevProcess({ ...ports, 'data-dir': dataDir, 'no-encryption': true }, env);
  dev = started.child;
  const lines = started.output().split('\n');
  const userEnv = Object.fromEntries(
    lines
      .find((l) => l.trim().startsWith('export '))!
      .trim()
      .slice('export '.length)
      .split(' ')
      .map((pair) => pair.split('=') as [string, string]),
  );
  /** The banner line whose comment says `what`, run as pasted into a shell. */
  const paste = (what: RegExp): string => {
    const line = lines.find((l) => l.trim().startsWith('curl ') && what.test(l));
    expect(line, `a banner line matching ${what}`).toBeDefined();
    return execFileSync('sh', ['-c', line!.trim()], { encoding: 'utf8' });
  };
  const state = async (shop: string, orderId: string) => {
    const run = await runCli(['status', shop, orderId, '--json'], { env: userEnv });
    return run.code === 0 ? (JSON.parse(run.stdout) as { searchAttributes: { status?: string; shopChange?: string } }) : undefined;
  };

  // Labels held back, an order placed: its shipment waits for its label; the merchant's cancel stops it.
  const shopifyOrder = lines.find((l) => /an order placed in "Shopify" \(#\d+\)/.test(l))!.match(/\(#(\d+)\)/)![1]!;
  paste(/hold labels back/);
  paste(/an order placed in "Shopify"/);
  await waitFor(
    async () => ((await state('oslo-outdoor', `OO-${shopifyOrder}`))?.searchAttributes.status === 'creating_label' ? true : undefined),
    {
      what: `OO-${shopifyOrder} waiting for its label`,
      timeoutMs: 60_000,
      intervalMs: 500,
    },
  );
  expect(paste(/the merchant cancels/)).not.toContain('Cannot cancel');
  await waitFor(
    async () => ((await state('oslo-outdoor', `OO-${shopifyOrder}`))?.searchAttributes.status === 'cancelled_in_shop' ? true : undefined),
    { what: `OO-${shopifyOrder} stopped by the merchant's cancel`, timeoutMs: 60_000, intervalMs: 500 },
  );
  paste(/labels go again/);

  // The WooCommerce order the banner places is tracked for minutes: its edits are marked on it.
  const wooOrder = lines.find((l) => /an order placed in "WooCommerce" \(\d+\)/.test(l))!.match(/\((\d+)\)/)![1]!;
  paste(/an order placed in "WooCommerce"/);
  await waitFor(async () => ((await state('porto-wines', `PW-${wooOrder}`))?.searchAttributes.status === 'tracking' ? true : undefined), {
    what: `PW-${wooOrder} tracked`,
    timeoutMs: 60_000,
    intervalMs: 500,
  });
  paste(/correct the address of the order placed above/);
  await waitFor(
    async () => ((await state('porto-wines', `PW-${wooOrder}`))?.searchAttributes.shopChange === 'address_changed' ? true : undefined),
    { what: `PW-${wooOrder} marked address_changed`, timeoutMs: 60_000, intervalMs: 500 },
  );
  paste(/cancel it \(or "on-hold", "refunded"\) in "WooCommerce"/);
  await waitFor(
    async () => ((await state('porto-wines', `PW-${wooOrder}`))?.searchAttributes.shopChange === 'cancelled_in_shop' ? true : undefined),
    { what: `PW-${wooOrder} marked cancelled_in_shop`, timeoutMs: 60_000, intervalMs: 500 },
  );
  expect((await state('porto-wines', `PW-${wooOrder}`))?.searchAttributes.status).toBe('tracking');
}, 300_000);
