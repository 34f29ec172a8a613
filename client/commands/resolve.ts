/**
 * `npm run cli -- resolve <shop> <orderId> --note <text>`: a person closes what only a person can
 * (a cancelled order's parcel recalled, an unused label voided, a changed address handled with
 * the courier). The workflow records it (the update resolveAttention: who, when, the note) and
 * its attention mark becomes `resolved`, so the attention list, the gauge and its alert drop it.
 * A shipment that ended with a reason only a person can close (an exception, ...) cannot take an
 * update: its resolution is a workflow of its own (workflows/attention-resolution.ts).
 */
import { userInfo } from 'node:os';
import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import {
  ATTENTION_RESOLUTION_WORKFLOW_TYPE,
  attentionResolutionWorkflowId,
  hasControlCharacters,
  RESOLVE_LIMITS,
  resolveAttentionUpdate,
  SA,
  type AttentionResolution,
  type EndedShipmentResolution,
} from '../../workflow-definitions/shipment';
import { endedReasonOf } from '../../workflow-definitions/attention';
import {
  CliError,
  connectTemporal,
  EXIT,
  parseCommandArgs,
  printable,
  println,
  requirePositionals,
  usageError,
  type ExitCode,
  type Io,
} from '../cli-support';
import { findShipment, readEndedResolution, shipmentAttributes, type FoundShipment } from './shipment-lookup';

export const RESOLVE_HELP = `Usage: npm run cli -- resolve --note <text> [--by <name>] [--parcel <location>] [--json] <shop> <orderId>

Closes a shipment's attention mark that only a person can close, once it was dealt with
outside the system: an order cancelled in the shop after its label (cancelled_in_shop: the
parcel recalled with the courier), a label bought for an order cancelled meanwhile
(label_to_void: voided with the courier), a change after the label handled otherwise than by
resubmit --from-shop (changed_in_shop). The shipment records who, when and the note (its
history, status, the Web UI), and attention, the gauge and the alert no longer count it. A
later change of the merchant that marks the order again opens it again.
Marks that end by themselves need no resolve: a relabel (resubmit --from-shop) or a release
in the shop closes changed_in_shop.
A shipment that has ended with exception, tracking_timed_out, hold_timed_out or label_failed,
or with one of the marks above still open, is resolved once, when the person has followed it
up (asked the courier, told the customer, recalled the parcel, labelled the order by other
means): a workflow resolved-<shipment's workflow id> records who, when and the note (its
history, the Web UI, status). Any other ended shipment has nothing to resolve.

Options:
  --note <text>       What was done (required; 1-${RESOLVE_LIMITS.note} characters)
  --by <name>         Who did it (default: the OS user running the command; 1-${RESOLVE_LIMITS.by} characters)
  --parcel <location> One parcel of an order that ships from several locations
  --json              One JSON document on stdout: { resolution } or { rejected }
  -h, --help          Show this help

Exit codes: 0 resolved; 1 refused (nothing open to resolve, resolved already, or the shipment
ended with nothing left for a person);
2 usage/configuration error; 4 no shipment for that shop and order; 5 Temporal unreachable.
`;

export async function resolveAttentionCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    note: { type: 'string' },
    by: { type: 'string' },
    parcel: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(RESOLVE_HELP);
    return EXIT.ok;
  }
  const [shop, orderId] = requirePositionals(positionals, ['shop', 'orderId'], 'resolve') as [string, string];
  const note = checked('--note', values.note, RESOLVE_LIMITS.note);
  const by = checked('--by', values.by ?? osUser(), RESOLVE_LIMITS.by);
  const out = (human: string, json: unknown) => println(io.stdout, values.json ? JSON.stringify(json, null, 2) : human);

  const session = await connectTemporal(io.env);
  try {
    const found = await findShipment(session.client, shop, orderId, values.parcel);
    if (found.description.status.name !== 'RUNNING') {
      const ended = await resolveEnded(session.client, session.settings.taskQueue, found, { shop, orderId, by, note });
      if (ended.resolved)
        out(`Resolved ${ended.record.reason} of shop ${shop} order ${orderId} (ended): by ${ended.record.by} at ${ended.record.at}.`, {
          resolution: ended.record,
        });
      else out(`Refused: ${ended.rejected}`, { rejected: ended.rejected });
      return ended.resolved ? EXIT.ok : EXIT.rejected;
    }
    const { handle } = found;
    let resolution: AttentionResolution;
    try {
      resolution = await handle.executeUpdate(resolveAttentionUpdate, { args: [{ by, note }] });
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        const message = err.cause?.message ?? err.message;
        out(`The workflow refused: ${message}`, { rejected: message });
        return EXIT.rejected;
      }
      throw err;
    }
    out(`Resolved ${resolution.attention} of shop ${shop} order ${orderId}: by ${resolution.by} at ${resolution.at}.`, { resolution });
    return EXIT.ok;
  } finally {
    await session.close();
  }
}

type EndedOutcome = { resolved: true; record: EndedShipmentResolution } | { resolved: false; rejected: string };

/**
 * An ended shipment: one with a reason only a person can close gets its resolution workflow
 * (started once: a second start is "resolved already"); any other is refused (exit 1).
 */
async function resolveEnded(
  client: Client,
  taskQueue: string,
  { workflowId, description }: FoundShipment,
  given: { shop: string; orderId: string; by: string; note: string },
): Promise<EndedOutcome> {
  const { shop, orderId } = given;
  const { status, shopChange } = shipmentAttributes(description.typedSearchAttributes);
  const reason = endedReasonOf(status, shopChange);
  if (!reason)
    throw new CliError(
      `the shipment of shop ${shop} order ${orderId} has already ended (${description.status.name}); nothing to resolve: it ended ${status ?? 'without a status'}, which leaves nothing for a person`,
      EXIT.rejected,
    );
  const record: EndedShipmentResolution = { shipmentWorkflowId: workflowId, ...given, reason: reason.reason, at: new Date().toISOString() };
  const recordId = attentionResolutionWorkflowId(workflowId);
  try {
    await client.workflow.start(ATTENTION_RESOLUTION_WORKFLOW_TYPE, {
      workflowId: recordId,
      taskQueue,
      args: [record],
      // One resolution per shipment, even after the first one completed.
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: SA.shop, value: shop },
        { key: SA.orderId, value: orderId },
      ],
      staticSummary: `Resolved ${reason.reason} of order ${orderId} of ${shop} (shipment ${workflowId})`,
    });
    return { resolved: true, record };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  const first = await readEndedResolution(client, workflowId);
  return {
    resolved: false,
    rejected: `${reason.reason} was resolved already${first ? ` by ${first.by} at ${first.at}: ${first.note}` : ''} (workflow ${recordId})`,
  };
}

/** Bounded, printable text: a running shipment's workflow checks it again; an ended one's record takes it as checked here. */
function checked(option: string, value: string | undefined, max: number): string {
  if (value === undefined) throw usageError(`${option} is required: say what was done. See: npm run cli -- resolve --help`);
  const text = value.trim();
  if (text === '' || text.length > max || hasControlCharacters(text))
    throw usageError(`${option} must be 1 to ${max} characters, without control characters (got "${printable(value.slice(0, 60))}")`);
  return text;
}

function osUser(): string | undefined {
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined; // no user entry (a container's uid): --by is needed
  }
}
