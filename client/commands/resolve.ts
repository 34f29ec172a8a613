/**
 * `npm run cli -- resolve <shop> <orderId> --note <text>`: a person closes what only a person can
 * (a cancelled order's parcel recalled, an unused label voided, a changed address handled with
 * the courier). The workflow records it (the update resolveAttention: who, when, the note) and
 * its attention mark becomes `resolved`, so the attention list, the gauge and its alert drop it.
 */
import { userInfo } from 'node:os';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { hasControlCharacters, RESOLVE_LIMITS, resolveAttentionUpdate, type AttentionResolution } from '../../workflows/definitions';
import {
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
import { findRunningShipment } from './shipment-lookup';

export const RESOLVE_HELP = `Usage: npm run cli -- resolve --note <text> [--by <name>] [--parcel <location>] [--json] <shop> <orderId>

Closes a shipment's attention mark that only a person can close, once it was dealt with
outside the system: an order cancelled in the shop after its label (cancelled_in_shop: the
parcel recalled with the courier), a label bought for an order cancelled meanwhile
(label_to_void: voided with the courier), a change after the label handled otherwise than by
resubmit --from-shop (changed_in_shop). The shipment records who, when and the note (its
history, status, the Web UI), and attention, the gauge and the alert no longer count it. A
later change of the merchant that marks the order again opens it again.
Marks that end by themselves need no resolve: a relabel (resubmit --from-shop) or a release
in the shop closes changed_in_shop. A shipment that has ended cannot be resolved (exception,
tracking_timed_out, hold_timed_out, label_failed leave the list after --since of attention).

Options:
  --note <text>       What was done (required; 1-${RESOLVE_LIMITS.note} characters)
  --by <name>         Who did it (default: the OS user running the command; 1-${RESOLVE_LIMITS.by} characters)
  --parcel <location> One parcel of an order that ships from several locations
  --json              One JSON document on stdout: { resolution } or { rejected }
  -h, --help          Show this help

Exit codes: 0 resolved; 1 refused (nothing open to resolve, or the shipment has ended);
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
    const { handle } = await findRunningShipment(session.client, shop, orderId, values.parcel, 'nothing to resolve');
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

/** Bounded, printable text: the workflow checks it again. */
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
