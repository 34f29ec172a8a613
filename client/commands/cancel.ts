/** `npm run cli -- cancel <shop> <orderId>`: stops a shipment (label wait or tracking). */
import { cancelShipmentSignal, type ShipmentOutcome } from '../../workflow-definitions/shipment';
import { CliError, connectTemporal, EXIT, parseCommandArgs, println, requirePositionals, type ExitCode, type Io } from '../cli-support';
import { findShipment } from './shipment-lookup';

export const CANCEL_HELP = `Usage: npm run cli -- cancel [--reason <text>] [--wait] [--json] <shop> <orderId>

Sends the cancel signal to a running shipment: it stops waiting for corrected label data
or tracking and ends with outcome cancelled_by_operator. (It does not cancel a label at
the courier: the shipping API has no such operation.)

Options:
  --reason <text>   Recorded as the outcome's reason
  --wait            Wait until the workflow has ended and show its outcome
  --json            One JSON document on stdout
  -h, --help        Show this help

Exit codes: 0 cancel sent; 1 the shipment had already ended; 2 usage/configuration error;
4 no shipment for that shop and order; 5 Temporal unreachable.
`;

export async function cancelCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    reason: { type: 'string' },
    wait: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(CANCEL_HELP);
    return EXIT.ok;
  }
  const [shop, orderId] = requirePositionals(positionals, ['shop', 'orderId'], 'cancel') as [string, string];
  const session = await connectTemporal(io.env);
  try {
    const { workflowId, handle, description } = await findShipment(session.client, shop, orderId);
    if (description.status.name !== 'RUNNING') {
      throw new CliError(
        `the shipment of shop ${shop} order ${orderId} has already ended (${description.status.name}); nothing to cancel`,
        EXIT.rejected,
      );
    }
    await handle.signal(cancelShipmentSignal, values.reason === undefined ? {} : { reason: values.reason });
    let outcome: ShipmentOutcome | undefined;
    if (values.wait) outcome = (await handle.result()) as ShipmentOutcome;
    if (values.json) println(io.stdout, JSON.stringify({ workflowId, cancelRequested: true, ...(outcome ? { outcome } : {}) }, null, 2));
    else {
      println(io.stdout, `Cancel requested for shop ${shop} order ${orderId} (workflow ${workflowId}).`);
      if (outcome) println(io.stdout, `Outcome: ${outcome.outcome}${outcome.reason ? ` (${outcome.reason})` : ''}`);
    }
    return EXIT.ok;
  } finally {
    await session.close();
  }
}
