/**
 * `npm run dev` as an operator sees it: the worker's health and metrics on loopback without a
 * setting, and with --prometheus, Debian's Prometheus scraping them with the project's alerts, one
 * of which fires on the sample's rejected labels and resolves once an operator has dealt with them.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { findPrometheus } from '../dev-server/dev-prometheus';
import { freePort } from '../dev-server/free-port';
import { runCli } from './helpers/cli';
import { startDevProcess, stopDevProcess } from './helpers/dev-process';
import { waitFor } from './helpers/wait';

let dev: ChildProcess | undefined;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dev-metrics-'));

afterAll(async () => {
  await stopDevProcess(dev);
  rmSync(dataDir, { recursive: true, force: true });
});

interface PromAlert {
  labels: { alertname: string; reason?: string };
  state: 'pending' | 'firing';
}

async function alerts(url: string): Promise<PromAlert[]> {
  const body = (await (await fetch(`${url}/api/v1/alerts`)).json()) as { data: { alerts: PromAlert[] } };
  return body.data.alerts;
}

const needsAPerson = (a: PromAlert) => a.labels.alertname === 'ShipmentsNeedAPerson' && a.labels.reason === 'awaiting_correction';

// CI installs Debian's prometheus package: there a missing binary is a failure, not a skip.
it.skipIf(!findPrometheus() && !process.env.CI)(
  "npm run dev serves the worker's health and metrics on loopback; with --prometheus the project's alerts fire on the rejected labels and resolve once they are dealt with",
  async () => {
    expect(findPrometheus(), 'prometheus (Debian package) is not installed').toBeDefined();
    const ports = {
      'temporal-port': await freePort(),
      'ui-port': await freePort(),
      'fake-api-port': await freePort(),
      'shop-port': await freePort(),
      'shopify-port': await freePort(),
      'woocommerce-port': await freePort(),
      'trigger-port': await freePort(),
      'health-port': await freePort(),
      'sdk-metrics-port': await freePort(),
      'prometheus-port': await freePort(),
    };
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', TRACKING_POLL_INTERVAL: '500ms' };
    for (const key of [
      'SHIPPING_API_BASE_URL',
      'SHOP_CONNECTORS',
      'SHOP_CONNECTORS_FILE',
      'PAYLOAD_ENCRYPTION_KEYS',
      'PAYLOAD_ENCRYPTION_KEYS_FILE',
    ])
      delete env[key];
    const started = await startDevProcess(
      { ...ports, 'data-dir': dataDir, 'tracking-step-ms': 300, 'no-encryption': true, prometheus: true },
      env,
    );
    dev = started.child;
    const output = started.output();
    const health = `http://127.0.0.1:${ports['health-port']}`;
    const prometheus = `http://127.0.0.1:${ports['prometheus-port']}`;
    expect(output).toContain(`Worker health     ${health}/readyz`);
    expect(output).toContain(`Prometheus        ${prometheus}/alerts`);
    // The filtered list first: the Web UI's default list is mostly shop pulls and tracking pollers.
    expect(output.indexOf('Shipments only')).toBeLessThan(output.indexOf('Temporal Web UI'));

    await waitFor(async () => ((await fetch(`${health}/readyz`)).status === 200 ? true : undefined), {
      what: 'the worker ready on /readyz',
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    expect(await (await fetch(`${health}/metrics`)).text()).toContain('shipments_needing_attention');
    expect(await (await fetch(`http://127.0.0.1:${ports['sdk-metrics-port']}/metrics`)).text()).toContain('temporal_');

    // Prometheus scrapes both endpoints and holds the project's rules.
    await waitFor(
      async () => {
        const body = (await (await fetch(`${prometheus}/api/v1/targets`)).json()) as {
          data: { activeTargets: Array<{ labels: { job: string }; health: string }> };
        };
        const up = body.data.activeTargets.filter((t) => t.health === 'up').map((t) => t.labels.job);
        return up.includes('worker') && up.includes('worker-sdk') ? true : undefined;
      },
      { what: 'both worker targets up in Prometheus', timeoutMs: 60_000, intervalMs: 1000 },
    );
    const rules = await (await fetch(`${prometheus}/api/v1/rules`)).text();
    for (const alert of ['ShopDeliveryStopped', 'ShippingApiRateLimited', 'ShipmentsNeedAPerson']) expect(rules).toContain(alert);

    // The sample has two labels the courier rejects: they wait for a person, and the alert fires.
    // The banner's export line, as a user pastes it into the second terminal.
    const exportLine = output.split('\n').find((l) => l.trim().startsWith('export '))!;
    const userEnv = Object.fromEntries(
      exportLine
        .trim()
        .slice('export '.length)
        .split(' ')
        .map((pair) => pair.split('=') as [string, string]),
    );
    const imported = await runCli(['import', 'examples/orders.ndjson', '--json'], { env: userEnv });
    expect(imported.stdout, imported.stderr).toContain('"started": 30');
    await waitFor(async () => ((await alerts(prometheus)).some((a) => needsAPerson(a) && a.state === 'firing') ? true : undefined), {
      what: 'ShipmentsNeedAPerson firing for awaiting_correction',
      timeoutMs: 180_000,
      intervalMs: 2000,
    });

    // The operator resubmits one and cancels the other: nothing waits, and the alert resolves.
    const resubmit = await runCli(['resubmit', 'lyon-ceramics', 'LC-5531', 'examples/corrected-label.json'], { env: userEnv });
    expect(resubmit.code, resubmit.stderr).toBe(0);
    const cancel = await runCli(['cancel', 'berlin-coffee', 'BC-10240', '--reason', 'customer cancelled', '--wait'], { env: userEnv });
    expect(cancel.code, cancel.stderr).toBe(0);
    await waitFor(async () => (!(await alerts(prometheus)).some(needsAPerson) ? true : undefined), {
      what: 'ShipmentsNeedAPerson resolved',
      timeoutMs: 120_000,
      intervalMs: 2000,
    });
  },
  420_000,
);
