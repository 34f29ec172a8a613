/**
 * `npm run dev -- --prometheus`: Debian's Prometheus (`apt-get install -y prometheus`) scraping the
 * demo worker's two metrics endpoints and evaluating the project's alert rules
 * (metrics/prometheus/alerts.yml), so the alerts can be seen firing and resolving without Docker.
 * The rules are the project's, with every `for:` shortened to DEMO_ALERT_FOR: a demo does not last
 * the half hour some of them wait.
 */
import fs from 'node:fs';
import path from 'node:path';
import { findOnPath, REPO_ROOT } from './temporal-cli';

export const PROMETHEUS_RULES = path.join(REPO_ROOT, 'metrics', 'prometheus', 'alerts.yml');
/** How long an alert's condition holds in the demo before it fires (pending until then). */
export const DEMO_ALERT_FOR = '1m';

/** The Prometheus binary: PROMETHEUS_PATH, else `prometheus` on PATH; undefined when neither. */
export function findPrometheus(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.PROMETHEUS_PATH) return fs.existsSync(env.PROMETHEUS_PATH) ? env.PROMETHEUS_PATH : undefined;
  return findOnPath('prometheus', env);
}

/** The project's rules with each `for:` set to DEMO_ALERT_FOR; expressions and windows unchanged. */
export function demoRules(rules: string): string {
  const header = `# metrics/prometheus/alerts.yml for npm run dev -- --prometheus: every "for:" is ${DEMO_ALERT_FOR}.\n`;
  return header + rules.replace(/^(\s+for:\s*)\S+/gm, `$1${DEMO_ALERT_FOR}`);
}

/** Scrapes the worker's health server (/metrics, the project's counters) and the SDK's endpoint, on loopback. */
export function demoPrometheusConfig(p: { healthPort: number; sdkMetricsPort: number; rulesFile: string }): string {
  return [
    '# Written by npm run dev -- --prometheus at each start.',
    'global:',
    '  scrape_interval: 5s',
    '  evaluation_interval: 10s',
    'rule_files:',
    `  - ${JSON.stringify(p.rulesFile)}`,
    'scrape_configs:',
    '  - job_name: worker',
    '    static_configs:',
    `      - targets: ["127.0.0.1:${p.healthPort}"]`,
    '  - job_name: worker-sdk',
    '    static_configs:',
    `      - targets: ["127.0.0.1:${p.sdkMetricsPort}"]`,
    '',
  ].join('\n');
}

/** Writes the config and rules under `<dataDir>/prometheus/`; returns the command line to run. */
export function prepareDemoPrometheus(p: { binary: string; dataDir: string; port: number; healthPort: number; sdkMetricsPort: number }): {
  command: string;
  args: string[];
} {
  const dir = path.join(p.dataDir, 'prometheus');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const rulesFile = path.join(dir, 'alerts.yml');
  fs.writeFileSync(rulesFile, demoRules(fs.readFileSync(PROMETHEUS_RULES, 'utf8')));
  const configFile = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(configFile, demoPrometheusConfig({ healthPort: p.healthPort, sdkMetricsPort: p.sdkMetricsPort, rulesFile }));
  return {
    command: p.binary,
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${p.port}`,
      // Its info lines are start-up chatter; warnings and errors still show.
      '--log.level=warn',
    ],
  };
}

/** Resolves once Prometheus answers /-/ready, or false after `timeoutMs` or when `alive` says it died. */
export async function prometheusReady(url: string, alive: () => boolean, timeoutMs = 60_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && alive()) {
    try {
      if ((await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) })).ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}
