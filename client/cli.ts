/**
 * `npm run cli -- <command>` (`npx shipments <command>` is the same): the operator's entry point.
 * Commands parse their own options with node's util.parseArgs; each has --help.
 */
import { TEMPORAL_CONNECTION_HELP } from '../config/temporal-connection';
import { EXIT, PAYLOAD_ENCRYPTION_HELP, runMain, usageError, type ExitCode, type Io } from './cli-support';
import { couriersCommand, productsCommand } from './commands/catalog';
import { attentionCommand } from './commands/attention';
import { cancelCommand } from './commands/cancel';
import { listCommand } from './commands/list';
import { redeliverCommand } from './commands/redeliver';
import { resolveAttentionCommand } from './commands/resolve';
import { resubmitCommand } from './commands/resubmit';
import { statusCommand } from './commands/status';
import { importCommand } from './import/main';
import { scheduleCommand } from './commands/schedule';
import { deploymentCommand } from './commands/deployment';

type Command = (argv: string[], io: Io) => Promise<ExitCode>;

const COMMANDS: Record<string, Command> = {
  import: importCommand,
  status: statusCommand,
  list: listCommand,
  attention: attentionCommand,
  resubmit: resubmitCommand,
  redeliver: redeliverCommand,
  resolve: resolveAttentionCommand,
  cancel: cancelCommand,
  couriers: couriersCommand,
  products: productsCommand,
  schedule: scheduleCommand,
  deployment: deploymentCommand,
};

export const HELP = `Usage: npm run cli -- <command> [options]

Commands:
  import <file|->                    Start one shipment workflow per order of a shop export
                                     (NDJSON, JSON array or CSV)
  import --from <shop>               The same from a Shopify or WooCommerce shop's orders
  schedule <action> [shop]           The shops' pull schedules: apply, describe, pause,
                                     resume, trigger, delete
  status <shop> <orderId>            A shipment's state, workflow status and retrying activities
  list [--status] [--tag] [--courier] [--shop] [--shop-sync]
                                     Shipments filtered on their search attributes
  attention                          Every shipment waiting for a person, oldest first,
                                     with the command that acts on it
  resubmit <shop> <orderId> <file>   Corrected label data for a label the courier rejected
  resubmit <shop> <orderId> --from-shop
                                     A new label to the address the shop has now, after
                                     the label (the merchant corrected it)
  redeliver <shop> <orderId>         Send undelivered shop events again (after a 4xx, 410
                                     or an expired delivery window)
  resolve <shop> <orderId> --note <text>
                                     Close an attention mark a person dealt with (who,
                                     when and the note are recorded on the shipment)
  cancel <shop> <orderId>            Stop a shipment
  deployment <action> [build]        Rollouts by build: status, shipments per build,
                                     promote, retire, build-id
  couriers                           Couriers of the shipping account
  products <courier>                 A courier's shipping products

Run "npm run cli -- <command> --help" for a command's options ("npx shipments <command>"
is the same command).

Environment: SHIPPING_API_BASE_URL, SHIPPING_API_KEY, SHIPPING_API_TOKEN for couriers,
products and the import preflight.

${PAYLOAD_ENCRYPTION_HELP}

${TEMPORAL_CONNECTION_HELP}

Exit codes: 0 success; 1 rejected (records, corrected data, a redelivery, a resolve, or the shipment
already ended), or attention listed something;
2 usage or configuration error; 3 import: some orders failed to start; 4 no such shipment;
5 Temporal or the shipping API unreachable. Details: docs/import-and-cli.md.
`;

export async function main(argv: string[], io: Io): Promise<ExitCode> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic !== undefined && COMMANDS[topic]) return COMMANDS[topic](['--help'], io);
    if (name === undefined) {
      io.stderr.write(HELP);
      return EXIT.usage;
    }
    io.stdout.write(HELP);
    return EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) throw usageError(`unknown command "${name}"; commands: ${Object.keys(COMMANDS).join(', ')}. See: npm run cli -- --help`);
  return command(rest, io);
}

/** Runs the command line of this process (`npm run cli`, and the `shipments` bin: `npx shipments`). */
export function run(argv = process.argv.slice(2)): void {
  runMain(main, argv);
}

if (require.main === module) run();
