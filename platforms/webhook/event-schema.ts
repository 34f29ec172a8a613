/**
 * Writes docs/shipment-event.schema.json from the zod schema in domain/events.ts, with zod's own
 * z.toJSONSchema, so receivers in any language get the same contract the sender validates
 * with. `npm run shop-sync:schema` regenerates it; `-- --check` only compares (for CI).
 *
 * Input mode: the schema describes what a receiver must accept, so objects stay open to
 * fields added later (no additionalProperties: false).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ShipmentEvent } from '../../domain/events';

export const SCHEMA_PATH = path.resolve(__dirname, '..', '..', 'docs', 'shipment-event.schema.json');

/** The JSON Schema document exactly as committed: 2-space indent, trailing newline. */
export function shipmentEventJsonSchema(): string {
  const { $schema, ...rest } = z.toJSONSchema(ShipmentEvent, { io: 'input', target: 'draft-2020-12' });
  const document = {
    $schema,
    $comment: 'Generated from domain/events.ts by `npm run shop-sync:schema`; do not edit by hand.',
    ...rest,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

const HELP = `Writes the JSON Schema of the shipment events (docs/shipment-event.schema.json)

Usage: npm run shop-sync:schema [-- flags]

Flags:
  --out <file>   Where to write (default ${path.relative(process.cwd(), SCHEMA_PATH) || SCHEMA_PATH})
  --check        Write nothing; exit 1 if the file differs from what would be written
  -h, --help     Print this help and exit
`;

export function main(argv: string[]): number {
  let values: { out?: string; check?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { out: { type: 'string' }, check: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (e) {
    process.stderr.write(`shop-sync:schema: ${(e as Error).message}\nRun with --help to list the flags.\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const out = path.resolve(values.out ?? SCHEMA_PATH);
  const text = shipmentEventJsonSchema();
  if (values.check) {
    let current: string | null = null;
    try {
      current = readFileSync(out, 'utf8');
    } catch {
      // missing counts as different
    }
    if (current === text) return 0;
    process.stderr.write(`${out} is out of date; run npm run shop-sync:schema\n`);
    return 1;
  }
  writeFileSync(out, text);
  process.stdout.write(`Wrote ${out}\n`);
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
