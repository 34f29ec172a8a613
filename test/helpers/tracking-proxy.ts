/**
 * A loopback HTTP proxy in front of the fake shipping API that lets a test rewrite the tracking
 * answers (a courier that collapses its checkpoint list, tracking that returns to an earlier
 * state). Every other request passes through unchanged.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TrackingRecord } from '../../shipping-api/contract';

/** The fake's record for the label, and how many times the label was polled through the proxy (1 first). */
export type TrackingRewrite = (record: TrackingRecord | null, labelId: string, poll: number) => TrackingRecord | null;

export interface TrackingProxy {
  baseUrl: string;
  /** Polls of each label through the proxy. */
  polls: Map<string, number>;
  close(): Promise<void>;
}

export async function startTrackingProxy(target: string, rewrite: TrackingRewrite): Promise<TrackingProxy> {
  const polls = new Map<string, number>();
  const server = createServer((req, res) => void forward(req, res).catch((err: unknown) => res.destroy(err as Error)));
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(
        (e): e is [string, string] => typeof e[1] === 'string' && !['host', 'content-length', 'connection'].includes(e[0]),
      ),
    );
    const answer = await fetch(new URL(req.url!, target), {
      method: req.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    let body = Buffer.from(await answer.arrayBuffer());
    const tracking = /^\/tracking\/([^/?]+)/.exec(req.url ?? '');
    if (req.method === 'GET' && tracking && (answer.status === 200 || answer.status === 404)) {
      const labelId = decodeURIComponent(tracking[1]!);
      const poll = (polls.get(labelId) ?? 0) + 1;
      polls.set(labelId, poll);
      const record = answer.status === 200 ? (JSON.parse(body.toString()) as TrackingRecord) : null;
      const rewritten = rewrite(record, labelId, poll);
      if (rewritten !== null) {
        body = Buffer.from(JSON.stringify(rewritten));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
        return;
      }
    }
    const out: Record<string, string> = {};
    answer.headers.forEach((value, key) => {
      if (!['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(key)) out[key] = value;
    });
    res.writeHead(answer.status, out);
    res.end(body);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    polls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
