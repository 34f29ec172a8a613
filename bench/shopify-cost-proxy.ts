/**
 * A pass-through proxy in front of the fake Shopify that adds up each answer's actual query cost,
 * split between the pull's reads (the OrdersToLabel, WholeOrderToLabel and FulfillmentOrderLinesToLabel queries) and everything
 * else (the shipments' write-back). The fake's own stats only give the sum, and the import bench
 * must show what the pull alone spent of the store's restore rate.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { baseUrlOf, LocalHttpServer, readBody } from '../local-http';

/** One pull read: when it was answered and what it cost. */
export interface CostSample {
  at: number;
  points: number;
}

export interface CostTally {
  pull: CostSample[];
  otherPoints: number;
  otherCalls: number;
}

export interface ShopifyCostProxy {
  url: string;
  tally(): CostTally;
  close(): Promise<void>;
}

const PULL_QUERIES = /\b(OrdersToLabel|WholeOrderToLabel|FulfillmentOrderLinesToLabel)\b/;
/** Answer headers the connector reads (the rest are node's own). */
const KEPT_HEADERS = ['content-type', 'retry-after', 'x-shopify-api-version'];

export async function startShopifyCostProxy(target: string): Promise<ShopifyCostProxy> {
  const tally: CostTally = { pull: [], otherPoints: 0, otherCalls: 0 };
  const server = new LocalHttpServer(
    'shopify cost proxy',
    async (req, res) => forward(target, req, res, tally),
    (res) => res.destroy(),
  );
  await server.listen(0, '127.0.0.1');
  return {
    url: baseUrlOf('127.0.0.1', server.port()),
    tally: () => ({ ...tally, pull: [...tally.pull] }),
    close: () => server.stopListening(),
  };
}

async function forward(target: string, req: IncomingMessage, res: ServerResponse, tally: CostTally): Promise<void> {
  const body = (await readBody(req, 2 * 1024 * 1024)) ?? Buffer.alloc(0);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers[name] = value;
  }
  let answer: Response;
  let text: string;
  try {
    answer = await fetch(`${target}${req.url ?? '/'}`, { method: req.method, headers, body: body.length > 0 ? body : undefined });
    text = await answer.text();
  } catch {
    // The store cut the connection (down, dropped answer): the client must see the same.
    res.destroy();
    return;
  }
  const points = actualCost(text);
  if (points !== null) {
    if (PULL_QUERIES.test(body.toString('utf8'))) tally.pull.push({ at: Date.now(), points });
    else {
      tally.otherPoints += points;
      tally.otherCalls++;
    }
  }
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = answer.headers.get(name);
    if (value !== null) kept[name] = value;
  }
  res.writeHead(answer.status, kept);
  res.end(text);
}

function actualCost(text: string): number | null {
  try {
    const cost = (JSON.parse(text) as { extensions?: { cost?: { actualQueryCost?: number | null } } }).extensions?.cost;
    return typeof cost?.actualQueryCost === 'number' ? cost.actualQueryCost : null;
  } catch {
    return null;
  }
}
