// The compose stack is not run here (no container engine): it is kept in step with what
// `npm run cluster` runs natively, and checked by a compose binary when one is installed.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from '../cluster/binaries';
import { findPostgres } from '../cluster/postgres';
import { priorityDynamicConfigYaml } from '../dev-server/server-priority';
import { findOnPath } from '../dev-server/temporal-cli';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflow-definitions/shipment';
import { loadTracingSettings } from '../config/tracing';

const ROOT = path.join(__dirname, '..');
const compose = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
const images = [...compose.matchAll(/^\s+image:\s*(\S+)/gm)].map((m) => m[1]!);

it('docker-compose.yml registers every search attribute the workflow upserts, as Keyword', () => {
  const list = /for attribute in ([\w ]+); do/.exec(compose);
  expect(list).not.toBeNull();
  expect(list![1]!.trim().split(/\s+/).sort()).toEqual(SEARCH_ATTRIBUTE_KEYS.map((k) => k.name).sort());
  expect(compose).toContain('--type Keyword');
  expect(SEARCH_ATTRIBUTE_KEYS.every((k) => k.type === 'KEYWORD')).toBe(true);
});

it('docker-compose.yml pins the versions npm run cluster runs', () => {
  expect(images).toContain(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
  expect(images).toContain(`temporalio/ui:${TEMPORAL_UI_VERSION}`);
  const adminTools = images.filter((i) => i.startsWith('temporalio/admin-tools:'));
  expect(adminTools.length).toBeGreaterThan(0);
  for (const image of adminTools)
    expect(image).toMatch(new RegExp(`^temporalio/admin-tools:${TEMPORAL_SERVER_VERSION.replace(/\./g, '\\.')}-`));
  const postgres = images.find((i) => i.startsWith('postgres:'));
  expect(postgres).toMatch(/^postgres:\d+-/);
  // The same major as the Debian package the native cluster runs, where one is installed.
  const installed = findPostgres();
  if (installed) expect(postgres).toMatch(new RegExp(`^postgres:${installed.version}-`));
  for (const image of images) expect(image).not.toMatch(/:latest$|^[^:]+$/);
});

/** `docker-compose` (Debian's package) or the `docker compose` plugin, if either is installed. */
function composeCommand(): string[] | undefined {
  const v1 = findOnPath('docker-compose');
  if (v1) return [v1];
  const docker = findOnPath('docker');
  if (docker && spawnSync(docker, ['compose', 'version'], { stdio: 'ignore' }).status === 0) return [docker, 'compose'];
  return undefined;
}
const composeCli = composeCommand();

it.skipIf(!composeCli)('`compose config` accepts the file, with and without the shop and monitoring profiles', () => {
  for (const profile of [[], ['--profile', 'shop'], ['--profile', 'monitoring']]) {
    const [command, ...args] = composeCli!;
    const result = spawnSync(command!, [...args, ...profile, 'config', '-q'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  }
});

it("docker-compose.yml's Temporal turns task queue priority on, as npm run cluster and npm run dev do", () => {
  const file = readFileSync(path.join(ROOT, 'cluster', 'dynamicconfig.yaml'), 'utf8');
  expect(file.replace(/^#.*\n/gm, '')).toBe(priorityDynamicConfigYaml());
  expect(compose).toContain('./cluster/dynamicconfig.yaml:/etc/temporal/config/dynamicconfig/project.yaml:ro');
  expect(compose).toContain('DYNAMIC_CONFIG_FILE_PATH: /etc/temporal/config/dynamicconfig/project.yaml');
});

it("docker-compose.yml's monitoring profile has a trace viewer the workers can send OTLP to, off unless asked", () => {
  // The service's indented lines, up to the next service or the volumes.
  const jaeger = /\n {2}jaeger:\n((?: {4}.*\n|\n)*?)(?=\n {2}\w|\nvolumes:)/.exec(compose)?.[1];
  expect(jaeger).toBeDefined();
  expect(jaeger).toMatch(/image: jaegertracing\/all-in-one:\d+\.\d+\.\d+\n/);
  expect(jaeger).toContain('profiles: [monitoring]');
  // OTLP over HTTP, which @opentelemetry/exporter-trace-otlp-http sends, and the UI.
  expect(jaeger).toContain("- '4318:4318'");
  expect(jaeger).toContain("- '16686:16686'");
  // The worker passes the standard variable through and has no endpoint of its own: without the
  // profile there is no collector, and tracing stays off (tracing/setup.ts treats empty as unset).
  const worker = /\n {2}worker:\n([\s\S]*?)\n\n/.exec(compose)?.[1];
  expect(worker).toContain('OTEL_EXPORTER_OTLP_ENDPOINT: ${OTEL_EXPORTER_OTLP_ENDPOINT:-}');
  expect(loadTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined();
  expect(loadTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' })).toEqual({ endpoint: 'http://jaeger:4318' });
});
