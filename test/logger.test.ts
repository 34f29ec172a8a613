/** The worker's log bridge: one line per failed API call, at a fitting level, and no task token. */
import { Writable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/common';
import { expect, it } from 'vitest';
import { createLogger, logDestination, PinoTemporalLogger } from '../worker/logger';

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
