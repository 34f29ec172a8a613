/**
 * The demo settings `npm run dev` and `npm run cluster` share, defined once: the fake shipping
 * API's credentials, the demo's tracking poll interval, the ports they default to, and the
 * environment their workers get.
 */
import { DEV_API_KEY, DEV_API_TOKEN } from '../fake-shipping-api/server';
import { DEFAULT_TASK_QUEUE } from '../domain/shipment';

/** The credentials the fake shipping API expects unless told otherwise: its own definition. */
export { DEV_API_KEY, DEV_API_TOKEN };
/** Short, so a demo shipment moves while someone watches (the worker's own default is longer). */
export const DEMO_POLL_INTERVAL = '20s';
export const LOCAL_NAMESPACE = 'default';
export const DEFAULT_TEMPORAL_PORT = 7233;
export const DEFAULT_FAKE_API_PORT = 4010;
export const DEFAULT_TRACKING_STEP_MS = 15_000;
/** `npm run dev`'s: slow enough for a person to follow a shipment through tracking. */
export const DEMO_TRACKING_STEP_MS = 60_000;

/** What the fake shipping API prints once it serves, with its base URL. */
export const FAKE_API_LISTENING = /Fake shipping API listening on (\S+)/;

/** The shell's settings for the workers, with the demo's defaults where it has none. */
export interface DemoSettings {
  apiKey: string;
  apiToken: string;
  pollInterval: string;
  taskQueue: string;
}

export function demoSettings(env: NodeJS.ProcessEnv = process.env): DemoSettings {
  return {
    apiKey: env.SHIPPING_API_KEY || DEV_API_KEY,
    apiToken: env.SHIPPING_API_TOKEN || DEV_API_TOKEN,
    pollInterval: env.TRACKING_POLL_INTERVAL || DEMO_POLL_INTERVAL,
    taskQueue: env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
  };
}

/** A worker's environment: `base`, then where Temporal and the shipping API are. */
export function workerEnv(
  base: NodeJS.ProcessEnv,
  s: DemoSettings & { address: string; namespace: string; apiUrl: string },
): NodeJS.ProcessEnv {
  return {
    ...base,
    TEMPORAL_ADDRESS: s.address,
    TEMPORAL_NAMESPACE: s.namespace,
    TEMPORAL_TASK_QUEUE: s.taskQueue,
    SHIPPING_API_BASE_URL: s.apiUrl,
    SHIPPING_API_KEY: s.apiKey,
    SHIPPING_API_TOKEN: s.apiToken,
    TRACKING_POLL_INTERVAL: s.pollInterval,
    // A version of a Worker Deployment, as in production; current at once, so work flows.
    WORKER_VERSIONING: base.WORKER_VERSIONING || 'on',
    WORKER_BECOME_CURRENT: base.WORKER_BECOME_CURRENT || 'always',
  };
}

/** The fake API's command-line arguments and environment (its credentials stay off the command line). */
export function fakeApiLaunch(port: number, trackingStepMs: number | string, s: DemoSettings) {
  return {
    args: ['--port', String(port), '--tracking-step-ms', String(trackingStepMs)],
    env: { ...process.env, SHIPPING_API_KEY: s.apiKey, SHIPPING_API_TOKEN: s.apiToken },
  };
}

/** The credentials for the banner's export line: only the fake's dev ones are printed. */
export function credentialExports(s: DemoSettings): string[] {
  return [
    `SHIPPING_API_KEY=${s.apiKey === DEV_API_KEY ? s.apiKey : '<your key>'}`,
    `SHIPPING_API_TOKEN=${s.apiToken === DEV_API_TOKEN ? s.apiToken : '<your token>'}`,
  ];
}

/** `node --import tsx <file>`: one process, so a stop signal reaches it exactly once. */
export function nodeTsx(file: string, args: string[] = []): { command: string; args: string[] } {
  return { command: process.execPath, args: ['--import', 'tsx', file, ...args] };
}
