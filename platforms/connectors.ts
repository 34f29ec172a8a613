/**
 * Which connector delivers a shop's events, from SHOP_CONNECTORS or SHOP_CONNECTORS_FILE,
 * validated with zod (the format is in docs/shop-sync.md, "Connector configuration", and
 * docs/shop-platforms.md, "Configuration"). A shop without an entry has no connector: the caller
 * skips it. Errors name the setting and the JSON path (SHOP_CONNECTORS.acme.secrets[0]: ...) and
 * never echo a secret.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, duration, HTTP_TIMEOUT_BOUNDS, jsonPath, type DurationBounds } from '../config/settings';
import { CONTROL_CHARACTER } from '../shipping-api/contract';
import { WEBHOOK_DEFAULTS, WebhookSecrets } from './webhook/write-back';
import { hideSecret, resolveSecret, SettingError } from './connection/secrets';
import { buildShopifyConnector } from './shopify/build';
import { ShopifyConnectorConfig, type ShopifyConnector } from './shopify/settings';
import { buildWooCommerceConnector } from './woocommerce/build';
import { WooCommerceConnectorConfig, type WooCommerceConnector } from './woocommerce/settings';

export const DEFAULT_DELIVERY_WINDOW = '7d';
/** Longest shop id: it is part of every shipment's workflow id and every log line. */
const MAX_SHOP_ID_CHARS = 100;
/** Cap of the backoff between two attempts of a failed delivery: a shop that is back gets its events within this. */
export const DEFAULT_MAX_BACKOFF = '5m';
/** An event is retried for at least a second (tests and demos shorten it) and at most a year. */
const DELIVERY_WINDOW_BOUNDS: DurationBounds = { minMs: 1_000, maxMs: 365 * 86_400_000 };
/** A shop that is back gets its events within a day at the latest. */
const MAX_BACKOFF_BOUNDS: DurationBounds = { minMs: 1_000, maxMs: 86_400_000 };

const WebhookUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).refine((text) => {
  const url = new URL(text);
  return url.username === '' && url.password === '';
}, 'must not carry credentials (user:password@); the signature authenticates the sender');

const WebhookConnectorConfig = z.strictObject({
  type: z.literal('webhook'),
  url: WebhookUrl,
  secrets: WebhookSecrets,
  timeout: duration(`${WEBHOOK_DEFAULTS.timeoutMs}ms`, HTTP_TIMEOUT_BOUNDS),
});

const ConnectorsFile = z
  .object(
    {
      deliveryWindow: duration(DEFAULT_DELIVERY_WINDOW, DELIVERY_WINDOW_BOUNDS),
      maxBackoff: duration(DEFAULT_MAX_BACKOFF, MAX_BACKOFF_BOUNDS),
    },
    { error: 'must be a JSON object of shop ids to connectors' },
  )
  .catchall(z.unknown());

/** Each connector type's schema; a shop's `type` picks one, so its errors name that type's fields. */
const CONNECTOR_SCHEMAS = {
  webhook: WebhookConnectorConfig,
  shopify: ShopifyConnectorConfig,
  woocommerce: WooCommerceConnectorConfig,
} as const;
export type ShopConnectorType = keyof typeof CONNECTOR_SCHEMAS;
export const SHOP_CONNECTOR_TYPES = Object.keys(CONNECTOR_SCHEMAS) as ShopConnectorType[];

export interface WebhookConnector {
  type: 'webhook';
  shop: string;
  url: string;
  /** Not enumerable: JSON.stringify, console.log, pino and spreads of a connector omit it. */
  readonly secrets: readonly string[];
  timeoutMs: number;
}
export type ShopConnector = WebhookConnector | ShopifyConnector | WooCommerceConnector;
export type { ShopifyConnector, WooCommerceConnector };

export interface ShopConnectors {
  /** How long the caller keeps retrying one event before giving up on it. */
  deliveryWindowMs: number;
  /** Cap of the exponential backoff between two attempts of a failed delivery. */
  maxBackoffMs: number;
  /** Shop ids with a connector, sorted. */
  shops: string[];
  /** The shop's connector, or null when it has none (its events are not sent). */
  connectorFor(shop: string): ShopConnector | null;
  /** What is allowed but risky, for the worker to log at start (e.g. http:// to another host). */
  warnings: readonly string[];
}

/** Loopback hosts, where plain http:// does not cross a network. */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

type Env = Record<string, string | undefined>;

function missing(issue: z.core.$ZodIssue): boolean {
  return issue.code === 'invalid_type' && / received undefined$/.test(issue.message);
}

/** A JSON syntax error without the text around it: V8 quotes the input, which may hold a secret. */
function jsonSyntaxProblem(error: unknown): string {
  const position = /position (\d+)/.exec(error instanceof Error ? error.message : '');
  return `is not valid JSON${position ? ` (at character ${position[1]})` : ''}`;
}

/**
 * Reads SHOP_CONNECTORS_FILE or SHOP_CONNECTORS (not both). Neither set → no shop has a
 * connector. Throws ConfigError (from config/settings) naming each bad setting. The import, which
 * only asks which shops are on a platform, passes `readSecretFiles: false`.
 */
export function loadShopConnectors(env: Env = process.env, options: { readSecretFiles?: boolean } = {}): ShopConnectors {
  const file = env.SHOP_CONNECTORS_FILE || undefined;
  const inline = env.SHOP_CONNECTORS || undefined;
  if (file !== undefined && inline !== undefined) {
    throw new ConfigError([{ variable: 'SHOP_CONNECTORS', message: 'set either SHOP_CONNECTORS or SHOP_CONNECTORS_FILE, not both' }]);
  }
  const variable = file !== undefined ? 'SHOP_CONNECTORS_FILE' : 'SHOP_CONNECTORS';
  let text: string | undefined = inline;
  if (file !== undefined) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError([{ variable, message: `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` }]);
    }
  }
  const where = file !== undefined ? ` (${file})` : '';

  let json: unknown = {};
  if (text !== undefined) {
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new ConfigError([{ variable, message: `${jsonSyntaxProblem(e)}${where}` }]);
    }
  }
  const parsed = ConnectorsFile.safeParse(json);
  const problems = parsed.success ? [] : parsed.error.issues.flatMap((issue) => describeIssue(issue, [], variable, where));
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ConfigError(problems);

  const connectors = new Map<string, ShopConnector>();
  const warnings: string[] = [];
  for (const [shop, raw] of Object.entries(json)) {
    if (shop === 'deliveryWindow' || shop === 'maxBackoff') continue;
    const built = buildConnector(shop, raw, { variable, where, readSecretFiles: options.readSecretFiles ?? true });
    if ('problems' in built) problems.push(...built.problems);
    else {
      warnings.push(...built.warnings);
      connectors.set(shop, Object.freeze(built.connector));
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const { deliveryWindow, maxBackoff } = parsed.data;
  return {
    deliveryWindowMs: deliveryWindow,
    maxBackoffMs: maxBackoff,
    shops: [...connectors.keys()].sort(),
    connectorFor: (shop) => connectors.get(shop) ?? null,
    warnings,
  };
}

interface BuildContext {
  variable: string;
  where: string;
  readSecretFiles: boolean;
}

type Built = { connector: ShopConnector; warnings: string[] } | { problems: Array<{ variable: string; message: string }> };

/** One shop's entry: its type picks the schema; secrets given as files are read here. */
function buildConnector(shop: string, raw: unknown, context: BuildContext): Built {
  const { variable, where } = context;
  // The shop id names workflows, schedules and log lines: short, printable.
  if (shop.length > MAX_SHOP_ID_CHARS || CONTROL_CHARACTER.test(shop))
    return {
      problems: [
        {
          variable: `${variable}${jsonPath([shop.slice(0, 40)])}`,
          message: `a shop id must be 1 to ${MAX_SHOP_ID_CHARS} characters without control characters${where}`,
        },
      ],
    };
  const type = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !Object.hasOwn(CONNECTOR_SCHEMAS, type)) {
    const problem = typeof raw !== 'object' || raw === null || Array.isArray(raw) ? [] : ['type'];
    const message =
      problem.length === 0
        ? 'must be a connector object with a "type"'
        : `${type === undefined ? 'is required' : 'is not a connector type'}: use ${SHOP_CONNECTOR_TYPES.map((t) => `"${t}"`).join(', ')}`;
    return { problems: [{ variable: `${variable}${jsonPath([shop, ...problem])}`, message: `${message}${where}` }] };
  }
  const parsed = CONNECTOR_SCHEMAS[type as ShopConnectorType].safeParse(raw);
  if (!parsed.success) return { problems: parsed.error.issues.flatMap((issue) => describeIssue(issue, [shop], variable, where)) };
  const config = parsed.data;
  const secret = (field: string) => {
    const resolved = resolveSecret(config, field, context.readSecretFiles);
    if ('problem' in resolved) throw new SettingError(resolved.problem.field, resolved.problem.message);
    return resolved.value;
  };
  try {
    switch (config.type) {
      case 'webhook':
        return buildWebhookConnector(shop, config, variable);
      case 'shopify':
        return { connector: buildShopifyConnector(shop, config, secret, (hostname) => isLoopback(hostname)), warnings: [] };
      case 'woocommerce':
        return buildWooCommerceConnector(shop, config, secret, (hostname) => isLoopback(hostname));
    }
  } catch (e) {
    if (!(e instanceof SettingError)) throw e;
    return { problems: [{ variable: `${variable}${jsonPath([shop, e.field])}`, message: `${e.message}${where}` }] };
  }
}

function buildWebhookConnector(shop: string, config: z.infer<typeof WebhookConnectorConfig>, variable: string): Built {
  const url = new URL(config.url);
  const warnings =
    url.protocol === 'http:' && !isLoopback(url.hostname)
      ? [
          `${variable}${jsonPath([shop, 'url'])}: plain http:// to ${url.host}: shipment events (names, tracking) travel unencrypted; use https://`,
        ]
      : [];
  const connector = { type: config.type, shop, url: config.url, timeoutMs: config.timeout } as WebhookConnector;
  hideSecret(connector, 'secrets', Object.freeze([...config.secrets]));
  return { connector, warnings };
}

function describeIssue(issue: z.core.$ZodIssue, prefix: PropertyKey[], variable: string, where: string) {
  return issue.code === 'unrecognized_keys'
    ? issue.keys.map((key) => ({ variable: `${variable}${jsonPath([...prefix, ...issue.path, key])}`, message: `unknown field${where}` }))
    : [
        {
          variable: `${variable}${jsonPath([...prefix, ...issue.path])}`,
          message: `${missing(issue) ? 'is required' : issue.message}${where}`,
        },
      ];
}
