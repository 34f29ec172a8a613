/**
 * GraphQL calls to one Shopify store through the official `@shopify/admin-api-client` (its own
 * retries off: ours rule). Its fetch is ours: the call goes to the connector's origin and is
 * bounded in time and size. Each call reserves its cost in the store's
 * bucket first; a THROTTLED answer (an HTTP 200 with that code, or a 429) waits what the bucket
 * says and is sent again; every other failure ends the event's delivery as the shared rules say.
 */
import { createAdminApiClient, type AdminApiClient } from '@shopify/admin-api-client';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { excerpt, jsonOf, platformRequest } from '../connection/http';
import { failedAnswer, scrubbingStops, StopDelivery, unexpectedAnswer } from '../connection/result';
import { storeHold, type StoreHold } from '../connection/store-hold';
import type { ShopifyConnector } from './settings';
import { BudgetWait, CostBucket, MAX_BUCKET_WAIT_MS, QueryCost, type ThrottleStatus } from './cost-bucket';
import { clampWaitMs, readRetryAfterMs } from '../../shipping-api/retry-after';
import { platformWarning } from '../connection/warning';
import { ShopifyToken } from './token';

/** A GraphQL document with the zod schema of its `data` and the cost to reserve before the first answer tells. */
export interface Operation<T> {
  name: string;
  document: string;
  data: z.ZodType<T>;
  estimatedCost: number;
}

const Extensions = z.object({ cost: z.unknown().optional() }).loose();
const GraphQLError = z.object({ message: z.string(), extensions: z.object({ code: z.string().optional() }).loose().optional() }).loose();

/** Throttled answers in a row before the attempt gives the wait to Temporal's retry instead. */
const MAX_THROTTLED_IN_ATTEMPT = 3;

export class ShopifyClient {
  readonly bucket: CostBucket;
  /** A Retry-After of the store's HTTP 429/503 (THROTTLED answers are the bucket's). */
  private readonly hold: StoreHold;
  private readonly token: ShopifyToken;
  /** The admin client of the current token: its headers win over a call's, so one client per token. */
  private current: { token: string; client: AdminApiClient } | null = null;
  /** The store's requested cost of each operation, learned from its answers. */
  private readonly costs = new Map<string, number>();
  /** A warning about the store's absurd cost figures is logged once until it sends sane ones again. */
  private warnedOfCost = false;

  constructor(
    private readonly connector: ShopifyConnector,
    private readonly now: () => number = Date.now,
  ) {
    this.bucket = new CostBucket(now);
    this.hold = storeHold(`shopify ${connector.adminOrigin} ${connector.storeDomain}`, now);
    this.token = new ShopifyToken(connector, now);
  }

  private clientFor(token: string): AdminApiClient {
    if (this.current?.token !== token) {
      const client = createAdminApiClient({
        storeDomain: this.connector.storeDomain,
        apiVersion: this.connector.apiVersion,
        accessToken: token,
        retries: 0, // ours are the retry rules
        customFetchApi: (url, init) => this.fetch(String(url), init ?? {}),
        logger: () => undefined, // its only log is a version warning; the version is pinned on purpose
      });
      this.current = { token, client };
    }
    return this.current.client;
  }

  /** `onCost` hears each answer's actual cost (the requested one when Shopify gives none), for callers that pace themselves. */
  async call<T>(
    operation: Operation<T>,
    variables: Record<string, unknown>,
    signal: AbortSignal,
    maxWaitMs: number,
    onCost?: (points: number) => void,
  ): Promise<T> {
    return scrubbingStops(
      () => this.knownSecrets(),
      () => this.send(operation, variables, signal, maxWaitMs, onCost),
    );
  }

  /** The store's secrets as they travel: the configured credential, the token in use, the webhook keys. */
  knownSecrets(): string[] {
    const credentials = this.connector.credentials;
    const configured = credentials.kind === 'token' ? [credentials.accessToken] : [credentials.clientSecret];
    return [...configured, ...(this.current ? [this.current.token] : []), ...this.connector.webhookSecrets];
  }

  private async send<T>(
    operation: Operation<T>,
    variables: Record<string, unknown>,
    signal: AbortSignal,
    maxWaitMs: number,
    onCost?: (points: number) => void,
  ): Promise<T> {
    for (let throttled = 0, refreshed = false; ;) {
      await this.hold.pass(maxWaitMs, signal);
      const estimate = this.costs.get(operation.name) ?? operation.estimatedCost;
      let release: () => void;
      try {
        release = await this.bucket.take(estimate, maxWaitMs, signal);
      } catch (err) {
        if (err instanceof BudgetWait) throw this.budgetWait(err.ms);
        throw err;
      }
      const token = await this.token.get(signal).catch((e: unknown) => {
        release();
        throw e;
      });
      const answer = await this.clientFor(token).request(operation.document, { variables, signal }).finally(release);
      if (signal.aborted) throw signal.reason;
      const cost = this.costOf(answer.extensions);
      if (cost) {
        this.costs.set(operation.name, cost.requestedQueryCost);
        this.bucket.observe(cost.throttleStatus);
        onCost?.(cost.actualQueryCost ?? cost.requestedQueryCost);
      }
      const errors = answer.errors;
      if (!errors) return this.validData(operation, answer.data);
      const status = errors.networkStatusCode;
      const graphQLErrors = z.array(GraphQLError).safeParse(errors.graphQLErrors ?? []);
      const codes = graphQLErrors.success ? graphQLErrors.data.map((e) => e.extensions?.code) : [];
      if (status === 429 || codes.includes('THROTTLED')) {
        const wait = await this.throttledWait(estimate, cost?.throttleStatus, errors.response);
        if (++throttled >= MAX_THROTTLED_IN_ATTEMPT || wait > maxWaitMs) throw this.budgetWait(wait);
        await sleep(wait, undefined, { signal });
        continue;
      }
      if (status === 401 && !refreshed && this.token.invalidate(token)) {
        refreshed = true;
        continue;
      }
      if (status === undefined)
        throw new StopDelivery({ kind: 'retry', status: null, message: `${operation.name}: ${errors.message ?? 'no answer'}` });
      if (status !== 200) {
        const failure = failedAnswer(status, headersOf(errors.response), await textOf(errors.response), this.now());
        if (failure.result.kind === 'retry_after') this.hold.hold(failure.result.status, failure.result.retryAfterMs);
        throw failure;
      }
      const messages = graphQLErrors.success ? graphQLErrors.data.map((e) => `${e.extensions?.code ?? 'ERROR'}: ${e.message}`) : [];
      // An HTML page or a string `errors` has no GraphQL errors to name: the client's message and the body's start say what came.
      const said =
        messages.length > 0
          ? messages.join('; ')
          : [errors.message, excerpt(await textOf(errors.response))].filter(Boolean).join(': ') || 'an error answer without a message';
      if (codes.includes('INTERNAL_SERVER_ERROR'))
        throw new StopDelivery({ kind: 'retry', status: 200, message: `${operation.name}: ${said}` });
      throw new StopDelivery({ kind: 'rejected', status: 200, bodyExcerpt: `${operation.name}: ${said.slice(0, 300)}` });
    }
  }

  /** The answer's cost figures once checked; absurd ones are ignored (the bucket keeps its view) with a warning. */
  private costOf(extensions: unknown): z.infer<typeof QueryCost> | undefined {
    const raw = Extensions.safeParse(extensions ?? {});
    if (!raw.success || raw.data.cost === undefined) return undefined;
    const cost = QueryCost.safeParse(raw.data.cost);
    if (cost.success) {
      this.warnedOfCost = false;
      return cost.data;
    }
    if (!this.warnedOfCost) {
      const issue = cost.error.issues[0]!;
      platformWarning(`Shopify store ${this.connector.storeDomain} sent cost figures out of range: ignored`, {
        shop: this.connector.shop,
        field: `extensions.cost.${issue.path.join('.')}`,
        problem: issue.message,
      });
      this.warnedOfCost = true;
    }
    return undefined;
  }

  private validData<T>(operation: Operation<T>, data: unknown): T {
    const parsed = operation.data.safeParse(data);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]!;
    throw unexpectedAnswer(operation.name, `${issue.path.join('.')}: ${issue.message}`);
  }

  /** The wait before a throttled call can pass: from the bucket, else Retry-After, else a second. */
  private async throttledWait(requested: number, status: ThrottleStatus | undefined, response: Response | undefined): Promise<number> {
    if (status) return this.bucket.throttledWaitMs(requested, status);
    const cost = this.costOf((jsonOf(await textOf(response)) as { extensions?: unknown } | undefined)?.extensions);
    if (cost) return this.bucket.throttledWaitMs(requested, cost.throttleStatus);
    const retryAfter = readRetryAfterMs(response?.headers.get('retry-after') ?? undefined, this.now());
    return clampWaitMs(retryAfter?.ms, { minMs: 1000, maxMs: MAX_BUCKET_WAIT_MS }, 1000);
  }

  private budgetWait(ms: number): StopDelivery {
    return new StopDelivery({ kind: 'retry_after', status: 429, retryAfterMs: Math.max(1000, Math.ceil(ms)) });
  }

  /** The admin client's fetch: to the connector's origin, bounded, answered as a web Response. */
  private async fetch(url: string, init: RequestInit): Promise<Response> {
    const target = new URL(url);
    const origin = new URL(this.connector.adminOrigin);
    target.protocol = origin.protocol;
    target.host = origin.host;
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const answer = await platformRequest({
      method: 'POST',
      url: target,
      headers,
      body: typeof init.body === 'string' ? init.body : undefined,
      timeoutMs: this.connector.timeoutMs,
      signal: init.signal ?? undefined,
      platform: 'shopify',
    });
    if (answer.kind === 'network') throw new Error(answer.message);
    return new Response(answer.status === 204 ? null : answer.text, { status: answer.status, headers: answer.headers });
  }
}

function headersOf(response: Response | undefined): Record<string, string> {
  return response ? Object.fromEntries(response.headers.entries()) : {};
}

async function textOf(response: Response | undefined): Promise<string> {
  if (!response || response.bodyUsed) return '';
  return response.text().catch(() => '');
}
