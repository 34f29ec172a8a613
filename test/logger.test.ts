/** The worker's log bridge: one line per failed API call, at a fitting level, and no task token. */
import { Writable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/common';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createLogger, logDestination, PinoTemporalLogger } from '../logging/logger';
import { secretsOfEnv } from '../logging/log-error';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: new PinoTemporalLogger(createLogger('debug', sink)), lines };
}

const TOKEN = 'CiQwMWExZmQ3Mi1iOTVmLTdiN2EtYjBhMS1hMWYw';

it("demotes the SDK's repeat of a shipping API failure to debug, and drops the task token", () => {
  const { logger, lines } = capture();
  const failure = ApplicationFailure.create({ type: 'ServerError', message: 'getTracking: HTTP 503' });
  logger.warn('Activity failed', { taskToken: TOKEN, activityType: 'createLabel', error: failure });
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 20, msg: 'Activity failed', activityType: 'createLabel' });
  expect(JSON.stringify(lines)).not.toContain(TOKEN);
});

it('keeps other failures at their level, still without the task token', () => {
  const { logger, lines } = capture();
  logger.warn('Activity failed', { taskToken: TOKEN, error: new TypeError('a bug') });
  logger.warn('Activity failed', { taskToken: TOKEN, error: ApplicationFailure.create({ type: 'SomethingElse' }) });
  expect(lines.map((l) => l.level)).toEqual([40, 40]);
  expect(JSON.stringify(lines)).not.toContain(TOKEN);
});

it('writes one readable line per entry for a person (LOG_FORMAT=pretty, or a terminal), JSON otherwise', async () => {
  let text = '';
  const stdout = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        text += chunk.toString();
        callback();
      },
    }),
    { isTTY: false },
  ) as unknown as NodeJS.WriteStream;
  expect(logDestination(undefined, stdout)).toBeUndefined(); // a pipe: JSON, for log shippers
  expect(logDestination('json', Object.assign(stdout, { isTTY: true }))).toBeUndefined();
  const pretty = createLogger('info', logDestination('pretty', Object.assign(stdout, { isTTY: false })));
  pretty.info({ orderId: 'LC-5522', apiKey: 'secret-key' }, 'label created');
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: label created \{.*"orderId":"LC-5522"/);
  expect(text).not.toContain('secret-key'); // redaction still applies
  expect(text).not.toContain('\u001b['); // no colour codes into a pipe
});

describe('errors in log lines', () => {
  it('shows message, type and cause chain of an error logged as `error` (the SDK) or `err` (ours), never `{}`', () => {
    const { logger, lines } = capture();
    // The workflow sandbox's errors are of another realm: not instances of this realm's Error.
    const sandboxError = runInNewContext(`const e = new Error('label step failed', { cause: new TypeError('x is undefined') }); e`);
    expect(sandboxError instanceof Error).toBe(false);
    logger.warn('Workflow failed', { error: sandboxError });
    const failure = ApplicationFailure.create({
      type: 'ShopRejected',
      message: 'shop refused event 3',
      nonRetryable: true,
      cause: new RangeError('status 422'),
    });
    logger.error('Activity failed', { error: failure });
    createLogger('info', sinkOf(lines)).warn({ err: new Error('pull failed') }, 'pull');

    const text = JSON.stringify(lines);
    expect(text).not.toContain('"error":{}');
    expect(lines[0]!.error).toMatchObject({
      name: 'Error',
      message: 'label step failed',
      cause: { name: 'TypeError', message: 'x is undefined' },
    });
    expect(lines[1]!.error).toMatchObject({
      name: 'ApplicationFailure',
      type: 'ShopRejected',
      message: 'shop refused event 3',
      nonRetryable: true,
      cause: { name: 'RangeError', message: 'status 422' },
    });
    expect(lines[2]!.err).toMatchObject({ name: 'Error', message: 'pull failed', stack: expect.stringContaining('pull failed') });
  });

  it("masks the process's credentials in an error's text, and takes no other field of it", () => {
    const lines: Array<Record<string, unknown>> = [];
    const secrets = secretsOfEnv({ SHIPPING_API_TOKEN: 'tok-8f1e2d3c', LOG_LEVEL: 'debug', SHOPIFY_ACCESS_TOKEN: 'shpat_77aa99' });
    const logger = new PinoTemporalLogger(createLogger('debug', sinkOf(lines), secrets));
    const err = Object.assign(new Error('401 for token tok-8f1e2d3c'), { headers: { authorization: 'Bearer shpat_77aa99' } });
    logger.warn('Activity failed', { error: new Error('wrapped', { cause: err }) });
    const text = JSON.stringify(lines);
    expect(text).toContain('401 for token [redacted]');
    expect(text).not.toContain('tok-8f1e2d3c');
    expect(text).not.toContain('shpat_77aa99');
    expect(secrets).not.toContain('debug');
  });
});

function sinkOf(lines: Array<Record<string, unknown>>): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
}

describe('expected outcomes in log lines', () => {
  it("demotes the SDK's repeat of the merchant's change found before the label to debug: the activity said it once at info", () => {
    const { logger, lines } = capture();
    const found = ApplicationFailure.create({
      type: 'ShopOrderChanged',
      message: 'the order changed in the shop before its label (status): no label was asked for',
      nonRetryable: true,
    });
    logger.warn('Activity failed', { taskToken: TOKEN, activityType: 'createLabel', error: found });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 20, msg: 'Activity failed' });
  });

  it('names a plain failure record by its kind, never "Object"', () => {
    const { logger, lines } = capture();
    // What a workflow keeps of a courier's rejection (RecordedError): data, not an Error.
    logger.warn('label rejected', {
      error: { kind: 'courier_error', message: 'postal code 00000 is invalid', at: '2026-12-02T00:00:00Z' },
    });
    expect(JSON.stringify(lines)).not.toContain('"name":"Object"');
    expect(lines[0]!.error).toMatchObject({ type: 'courier_error', message: 'postal code 00000 is invalid' });
  });
});
