/**
 * `npm run dev` — the whole product on one machine: a Temporal dev server with persistent SQLite
 * state, the fake shipping API (unless SHIPPING_API_BASE_URL points elsewhere) and the worker,
 * as child processes with prefixed output. Ctrl-C stops them all; if one dies, the rest are
 * stopped and this exits non-zero naming it.
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { portProblem } from './local-server';
import { connectWhenReady } from './temporal-ready';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { TypedSearchAttributes } from '@temporalio/common';
import { parseCsv } from '../client/import/csv';
import { connectionVariablesIn, localServerEnv } from '../config/temporal-connection';
import { loadPayloadEncryptionSettings } from '../config/settings';
import { DEFAULT_TASK_QUEUE, SEARCH_ATTRIBUTE_KEYS } from '../workflows/definitions';
import { ensureSearchAttributes } from './search-attributes';
import { findTemporalCli, REPO_ROOT } from './temporal-cli';

const NAMESPACE = 'default';
const DEFAULTS = {
  temporalPort: 7233,
  uiPort: 8233,
  fakeApiPort: 4010,
  shopReceiverPort: 8090,
  codecPort: 8888,
  dataDir: path.join(REPO_ROOT, '.data'),
  trackingStepMs: 15_000,
};
const DEV_API_KEY = 'dev-api-key';
const DEV_API_TOKEN = 'dev-api-token';
const DEMO_POLL_INTERVAL = '20s';
const STOP_TIMEOUT_MS = 15_000;

const HELP = `Usage: npm run dev [-- options]

Runs the shipping worker locally with everything it needs, as child processes:
  temporal   Temporal dev server (\`temporal server start-dev\`) with this project's search
             attributes, state kept in <data-dir>/temporal.db, Web UI on --ui-port
  fake-api   the fake shipping API (\`npm run fake-api\`), only if SHIPPING_API_BASE_URL is unset
  shop       the reference shop receiver (\`npm run shop-receiver\`) with a page of the orders, and
             the example files' shops wired to it (signed webhooks, a fresh secret per run);
             only if SHOP_CONNECTORS and SHOP_CONNECTORS_FILE are unset
  codec      the codec server (\`npm run codec-server\`), only if PAYLOAD_ENCRYPTION_KEYS(_FILE) is
             set: the Web UI decrypts payloads through it (loopback, no token: the dev
             server's Web UI cannot send one)
  worker     the worker (\`npm run worker\`), connected to all of them

Ctrl-C stops all of them. If one exits on its own, the others are stopped too and npm run dev
exits non-zero naming it.

Options:
  --temporal-port <n>     Temporal gRPC port (default ${DEFAULTS.temporalPort})
  --ui-port <n>           Temporal Web UI port (default ${DEFAULTS.uiPort})
  --fake-api-port <n>     fake shipping API port (default ${DEFAULTS.fakeApiPort})
  --shop-port <n>         shop receiver port (default ${DEFAULTS.shopReceiverPort})
  --codec-port <n>        codec server port, with encryption keys (default ${DEFAULTS.codecPort})
  --data-dir <dir>        where the Temporal SQLite file lives (default .data/); delete it to reset
  --tracking-step-ms <n>  fake API: time between tracking checkpoints (default ${DEFAULTS.trackingStepMs})
  -h, --help              this text

Environment:
  TEMPORAL_CLI_PATH       Temporal CLI to use (else \`temporal\` on PATH, else .tools/bin/temporal,
                          else built with Go into .tools/bin; see docs/dev-server.md)
  SHIPPING_API_BASE_URL   use this shipping API instead of starting the fake one
  SHIPPING_API_KEY        API key for the shipping API (default "${DEV_API_KEY}", as the fake expects)
  SHIPPING_API_TOKEN      API token for the shipping API (default "${DEV_API_TOKEN}")
  TRACKING_POLL_INTERVAL  worker's tracking poll interval (default ${DEMO_POLL_INTERVAL} here, for the demo)
  SHOP_CONNECTORS(_FILE)  your own shop connectors for the worker; then no shop receiver is started
  TEMPORAL_TASK_QUEUE     task queue of the worker (default ${DEFAULT_TASK_QUEUE})
  LOG_LEVEL               worker log level (passed through)
  PAYLOAD_ENCRYPTION_KEYS keyId=base64-32-bytes,...: encrypt payloads (worker) and start the codec
                          server; also PAYLOAD_ENCRYPTION_KEYS_FILE, PAYLOAD_ENCRYPTION_KEY_ID
The worker always gets TEMPORAL_ADDRESS=localhost:<temporal-port> and TEMPORAL_NAMESPACE=${NAMESPACE},
and none of the shell's other Temporal connection settings (TEMPORAL_API_KEY, TEMPORAL_TLS*,
TEMPORAL_PROFILE, the profile file).
`;

// ---------------------------------------------------------------- output

const useColor = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: number, s: string) => (useColor ? `\u001b[${code}m${s}\u001b[0m` : s);
const PREFIX_COLORS: Record<string, number> = { temporal: 35, 'fake-api': 36, shop: 33, worker: 32, codec: 34 };
const say = (msg: string) => process.stdout.write(`${paint(1, '[dev]')} ${msg}\n`);
const warn = (msg: string) => process.stderr.write(`${paint(33, '[dev]')} ${msg}\n`);

// ---------------------------------------------------------------- children

interface Child {
  name: string;
  proc: ChildProcess;
  /** Stop by signalling the whole process group (npm -> sh -> ...) rather than the process. */
  signalGroupOnStop: boolean;
  exited: Promise<void>;
  running: boolean;
  /** Listeners for each output line (stdout and stderr), for readiness checks. */
  onLine: Array<(line: string) => void>;
}

const children: Child[] = [];
let shuttingDown = false;

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exit code ${code}`;
}

interface Launch {
  command: string;
  args: string[];
  /** What the user would type, for messages. */
  display: string;
  signalGroupOnStop: boolean;
}

/**
 * How to run npm script `name` with `extraArgs`. A plain `tsx <file> [args]` script runs as
 * `node --import tsx <file> [args]`: the same thing in ONE process, so the SIGINT we send on
 * Ctrl-C reaches it exactly once. (Via `npm run`, dash does not forward signals, and tsx's
 * own relay re-sends SIGINT, then SIGKILLs its child, when the child does not acknowledge the
 * signal within 30 ms — a busy worker would be killed mid-drain.) Anything fancier runs through
 * `npm run` and is stopped by signalling its whole process group.
 */
function launchScript(scripts: Record<string, string>, name: string, extraArgs: string[]): Launch {
  const script = (scripts[name] ?? '').trim();
  const tokens = script.split(/\s+/);
  if (/^[\w./=:@-]+(\s+[\w./=:@-]+)*$/.test(script) && tokens[0] === 'tsx' && /\.[cm]?[tj]s$/.test(tokens[1] ?? '')) {
    return {
      command: process.execPath,
      args: ['--import', 'tsx', ...tokens.slice(1), ...extraArgs],
      display: `npm run ${name}${extraArgs.length ? ` -- ${extraArgs.join(' ')}` : ''} (as node --import tsx ${tokens.slice(1).join(' ')})`,
      signalGroupOnStop: false,
    };
  }
  return {
    command: 'npm',
    args: ['run', '--silent', name, ...(extraArgs.length ? ['--', ...extraArgs] : [])],
    display: `npm run ${name}${extraArgs.length ? ` -- ${extraArgs.join(' ')}` : ''}`,
    signalGroupOnStop: true,
  };
}

function startChild(name: string, launch: Launch, env: NodeJS.ProcessEnv): Child {
  const { command, args } = launch;
  // detached: each child leads its own process group, so a terminal Ctrl-C reaches only us and
  // we stop the children in order (worker first, Temporal last); a group can be killed whole
  // (npm -> sh -> tsx -> node) if it does not stop.
  const proc = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const prefix = paint(PREFIX_COLORS[name] ?? 37, `[${name}]`);
  const child: Child = {
    name,
    proc,
    signalGroupOnStop: launch.signalGroupOnStop,
    running: true,
    onLine: [],
    exited: Promise.resolve(),
  };
  child.exited = new Promise<void>((resolve) => {
    let done = false;
    const finish = (why: string) => {
      if (done) return;
      done = true;
      child.running = false;
      resolve();
      if (!shuttingDown) void shutdown(1, `${name} (${launch.display}) ${why}; stopping the others.`);
    };
    proc.on('exit', (code, signal) => finish(`exited unexpectedly (${describeExit(code, signal)})`));
    proc.on('error', (err) => finish(`could not be started: ${err.message}`));
  });
  const pipe = (stream: NodeJS.ReadableStream | null, out: NodeJS.WriteStream) => {
    if (!stream) return;
    readline.createInterface({ input: stream }).on('line', (line) => {
      for (const listener of child.onLine) listener(line);
      // The dev server logs a burst of connection warnings while it stops; they mean nothing.
      if (shuttingDown && name === 'temporal' && !/level=(ERROR|FATAL)/.test(line)) return;
      out.write(`${prefix} ${line}\n`);
    });
  };
  pipe(proc.stdout, process.stdout);
  pipe(proc.stderr, process.stderr);
  children.push(child);
  return child;
}

function signalGroup(child: Child, signal: NodeJS.Signals): void {
  if (!child.running || child.proc.pid === undefined) return;
  try {
    process.kill(-child.proc.pid, signal);
  } catch {
    try {
      child.proc.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

async function stopChild(child: Child): Promise<void> {
  if (!child.running) return;
  if (child.signalGroupOnStop) {
    signalGroup(child, 'SIGINT');
  } else {
    try {
      child.proc.kill('SIGINT');
    } catch {
      /* already gone */
    }
  }
  const stopped = await Promise.race([child.exited.then(() => true), delay(STOP_TIMEOUT_MS).then(() => false)]);
  if (!stopped) {
    warn(`${child.name} did not stop within ${STOP_TIMEOUT_MS / 1000} s; killing it`);
    signalGroup(child, 'SIGKILL');
    await Promise.race([child.exited, delay(2_000)]);
  }
}

async function shutdown(code: number, reason?: string): Promise<never> {
  if (!shuttingDown) {
    shuttingDown = true;
    if (reason) (code === 0 ? say : warn)(reason);
    // Reverse start order: the worker drains while Temporal and the API are still there.
    for (const child of [...children].reverse()) await stopChild(child);
    if (code === 0) say('All stopped.');
    process.exit(code);
  }
  return new Promise<never>(() => undefined); // already shutting down: the first call exits
}

process.on('exit', () => {
  // Last resort (e.g. an uncaught error): never leave a server behind.
  for (const child of children) signalGroup(child, 'SIGKILL');
});

let firstInterruptAt = 0;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (firstInterruptAt > 0) {
      // tsx (under `npm run dev`) may relay the same Ctrl-C again a moment later: not a second press.
      if (Date.now() - firstInterruptAt < 1_000) return;
      warn('Second interrupt: killing everything now.');
      for (const child of children) signalGroup(child, 'SIGKILL');
      process.exit(130);
    }
    firstInterruptAt = Date.now();
    if (signal === 'SIGINT') process.stdout.write('\n');
    void shutdown(0, `Got ${signal}; stopping (Ctrl-C again to kill).`);
  });
}

// ---------------------------------------------------------------- preflight

function readPackageScripts(): Record<string, string> {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  return pkg.scripts ?? {};
}

/** Problems with an npm script the dev environment runs: missing, or naming a missing .ts file. */
function checkScript(scripts: Record<string, string>, script: string, expectedFile: string): string[] {
  const command = scripts[script];
  if (!command) {
    return [`package.json has no "${script}" script (expected to run ${expectedFile}; is it written yet?)`];
  }
  const problems: string[] = [];
  for (const file of command.match(/[\w./-]+\.[cm]?[tj]s\b/g) ?? []) {
    if (!fs.existsSync(path.join(REPO_ROOT, file))) problems.push(`npm run ${script} runs "${command}", but ${file} does not exist`);
  }
  return problems;
}

async function assertPortFree(port: number, what: string, flag: string): Promise<void> {
  const problem = await portProblem(port, what, flag, ' (is another `npm run dev` or Temporal server running?)');
  if (problem) throw new Error(problem);
}

function parsePort(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${flag} must be a port number, got "${value}"`);
  return n;
}

// ---------------------------------------------------------------- Temporal


/** The shops of the example order files, so the demo's every order reaches the shop page. */
function exampleShops(): string[] {
  const dir = path.join(REPO_ROOT, 'examples');
  const shops = new Set<string>();
  for (const line of fs.readFileSync(path.join(dir, 'orders.ndjson'), 'utf8').split('\n')) {
    try {
      const shop = (JSON.parse(line) as { shop?: unknown }).shop;
      if (typeof shop === 'string' && shop !== '') shops.add(shop);
    } catch {
      // the examples hold broken records on purpose
    }
  }
  const [header, ...rows] = parseCsv(fs.readFileSync(path.join(dir, 'orders.csv'), 'utf8'));
  const column = header?.fields.indexOf('shop') ?? -1;
  for (const row of rows) {
    const shop = row.fields[column];
    if (column >= 0 && shop) shops.add(shop);
  }
  return [...shops].sort();
}

// ---------------------------------------------------------------- fake API

/** Resolves on the first output line matching `pattern`, or with undefined after `timeoutMs`. */
function waitForLine(child: Child, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    child.onLine.push((line) => {
      const match = pattern.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
  });
}

function waitForFakeApi(child: Child, timeoutMs = 60_000): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`fake-api did not print "Fake shipping API listening on <url>" within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    child.onLine.push((line) => {
      const match = /Fake shipping API listening on (\S+)/.exec(line);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void child.exited.then(() => {
      clearTimeout(timer);
      reject(new Error('fake-api exited during startup'));
    });
  });
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'temporal-port': { type: 'string' },
      'ui-port': { type: 'string' },
      'fake-api-port': { type: 'string' },
      'shop-port': { type: 'string' },
      'codec-port': { type: 'string' },
      'data-dir': { type: 'string' },
      'tracking-step-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const temporalPort = parsePort(values['temporal-port'], DEFAULTS.temporalPort, '--temporal-port');
  const uiPort = parsePort(values['ui-port'], DEFAULTS.uiPort, '--ui-port');
  const fakeApiPort = parsePort(values['fake-api-port'], DEFAULTS.fakeApiPort, '--fake-api-port');
  const shopPort = parsePort(values['shop-port'], DEFAULTS.shopReceiverPort, '--shop-port');
  const ownConnectors = Boolean(process.env.SHOP_CONNECTORS || process.env.SHOP_CONNECTORS_FILE);
  const codecPort = parsePort(values['codec-port'], DEFAULTS.codecPort, '--codec-port');
  // Bad keys stop us here, before anything starts (the error names the variable, never the key).
  const encryption = loadPayloadEncryptionSettings(process.env);
  const dataDir = path.resolve(values['data-dir'] ?? DEFAULTS.dataDir);
  const trackingStepMs = values['tracking-step-ms'] ?? String(DEFAULTS.trackingStepMs);
  if (!/^\d+$/.test(trackingStepMs)) throw new Error(`--tracking-step-ms must be a number of milliseconds, got "${trackingStepMs}"`);

  const externalApi = process.env.SHIPPING_API_BASE_URL;
  const apiKey = process.env.SHIPPING_API_KEY || DEV_API_KEY;
  const apiToken = process.env.SHIPPING_API_TOKEN || DEV_API_TOKEN;

  // Everything that can be checked before starting anything.
  const scripts = readPackageScripts();
  const problems = [
    ...checkScript(scripts, 'worker', 'worker/main.ts'),
    ...(externalApi ? [] : checkScript(scripts, 'fake-api', 'fake-shipping-api/main.ts')),
    ...(ownConnectors ? [] : checkScript(scripts, 'shop-receiver', 'shop-receiver/main.ts')),
    ...(encryption ? checkScript(scripts, 'codec-server', 'codec/server-main.ts') : []),
  ];
  if (problems.length > 0) {
    throw new Error(`Cannot start the dev environment:\n  - ${problems.join('\n  - ')}`);
  }
  await assertPortFree(temporalPort, 'Temporal gRPC', '--temporal-port');
  await assertPortFree(uiPort, 'Temporal Web UI', '--ui-port');
  if (!externalApi) await assertPortFree(fakeApiPort, 'fake shipping API', '--fake-api-port');
  if (!ownConnectors) await assertPortFree(shopPort, 'shop receiver', '--shop-port');
  if (encryption) await assertPortFree(codecPort, 'codec server', '--codec-port');

  const cli = await findTemporalCli({ build: true, log: say });
  if (!cli) {
    throw new Error(
      'No Temporal CLI: set TEMPORAL_CLI_PATH, put `temporal` on PATH, or install Go so it can be built ' +
        'into .tools/bin (see `npm run temporal:cli -- --help` and docs/dev-server.md).',
    );
  }

  // 0. Codec server, first: the Web UI is told its address when Temporal starts.
  const codecUrl = encryption ? `http://127.0.0.1:${codecPort}` : undefined;
  if (encryption) {
    say(`Payload encryption on (active key "${encryption.activeKeyId}"): starting the codec server on port ${codecPort}`);
    const codec = startChild('codec', launchScript(scripts, 'codec-server', ['--port', String(codecPort), '--insecure-no-auth']), {
      ...process.env,
      CODEC_SERVER_CORS_ORIGIN: `http://localhost:${uiPort},http://127.0.0.1:${uiPort}`,
    });
    if (!(await waitForLine(codec, /Codec server listening on/, 60_000))) throw new Error('codec server did not start within 60 s');
  }

  // 1. Temporal
  fs.mkdirSync(dataDir, { recursive: true });
  const dbFile = path.join(dataDir, 'temporal.db');
  const address = `localhost:${temporalPort}`;
  const temporalArgs = [
    'server',
    'start-dev',
    '--db-filename',
    dbFile,
    '--port',
    String(temporalPort),
    '--ui-port',
    String(uiPort),
    '--namespace',
    NAMESPACE,
    '--log-level',
    'warn',
    ...(codecUrl ? ['--ui-codec-endpoint', codecUrl] : []),
    ...SEARCH_ATTRIBUTE_KEYS.flatMap((key) => ['--search-attribute', `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`]),
  ];
  say(`Starting Temporal dev server (${path.relative(process.cwd(), dbFile) || dbFile})`);
  const temporal = startChild(
    'temporal',
    { command: cli, args: temporalArgs, display: `${cli} ${temporalArgs.join(' ')}`, signalGroupOnStop: false },
    process.env,
  );
  const connection = await connectWhenReady(address, { namespace: NAMESPACE, alive: () => temporal.running, what: 'Temporal dev server', timeoutMs: 90_000 });
  try {
    // start-dev --search-attribute registers attributes only when it creates the database (CLI
    // v1.5.1): on an existing .data/temporal.db, ones added to the code since would be missing.
    const registered = await ensureSearchAttributes(
      connection,
      NAMESPACE,
      `Delete ${dataDir} to start fresh (this drops the local workflow history).`,
    );
    if (registered.length > 0) say(`Registered search attributes missing from the existing database: ${registered.join(', ')}`);
  } finally {
    await connection.close();
  }
  say(`Temporal is up at ${address}`);

  // 2. Fake shipping API
  let apiUrl: string;
  if (externalApi) {
    apiUrl = externalApi;
    say(`Using the shipping API at ${apiUrl} (SHIPPING_API_BASE_URL); not starting the fake one`);
  } else {
    say(`Starting the fake shipping API on port ${fakeApiPort}`);
    const fakeApi = startChild(
      'fake-api',
      launchScript(scripts, 'fake-api', ['--port', String(fakeApiPort), '--tracking-step-ms', trackingStepMs]),
      { ...process.env, SHIPPING_API_KEY: apiKey, SHIPPING_API_TOKEN: apiToken },
    );
    apiUrl = await waitForFakeApi(fakeApi);
  }

  // 3. The shop: a reference receiver, and a connector per example shop pointing at it.
  let shopConnectors: string | undefined;
  let shopUrl: string | undefined;
  if (ownConnectors) {
    say('Using your SHOP_CONNECTORS(_FILE) for the worker; not starting the shop receiver');
  } else {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    say(`Starting the shop receiver on port ${shopPort}`);
    const receiver = startChild('shop', launchScript(scripts, 'shop-receiver', ['--port', String(shopPort)]), {
      ...process.env,
      SHOP_RECEIVER_SECRETS: secret, // in the environment, not on the command line (ps)
    });
    const listening = await waitForLine(receiver, /Shop receiver listening on (\S+)/, 60_000);
    if (!listening) throw new Error('the shop receiver did not print "Shop receiver listening on <url>" within 60 s');
    shopUrl = listening[1]!;
    const shops = exampleShops();
    shopConnectors = JSON.stringify({
      // Short, so a shop taken down in the demo catches up within seconds of coming back.
      maxBackoff: '10s',
      ...Object.fromEntries(shops.map((shop) => [shop, { type: 'webhook', url: `${shopUrl}/webhooks/${encodeURIComponent(shop)}`, secrets: [secret] }])),
    });
    say(`Shops wired to the receiver: ${shops.join(', ')}`);
  }

  // 4. Worker
  const taskQueue = process.env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE;
  const pollInterval = process.env.TRACKING_POLL_INTERVAL || DEMO_POLL_INTERVAL;
  say('Starting the worker');
  const worker = startChild('worker', launchScript(scripts, 'worker', []), {
    ...localServerEnv(process.env),
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: NAMESPACE,
    TEMPORAL_TASK_QUEUE: taskQueue,
    SHIPPING_API_BASE_URL: apiUrl,
    SHIPPING_API_KEY: apiKey,
    SHIPPING_API_TOKEN: apiToken,
    TRACKING_POLL_INTERVAL: pollInterval,
    ...(shopConnectors ? { SHOP_CONNECTORS: shopConnectors } : {}),
  });
  // The SDK logs "Worker state changed ... RUNNING" once it polls (after bundling the workflows).
  // If the worker dies first, the exit handler stops everything and we never get past this.
  const running = await waitForLine(worker, /RUNNING/, 60_000);
  if (!running) warn('The worker has not said it is RUNNING after 60 s; check its output above.');

  // What the import and CLI need in the other terminal. Only the fake's dev credentials are
  // printed; a real key or token stays a placeholder.
  const exports = [
    ...(temporalPort === DEFAULTS.temporalPort ? [] : [`TEMPORAL_ADDRESS=${address}`]),
    `SHIPPING_API_BASE_URL=${apiUrl}`,
    `SHIPPING_API_KEY=${apiKey === DEV_API_KEY ? apiKey : '<your key>'}`,
    `SHIPPING_API_TOKEN=${apiToken === DEV_API_TOKEN ? apiToken : '<your token>'}`,
    // Key material is never printed (a key file's path is not secret): the other terminal needs the same keys.
    ...(!encryption
      ? []
      : process.env.PAYLOAD_ENCRYPTION_KEYS_FILE
        ? [`PAYLOAD_ENCRYPTION_KEYS_FILE=${path.resolve(process.env.PAYLOAD_ENCRYPTION_KEYS_FILE)}`]
        : ['PAYLOAD_ENCRYPTION_KEYS=<the same keys as here>']),
  ];
  // The import and CLI in the other terminal read the same shell: say when it points elsewhere.
  const same: Record<string, string> = { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: NAMESPACE };
  const elsewhere = connectionVariablesIn(process.env).filter((k) => process.env[k] !== same[k]);
  if (elsewhere.length) warn(`This shell sets ${elsewhere.join(', ')}: unset them where you run the import and CLI against this dev server.`);
  const line = '─'.repeat(72);
  process.stdout.write(
    [
      '',
      line,
      paint(1, ' Shipping worker dev environment is running'),
      '',
      `   Temporal Web UI   http://localhost:${uiPort}`,
      `   Temporal address  ${address}  (namespace ${NAMESPACE}, task queue ${taskQueue})`,
      `   Shipping API      ${apiUrl}${externalApi ? '' : `  (fake; tracking advances every ${Number(trackingStepMs) / 1000} s)`}`,
      `   Tracking polls    every ${pollInterval}`,
      ...(shopUrl ? [`   Shop page         ${shopUrl}  (what the shops were told: label link, tracking, outcome)`] : []),
      `   Payloads          ${codecUrl ? `encrypted (key "${encryption!.activeKeyId}"); the Web UI decrypts through ${codecUrl}` : 'not encrypted (set PAYLOAD_ENCRYPTION_KEYS to encrypt)'}`,
      `   Data              ${dbFile}  (stop, then delete ${dataDir} to start fresh)`,
      '',
      ' Next steps, in another terminal:',
      `   export ${exports.join(' ')}`,
      '   npm run import -- examples/orders.ndjson --rejects /tmp/rejects.ndjson',
      '   npm run cli -- list',
      '   npm run cli -- status <shop> <orderId>',
      '   npm run cli -- resubmit lyon-ceramics LC-5531 examples/corrected-label.json',
      ...(shopUrl ? [`   curl -s -XPOST ${shopUrl}/__admin/faults -d '{"downForMs":60000}'   # take the shop down for a minute`] : []),
      '',
      ' Ctrl-C stops everything.',
      line,
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  void shutdown(1, err instanceof Error ? err.message : String(err));
});
