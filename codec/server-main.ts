/**
 * `npm run codec-server -- [--host h] [--port n] [--insecure-no-auth]`: the remote codec for the
 * Temporal Web UI and CLI. Exit codes: 0 normal/--help, 1 start-up failure, 2 bad flags or settings.
 */
import { parseArgs } from 'node:util';
import { CODEC_SERVER_DEFAULTS, ConfigError, loadCodecServerSettings } from '../config/settings';
import { closeOnSignals } from '../local-http/local-server';
import { createLogger } from '../logging/logger';
import { startCodecServer } from './server';

const HELP = `Usage: npm run codec-server -- [options]

Remote payload codec for the Temporal Web UI and CLI: POST /encode and POST /decode with
{"payloads":[{"metadata":{...base64},"data":"base64"}]}. Decrypts what the worker, the import
and the CLI encrypted with PAYLOAD_ENCRYPTION_KEYS, so an operator can read shipments in the
Web UI while Temporal only stores ciphertext. Every request needs "Authorization: Bearer
<CODEC_SERVER_TOKEN>"; browsers are answered only from CODEC_SERVER_CORS_ORIGIN.

Options:
  --host <host>        interface to listen on (default ${CODEC_SERVER_DEFAULTS.host})
  --port <n>           TCP port, 0 = any free port (default ${CODEC_SERVER_DEFAULTS.port})
  --insecure-no-auth   accept requests without the token; only on a loopback --host, for
                       npm run dev (the dev server's Web UI cannot send a token)
  -h, --help           this text

Environment:
  PAYLOAD_ENCRYPTION_KEYS      keyId=base64-32-bytes[,keyId=...], first = active (required)
  PAYLOAD_ENCRYPTION_KEYS_FILE the same, read from a file (instead of the variable)
  PAYLOAD_ENCRYPTION_KEY_ID    the active key, if not the first
  CODEC_SERVER_TOKEN           bearer token clients must send, >= 16 characters (required
                               unless --insecure-no-auth); or CODEC_SERVER_TOKEN_FILE
  CODEC_SERVER_CORS_ORIGIN     Web UI origin(s), comma-separated (default ${CODEC_SERVER_DEFAULTS.corsOrigins.join(',')})
  LOG_LEVEL                    info by default

Wire it into the Web UI: temporal server start-dev --ui-codec-endpoint http://127.0.0.1:<port>
(see docs/production.md, "Encrypted payloads and the codec server").
`;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        host: { type: 'string', default: CODEC_SERVER_DEFAULTS.host },
        port: { type: 'string', default: String(CODEC_SERVER_DEFAULTS.port) },
        'insecure-no-auth': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\nRun with --help for the options.\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) {
    process.stderr.write(`--port must be a port number, got "${values.port}"\n`);
    return 2;
  }
  const noAuth = values['insecure-no-auth'];
  if (noAuth && !LOOPBACK.has(values.host)) {
    process.stderr.write(`--insecure-no-auth is only allowed on a loopback --host (127.0.0.1, ::1, localhost), not "${values.host}"\n`);
    return 2;
  }
  let settings;
  try {
    settings = loadCodecServerSettings(process.env, { requireToken: !noAuth });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n\nRun with --help for the settings.\n`);
      return 2;
    }
    throw err;
  }
  const logger = createLogger(process.env.LOG_LEVEL || 'info');
  const server = await startCodecServer({ ...settings, token: noAuth ? undefined : settings.token, host: values.host, port, logger });
  logger.info(
    {
      url: server.url,
      corsOrigins: settings.corsOrigins,
      activeKeyId: settings.encryption.activeKeyId,
      keyIds: settings.encryption.keys.map((k) => k.id),
      auth: noAuth ? 'none (--insecure-no-auth)' : 'bearer token',
    },
    'codec server started',
  );
  // A plain line too, for people and for npm run dev, which waits for it.
  process.stdout.write(`Codec server listening on ${server.url}\n`);
  closeOnSignals('codec-server', () => server.close());
  return -1; // keep running
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`codec server failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
