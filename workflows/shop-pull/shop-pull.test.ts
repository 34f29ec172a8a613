/**
 * The shop pull workflow's decisions, fast: the real dev server and workflow bundle, with the
 * activities scripted. The end-to-end proof against the fake platforms is test/shop-import.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PullCursor } from '../../shop-import/cursor';
import { saveFixture } from '../../test/helpers/fixtures';
import { createTestEnv, getWorkflowBundle } from '../../test/helpers/temporal-env';
import { SHOP_PULL_WORKFLOW_TYPE, type PullPagesInput, type PullPagesResult, type ShopPullInput, type ShopPullResult } from './definitions';

/** Per shop: the answers of successive pullShopOrders calls (a function may throw to fail the attempt). */
const scripts = new Map<string, Array<(input: PullPagesInput) => PullPagesResult>>();
const pulls = new Map<string, PullPagesInput[]>();
const saved = new Map<string, PullCursor[]>();

const activities = {
  pullShopOrders(input: PullPagesInput): Promise<PullPagesResult> {
    const seen = pulls.get(input.shop) ?? pulls.set(input.shop, []).get(input.shop)!;
    seen.push(input);
    const step = scripts.get(input.shop)!.shift()!;
    return Promise.resolve(step(input));
  },
  saveShopCursor(input: { shop: string; cursor: PullCursor }): Promise<{ saved: boolean }> {
    (saved.get(input.shop) ?? saved.set(input.shop, []).get(input.shop)!).push(input.cursor);
    return Promise.resolve({ saved: true });
  },
};

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `shop-pull-${randomUUID()}`;

beforeAll(async () => {
  env = await createTestEnv();
  worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await getWorkflowBundle(), activities });
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

const counts = (started: number, rejected = 0) => ({ read: started + rejected, started, alreadyKnown: 0, skipped: 0, rejected });

function pull(shop: string, cursor: PullCursor, more: Partial<ShopPullInput> = {}) {
  return env.client.workflow.start(SHOP_PULL_WORKFLOW_TYPE, {
    taskQueue,
    workflowId: `pull-${shop}-${randomUUID()}`,
    args: [{ shop, cursor, ...more } satisfies ShopPullInput],
  });
}

it('reads the retry list, then every page; saves each newer cursor and returns the totals', async () => {
  const shop = 'paged';
  const c1 = { since: '2026-11-20T10:00:00Z', retry: ['7'] };
  const c2 = { since: '2026-11-20T11:00:00Z', retry: ['7'] };
  scripts.set(shop, [
    () => ({
      next: { phase: 'shopify', from: '2026-11-20T09:50:00Z', after: null },
      cursor: { since: '2026-11-20T09:00:00Z', retry: ['7'] },
      counts: counts(0, 1),
      rejections: [{ platformOrderId: '7', orderId: '1007', reasons: [{ field: 'shippingMethod', message: 'no courier' }] }],
      pages: 1,
    }),
    () => ({
      next: { phase: 'shopify', from: '2026-11-20T09:50:00Z', after: 'abc' },
      cursor: c1,
      counts: counts(10),
      rejections: [],
      pages: 2,
    }),
    () => ({ next: null, cursor: c2, counts: counts(4), rejections: [], pages: 1 }),
  ]);
  const handle = await pull(shop, { since: '2026-11-20T09:00:00Z', retry: ['7'] });
  const result = (await handle.result()) as ShopPullResult;
  expect(pulls.get(shop)!.map((p) => p.position)).toEqual([
    { phase: 'retry' },
    { phase: 'shopify', from: '2026-11-20T09:50:00Z', after: null },
    { phase: 'shopify', from: '2026-11-20T09:50:00Z', after: 'abc' },
  ]);
  // Each call goes on with the cursor the previous one returned.
  expect(pulls.get(shop)![2]!.cursor).toEqual(c1);
  // An unchanged cursor (the retry list's read) is not written; each newer one is.
  expect(saved.get(shop)).toEqual([c1, c2]);
  expect(result.counts).toEqual({ read: 15, started: 14, alreadyKnown: 0, skipped: 0, rejected: 1, changed: 0 });
  expect(result.rejections.map((r) => r.platformOrderId)).toEqual(['7']);
  expect(result.pages).toBe(4);
  expect(result.cursor).toEqual(c2);
  // A killed worker's page reading is taken over after 15 s.
  const scheduled = (await handle.fetchHistory()).events!.flatMap((e) => e.activityTaskScheduledEventAttributes ?? []);
  expect(scheduled.filter((a) => a.activityType?.name === 'pullShopOrders').map((a) => Number(a.heartbeatTimeout?.seconds))).toEqual([
    15, 15, 15,
  ]);
  await saveFixture(handle, 'shop-pull-paged');
});

it('a page that fails is read again by the retry from the same position; the cursor is not moved by it', async () => {
  const shop = 'retried';
  let failures = 0;
  const done = { since: '2026-11-21T08:00:00Z', retry: [] };
  scripts.set(shop, [
    () => ({
      next: { phase: 'woocommerce', after: '2026-11-21T07:00:00Z', exclude: [] },
      cursor: { since: null, retry: [] },
      counts: counts(0),
      rejections: [],
      pages: 1,
    }),
    () => {
      failures++;
      throw ApplicationFailure.retryable('the shop is down', 'ShopUnavailable');
    },
    () => ({ next: null, cursor: done, counts: counts(3), rejections: [], pages: 1 }),
  ]);
  const handle = await pull(shop, { since: null, retry: [] });
  const result = (await handle.result()) as ShopPullResult;
  expect(failures).toBe(1);
  const positions = pulls.get(shop)!.map((p) => p.position);
  expect(positions[1]).toEqual(positions[2]);
  expect(saved.get(shop)).toEqual([done]);
  expect(result.counts.started).toBe(3);
  await saveFixture(handle, 'shop-pull-page-retried');
});

it("a webhook's pull of named orders reads only those, page by page, and never writes the cursor", async () => {
  const shop = 'named';
  const held = { since: '2026-11-22T08:00:00Z', retry: ['9'] };
  const ids = Array.from({ length: 12 }, (_, i) => String(4000 + i));
  scripts.set(shop, [
    (input) => ({
      next: { phase: 'ids', ids: ids.slice(10) },
      cursor: { ...input.cursor, retry: ['9', '4003'] },
      counts: counts(9, 1),
      rejections: [],
      pages: 1,
    }),
    (input) => ({
      next: null,
      cursor: input.cursor,
      counts: { ...counts(0), read: 2, alreadyKnown: 2, changed: 1 },
      rejections: [],
      pages: 2,
    }),
  ]);
  const handle = await pull(shop, held, { webhook: true, orderIds: ids });
  const result = (await handle.result()) as ShopPullResult;
  // No retry list and no changes since the cursor: the named orders, where the activity left off.
  expect(pulls.get(shop)!.map((p) => p.position)).toEqual([
    { phase: 'ids', ids },
    { phase: 'ids', ids: ids.slice(10) },
  ]);
  expect(saved.get(shop)).toBeUndefined();
  expect(result.counts).toEqual({ read: 12, started: 9, alreadyKnown: 2, skipped: 0, rejected: 1, changed: 1 });
  await saveFixture(handle, 'webhook-by-id-named-orders');
});
