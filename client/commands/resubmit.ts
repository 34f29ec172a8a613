/** `npm run cli -- resubmit <shop> <orderId> <file>`: corrected label data for a rejected label (`--from-shop`: resubmit-from-shop.ts). */
import { readFile } from 'node:fs/promises';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { resubmitLabelUpdate, type ResubmitResult } from '../../workflow-definitions/shipment';
import {
  connectTemporal,
  EXIT,
  messageOf,
  parseCommandArgs,
  println,
  requirePositionals,
  usageError,
  type ExitCode,
  type Io,
} from '../cli-support';
import { identityOf, validateLabelRequest } from '../../order-import/record';
import { errorLines } from './label-error';
import { resubmitFromShop } from './resubmit-from-shop';
import { findRunningShipment } from './shipment-lookup';

export const RESUBMIT_HELP = `Usage: npm run cli -- resubmit [--reason <text>] [--accept-mismatch] [--parcel <location>] [--json] <shop> <orderId> <file>
       npm run cli -- resubmit --from-shop [--reason <text>] [--parcel <location>] [--json] <shop> <orderId>

Sends corrected label data to a shipment whose label the courier (or the API's
validation) rejected, and waits for the new label attempt. <file> is the label creation
request as JSON, without idempotencyKey (the workflow derives a new key per revision),
or a whole import record ({ shop, orderId, labelRequest }); - reads it from standard
input. The file is validated locally first, naming each bad field. The workflow refuses
the update when the shipment is not awaiting corrected data, or when the data belongs to
another order: a customer order number, order reference, shop or order id that is not
the shipment's, or a sender (contact or country) that is not the shop's. Each mismatch
is named. Another courier, product, parcel or a fixed address is a correction and goes
through.

With --from-shop (no file): after its label, the merchant corrected the order's address
(or lines) in the shop, and the shipment, marked changed_in_shop, keeps the shop's label
request. This makes it the label of the next revision (validated locally first, as an
import's), tracks the new label instead of the old one, and tells the shop the new
tracking number (Shopify: the fulfillment's tracking; WooCommerce: a new tracking item in
place of the old). The old label is not voided (the API has no void) and no longer
tracked: stop or recall its parcel with the courier. Refused when the shop offers no other
request, the shipment has no label yet (a change before the label is taken into it by
itself), the order was cancelled or refunded in the shop, the order changed again since
it was read, or the shipment has ended. Sent twice, the second is refused: one new label.

Options:
  --from-shop         A new label from the shop's data, after the label (see above)
  --reason <text>     Why the data was changed (kept in the workflow history), max 500 chars
  --accept-mismatch   Send it although it names another order or sender (a deliberate change)
  --parcel <location> One parcel of an order that ships from several locations (status lists them)
  --json              One JSON document on stdout: { result } or { rejected } or { problems }
  -h, --help          Show this help

Exit codes: 0 label created; 1 file (or the shop's request) invalid, update refused by the
workflow, shipment already ended, or the label was rejected (again); 2 usage/configuration
error or unreadable file; 4 no shipment for that shop and order; 5 Temporal unreachable.
`;

export async function resubmitCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, {
    reason: { type: 'string' },
    'accept-mismatch': { type: 'boolean', default: false },
    'from-shop': { type: 'boolean', default: false },
    parcel: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout.write(RESUBMIT_HELP);
    return EXIT.ok;
  }
  if (values.reason !== undefined && values.reason.length > 500) throw usageError('--reason must be at most 500 characters');
  if (values['from-shop']) {
    if (values['accept-mismatch']) throw usageError('--accept-mismatch is for a file of corrected data, not --from-shop');
    const [shop, orderId] = requirePositionals(positionals, ['shop', 'orderId'], 'resubmit --from-shop') as [string, string];
    return resubmitFromShop({ shop, orderId, parcel: values.parcel, reason: values.reason, json: values.json }, io);
  }
  const [shop, orderId, file] = requirePositionals(positionals, ['shop', 'orderId', 'file'], 'resubmit') as [string, string, string];
  const out = (human: string, json: unknown) => println(io.stdout, values.json ? JSON.stringify(json, null, 2) : human);

  // 1. The file, checked locally before anything is sent.
  let text: string;
  try {
    text = file === '-' ? await readAll(io.stdin) : await readFile(file, 'utf8');
  } catch (err) {
    throw usageError(`cannot read ${file}: ${messageOf(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw usageError(`${file} is not valid JSON: ${messageOf(err)}`);
  }
  const { labelRequest, namedOrder } = splitRecord(json);
  const validated = validateLabelRequest(labelRequest);
  if (!validated.ok) {
    out(
      [`${file} is not a valid label request; nothing was sent:`, ...validated.problems.map((p) => `  ${p.field}: ${p.message}`)].join(
        '\n',
      ),
      { problems: validated.problems },
    );
    return EXIT.rejected;
  }

  // 2. The update; the workflow's validator decides whether it is accepted.
  const session = await connectTemporal(io.env);
  try {
    const { handle } = await findRunningShipment(session.client, shop, orderId, values.parcel, 'nothing to resubmit');
    let result: ResubmitResult;
    try {
      result = await handle.executeUpdate(resubmitLabelUpdate, {
        args: [
          {
            labelRequest: validated.value,
            ...(values.reason === undefined ? {} : { reason: values.reason }),
            ...(namedOrder ? { namedOrder } : {}),
            ...(values['accept-mismatch'] ? { acceptMismatch: true } : {}),
          },
        ],
      });
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        const message = err.cause?.message ?? err.message;
        const hint = /belongs to another order/.test(message)
          ? "\nCheck the file is this order's; if the change is deliberate, send it again with --accept-mismatch."
          : '';
        out(`The workflow refused the corrected data: ${message}${hint}`, { rejected: message });
        return EXIT.rejected;
      }
      throw err;
    }
    const lines = result.labelCreated
      ? [`Label created: ${result.labelId} (revision ${result.revision}, key ${result.idempotencyKey ?? '-'})`]
      : [
          `The label was rejected again (revision ${result.revision}); the shipment is waiting for corrected data.`,
          ...errorLines(result.error),
        ];
    out(lines.join('\n'), { result });
    return result.labelCreated ? EXIT.ok : EXIT.rejected;
  } finally {
    await session.close();
  }
}

/** A whole import record gives its label request and the order it names; anything else is the label request. */
function splitRecord(json: unknown): { labelRequest: unknown; namedOrder?: { shop?: string; orderId?: string } } {
  if (typeof json !== 'object' || json === null || !('labelRequest' in json)) return { labelRequest: json };
  const { shop, orderId } = identityOf(json);
  return { labelRequest: json.labelRequest, namedOrder: { ...(shop ? { shop } : {}), ...(orderId ? { orderId } : {}) } };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer | string>) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
