/**
 * The alert rules and the Grafana dashboard (metrics/): `promtool check rules` and `promtool
 * test rules` (each alert fires on a failing series and stays silent on a healthy one; CI
 * installs Debian's prometheus package for promtool), and every metric they name is one the
 * worker exports, so renaming a counter cannot silence an alert.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ATTENTION_GAUGE } from '../metrics/attention-gauge';
import { registry } from '../metrics/counters';
import '../metrics/tracking-membership';
import { findOnPath } from '../dev-server/temporal-cli';

const DIR = path.join(__dirname, '..', 'metrics');
const RULES = path.join(DIR, 'prometheus', 'alerts.yml');
const promtool = findOnPath('promtool');

/** CI must run them: there a missing promtool is a failure, not a skip. */
it.skipIf(!promtool && !process.env.CI)('promtool accepts the rules, and every alert fires on its failing series only', () => {
  expect(promtool, 'promtool (Debian package prometheus) is not installed').toBeDefined();
  const check = spawnSync(promtool!, ['check', 'rules', RULES], { encoding: 'utf8' });
  expect(check.status, check.stdout + check.stderr).toBe(0);
  const test = spawnSync(promtool!, ['test', 'rules', 'alerts.test.yml'], { cwd: path.join(DIR, 'prometheus'), encoding: 'utf8' });
  expect(test.status, test.stdout + test.stderr).toBe(0);
  expect(test.stdout).toMatch(/SUCCESS/);
});

it('every alert has a test that fires it', () => {
  const alerts = [...readFileSync(RULES, 'utf8').matchAll(/^\s+- alert: (\w+)/gm)].map((m) => m[1]!);
  const tests = readFileSync(path.join(DIR, 'prometheus', 'alerts.test.yml'), 'utf8');
  expect(alerts.length).toBeGreaterThanOrEqual(7);
  for (const alert of alerts) expect(tests, alert).toMatch(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels`));
});

it("the rules and the dashboard name only metrics the worker exports (the SDK's: temporal_*)", async () => {
  const dashboard = JSON.parse(readFileSync(path.join(DIR, 'grafana', 'shipping-sync-worker.json'), 'utf8'));
  const exprs = [
    ...[...readFileSync(RULES, 'utf8').matchAll(/expr: ([^\n]+(?:\n {10,}[^\n]+)*)/g)].map((m) => m[1]!),
    ...dashboard.panels.flatMap((p: { targets?: Array<{ expr: string }> }) => (p.targets ?? []).map((t) => t.expr)),
  ];
  const exported = new Set([...(await registry.getMetricsAsJSON()).map((m) => m.name), ATTENTION_GAUGE]);
  const named = new Set(
    exprs.flatMap((e) => [...e.matchAll(/\b([a-z_]+_(?:total|attention|bytes|labels|unwatched|alone))\b/g)].map((m) => m[1]!)),
  );
  expect(named.size).toBeGreaterThan(5);
  for (const metric of named) expect(exported, metric).toContain(metric);
  const sdk = exprs.flatMap((e) => [...e.matchAll(/\b(temporal_\w+)/g)].map((m) => m[1]!));
  expect(sdk.length).toBeGreaterThan(0);
});
