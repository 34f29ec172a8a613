/**
 * One webhook delivery attempt: a POST of the exact body bytes over node:http(s), judged as
 * Shopify judges it: success is a 2xx status within the timeout; anything else (3xx included,
 * a refused connection, no answer in time) is a failure.
 */
import http from 'node:http';
import https from 'node:https';

export interface PostResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

export function newAgents(maxSockets: number): Agents {
  return { http: new http.Agent({ keepAlive: true, maxSockets }), https: new https.Agent({ keepAlive: true, maxSockets }) };
}

/** Never rejects: every outcome is a PostResult. `signal` cuts the attempt short (the fake closing). */
export function post(
  url: URL,
  headers: Record<string, string>,
  body: Buffer,
  options: { timeoutMs: number; signal: AbortSignal; agents: Agents },
): Promise<PostResult> {
  return new Promise((resolve) => {
    let finished = false;
    const done = (result: PostResult) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      resolve(result);
    };
    const secure = url.protocol === 'https:';
    const request = (secure ? https : http).request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(body.length) },
        agent: secure ? options.agents.https : options.agents.http,
        signal: options.signal,
      },
      (res) => {
        // The status decides; the rest of the answer is read and thrown away so the socket is reused.
        res.resume();
        const status = res.statusCode ?? 0;
        done({ ok: status >= 200 && status < 300, status, error: null });
      },
    );
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('error', (err) => done({ ok: false, status: null, error: err.message }));
    request.end(body);
  });
}
