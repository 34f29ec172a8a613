/**
 * What each process of the cluster is: command, environment, stop signal, when it serves, and
 * which of its lines are not worth printing.
 */
import http from 'node:http';
import { connectWhenReady } from '../dev-server/temporal-ready';
import { REPO_ROOT } from '../dev-server/temporal-cli';
import { fakeApiLaunch, FAKE_API_LISTENING, nodeTsx, workerEnv, type DemoSettings } from '../launcher/defaults';
import type { ClusterBinaries } from './binaries';
import type { Options } from './cli';
import { NAMESPACE, SQL_PASSWORD_ENV, type ClusterLayout } from './config';
import { postgresCommand, waitForPostgres, type PostgresInstall, type RunAs } from './postgres';
import type { Service, ServiceSpec } from './services';

/** What `up` found and wrote before starting anything. */
export interface ClusterSetup {
  pg: PostgresInstall;
  binaries: ClusterBinaries;
  runAs: RunAs | undefined;
  password: string;
  temporalArgs: string[];
  uiArgs: string[];
}

export function postgresSpec(o: Options, layout: ClusterLayout, setup: ClusterSetup): ServiceSpec {
  const { command, args } = postgresCommand(setup.pg, layout.pgDir, o.pgPort);
  return {
    name: 'postgres',
    command,
    args,
    env: { PATH: process.env.PATH, LANG: 'C' },
    cwd: layout.pgDir,
    runAs: setup.runAs,
    stopSignal: 'SIGINT',
    critical: true,
    ready: (s) => waitForPostgres(setup.pg, o.pgPort, () => s.alive()),
    // create-database at every start logs an error for the database that is already there.
    quiet: (line) => /ERROR: {2}database "[\w]+" already exists|STATEMENT: {2}CREATE DATABASE/.test(line),
  };
}

export function temporalSpec(layout: ClusterLayout, setup: ClusterSetup, address: string): ServiceSpec {
  return {
    name: 'temporal',
    command: setup.binaries.server,
    args: setup.temporalArgs,
    // Only what the server needs: the database password never reaches the other processes.
    env: { PATH: process.env.PATH, [SQL_PASSWORD_ENV]: setup.password },
    cwd: layout.temporalConfigDir,
    stopSignal: 'SIGTERM',
    critical: true,
    ready: async (s) => {
      const connection = await connectWhenReady(address, {
        namespace: 'temporal-system',
        alive: () => s.alive(),
        what: 'the Temporal server',
        timeoutMs: 120_000,
      });
      await connection.close();
    },
    // Its config loading at every start; while it stops on purpose, the warnings of services
    // losing each other mean nothing.
    quiet: (line, stopping) => /Loading config/.test(line) || (stopping && !/"level":"(error|fatal)"/.test(line)),
  };
}

export function uiSpec(o: Options, layout: ClusterLayout, setup: ClusterSetup): ServiceSpec {
  return {
    name: 'ui',
    command: setup.binaries.ui,
    args: setup.uiArgs,
    env: { PATH: process.env.PATH },
    cwd: layout.uiConfigDir,
    stopSignal: 'SIGTERM',
    critical: true,
    ready: (s) => waitForHttp(`http://127.0.0.1:${o.uiPort}/`, s),
    // Its config loading, and an access log line for every successful request.
    quiet: (line) => /Loading config/.test(line) || /^\{"time":.*"status":[123]\d\d,/.test(line),
  };
}

/** `onListening` gets the URL it prints once it serves. */
export function fakeApiSpec(o: Options, settings: DemoSettings, onListening: (url: string) => void): ServiceSpec {
  const { args, env } = fakeApiLaunch(o.fakeApiPort, o.trackingStepMs, settings);
  return {
    name: 'fake-api',
    ...nodeTsx('fake-shipping-api/main.ts', args),
    env,
    cwd: REPO_ROOT,
    stopSignal: 'SIGTERM',
    critical: true,
    ready: async (s) => onListening((await s.waitForLine(FAKE_API_LISTENING, 60_000))[1]!),
  };
}

export function workerSpec(n: number, settings: DemoSettings, address: string, apiUrl: string): ServiceSpec {
  return {
    name: `worker-${n}`,
    ...nodeTsx('worker/main.ts'),
    env: workerEnv(process.env, { ...settings, address, namespace: NAMESPACE, apiUrl }),
    cwd: REPO_ROOT,
    // The worker drains on SIGINT/SIGTERM and exits 0.
    stopSignal: 'SIGTERM',
    critical: false,
    ready: async (s) => {
      await s.waitForLine(/"msg":"worker started"/, 120_000);
    },
  };
}

function waitForHttp(url: string, service: Service, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (!service.alive()) return reject(new Error(`${service.name} exited during startup (${service.lastExit})`));
      const req = http.get(url, (res) => {
        res.resume();
        resolve();
      });
      req.setTimeout(2_000, () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        if (Date.now() > deadline) reject(new Error(`${service.name} did not answer on ${url} within ${timeoutMs / 1000} s`));
        else setTimeout(attempt, 300);
      });
    };
    attempt();
  });
}
