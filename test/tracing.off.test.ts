/**
 * Tracing off costs no loading: a process without OTEL_EXPORTER_OTLP_ENDPOINT that loads the
 * worker's wiring, the HTTP clients and the command line never loads the OpenTelemetry SDK or
 * Temporal's interceptors package (a fresh process: the test runner's own cache may hold them).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

const ROOT = path.join(__dirname, '..');

it('loads neither the OpenTelemetry SDK nor @temporalio/interceptors-opentelemetry', () => {
  const script = `
    require('./worker/create-worker');
    require('./client/cli-support');
    require('./client/import/main');
    require('./shipping-api/client');
    require('./platforms/webhook/write-back');
    const loaded = Object.keys(require.cache).filter((f) => /interceptors-opentelemetry|@opentelemetry[\\\\/]sdk-|exporter-trace-otlp/.test(f));
    console.log(JSON.stringify(loaded));
  `;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
    timeout: 60_000,
  });
  expect(result.stderr).toBe('');
  expect(JSON.parse(result.stdout.trim().split('\n').at(-1)!)).toEqual([]);
});
