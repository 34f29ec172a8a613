/** Pure unit tests of the operator CLI (no server): dispatch, usage errors, list query building. */
import { describe, expect, it } from 'vitest';
import { main } from '../client/cli';
import { EXIT } from '../client/cli-support';
import { buildListQuery, queryLiteral } from '../client/commands/list';
import { captureIo } from './helpers/cli';

describe('shipments list: visibility query', () => {
  it('quotes every value so it cannot end the literal', () => {
    expect(queryLiteral('plain')).toBe(`'plain'`);
    expect(queryLiteral(`o'brien`)).toBe(`'o''brien'`);
    expect(queryLiteral(`ends with \\`)).toBe(`'ends with \\\\'`);
    expect(queryLiteral(`x' OR WorkflowType != '`)).toBe(`'x'' OR WorkflowType != '''`);
  });

  it('combines filters with AND, several values of one filter with IN', () => {
    expect(buildListQuery({})).toBe(`WorkflowType = 'shipmentWorkflow'`);
    expect(buildListQuery({ status: ['delivered', 'exception'], tag: ['Delivered'], courier: ['ups'], shop: [`o'brien`] })).toBe(
      `WorkflowType = 'shipmentWorkflow' AND ShipmentStatus IN ('delivered', 'exception') AND ShipmentTrackingTag = 'Delivered'` +
        ` AND ShipmentCourier = 'ups' AND ShipmentShop = 'o''brien'`,
    );
  });

  it('--query prints the query without connecting anywhere', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['list', '--status', 'tracking,awaiting_correction', '--shop', 'a b', '--query'], io)).toBe(EXIT.ok);
    expect(stdout()).toBe(
      `WorkflowType = 'shipmentWorkflow' AND ShipmentStatus IN ('tracking', 'awaiting_correction') AND ShipmentShop = 'a b'\n`,
    );
  });
});

describe('shipments: dispatch and usage', () => {
  it('no command prints the overview on stderr and exits 2; --help and help <command> exit 0', async () => {
    const none = captureIo();
    expect(await main([], none.io)).toBe(EXIT.usage);
    expect(none.stderr()).toMatch(/^Usage: npm run cli -- <command>/);
    const help = captureIo();
    expect(await main(['--help'], help.io)).toBe(EXIT.ok);
    expect(help.stdout()).toMatch(/Exit codes: 0 success; 1 rejected/);
    const topic = captureIo();
    expect(await main(['help', 'resubmit'], topic.io)).toBe(EXIT.ok);
    expect(topic.stdout()).toMatch(/^Usage: npm run cli -- resubmit/);
  });

  it('unknown commands, flags and argument counts are usage errors (exit 2) before any connection', async () => {
    const cases = [
      ['ship'],
      ['status', 'only-shop'],
      ['cancel', 'a', 'b', 'c'],
      ['list', 'extra'],
      ['list', '--page-size', '0'],
      ['list', '--next-page-token', 'not a token!'],
      ['products'],
      ['resubmit', 'a', 'b'],
    ];
    for (const argv of cases) {
      const { io } = captureIo();
      await expect(main(argv, io), argv.join(' ')).rejects.toMatchObject({ exitCode: EXIT.usage });
    }
  });

  it('a resubmit file that is not JSON is exit 2; invalid label data is exit 1 naming the fields, before connecting', async () => {
    const notJson = captureIo({ stdin: '{ nope' });
    await expect(main(['resubmit', 's', 'o', '-'], notJson.io)).rejects.toMatchObject({
      exitCode: EXIT.usage,
      message: expect.stringMatching(/not valid JSON/),
    });
    const invalid = captureIo({ stdin: JSON.stringify({ courier: 'ups', service: {}, shipment: {}, idempotencyKey: 'k' }) });
    expect(await main(['resubmit', 's', 'o', '-', '--json'], invalid.io)).toBe(EXIT.rejected);
    expect(JSON.parse(invalid.stdout()).problems.map((p: { field: string }) => p.field)).toEqual(['idempotencyKey', 'service.productCode']);
  });
});

describe('commands in help and hints, as the user runs them', () => {
  it('every help and hint spells a command npm run cli -- <command>, however the CLI was started', async () => {
    for (const argv of [['--help'], ['status', '--help'], ['attention', '--help'], ['schedule', '--help'], ['import', '--help']]) {
      const { io, stdout } = captureIo();
      expect(await main(argv, io)).toBe(EXIT.ok);
      expect(stdout(), argv.join(' ')).toMatch(/npm run (cli|import) -- /);
      expect(stdout(), argv.join(' ')).not.toMatch(
        /\bshipments (import|status|list|attention|resubmit|redeliver|cancel|schedule|<command>)\b/,
      );
    }
  });
});

describe('a missing setting', () => {
  it('says where the settings come from, not only that one is missing', async () => {
    const { io } = captureIo({ env: {} });
    const refused = await main(['couriers'], io).catch((e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/SHIPPING_API_BASE_URL: is required[\s\S]*`npm run dev` prints in its banner/);
  });
});
