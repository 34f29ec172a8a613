/**
 * Reads import records from a text stream, one at a time, in NDJSON, a JSON array or CSV.
 * Nothing holds more than one record (or one CSV order) in memory, so the size of the input
 * does not matter. Problems of a single record (a line that is not JSON, a malformed CSV row)
 * are attached to that record; only a document that is not of the announced format at all
 * (a JSON file that is not an array, an unknown CSV column) stops the run, before any record.
 */
import { extname } from 'node:path';
import type { FieldProblem } from '../../shipping-api/contract';
import { CsvParser } from './csv';
import { checkHeader, CsvHeaderError, CsvOrderGrouper, type CsvOrder } from './csv-orders';
import { usageError } from '../cli-support';

export const FORMATS = ['ndjson', 'json', 'csv'] as const;
export type InputFormat = (typeof FORMATS)[number];

export interface SourceRecord {
  /** 1-based line where the record starts (NDJSON: its line; CSV: its order's first row; JSON: its first character). */
  line: number;
  /** JSON array only: 0-based position in the array. */
  index?: number;
  /** The record's original text (for CSV: its rows, without the header). */
  raw: string;
  /** The parsed record; absent when the text could not be parsed. */
  value?: unknown;
  /** Problems found while reading, before validation. */
  problems: FieldProblem[];
  /** CSV only: the header row's text, so a rejected order's rows can be read on their own. */
  header?: string;
}

export function formatFromPath(path: string): InputFormat | undefined {
  switch (extname(path).toLowerCase()) {
    case '.ndjson':
    case '.jsonl':
      return 'ndjson';
    case '.json':
      return 'json';
    case '.csv':
      return 'csv';
    default:
      return undefined;
  }
}

/**
 * Guesses the format from the first non-blank character: `[` a JSON array, `{` NDJSON,
 * anything else CSV. Returns the stream with the peeked text put back.
 */
export async function sniffFormat(chunks: AsyncIterable<string>): Promise<{ format: InputFormat; chunks: AsyncIterable<string> }> {
  const iterator = chunks[Symbol.asyncIterator]();
  const peeked: string[] = [];
  let first: string | undefined;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    peeked.push(next.value);
    const match = /[^\s\uFEFF]/.exec(next.value);
    if (match) {
      first = match[0];
      break;
    }
  }
  const format: InputFormat = first === '[' ? 'json' : first === '{' ? 'ndjson' : 'csv';
  async function* replay(): AsyncGenerator<string> {
    yield* peeked;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return { format, chunks: replay() };
}

export function readRecords(chunks: AsyncIterable<string>, format: InputFormat): AsyncGenerator<SourceRecord> {
  switch (format) {
    case 'ndjson':
      return readNdjson(chunks);
    case 'json':
      return readJsonArray(chunks);
    case 'csv':
      return readCsv(chunks);
  }
}

// ---------------------------------------------------------------- NDJSON

async function* readNdjson(chunks: AsyncIterable<string>): AsyncGenerator<SourceRecord> {
  let buffer = '';
  let line = 0;
  for await (const chunk of chunks) {
    buffer += chunk;
    let start = 0;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n', start)) {
      const record = ndjsonLine(buffer.slice(start, nl), ++line);
      if (record) yield record;
      start = nl + 1;
    }
    buffer = buffer.slice(start);
  }
  if (buffer !== '') {
    const record = ndjsonLine(buffer, ++line);
    if (record) yield record;
  }
}

function ndjsonLine(text: string, line: number): SourceRecord | undefined {
  let raw = text.endsWith('\r') ? text.slice(0, -1) : text;
  if (line === 1 && raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1);
  if (raw.trim() === '') return undefined;
  try {
    return { line, raw, value: JSON.parse(raw), problems: [] };
  } catch (err) {
    return { line, raw, problems: [{ field: '(json)', message: `not valid JSON: ${(err as Error).message}` }] };
  }
}

// ---------------------------------------------------------------- JSON array

/**
 * Splits a JSON array into its elements' texts while it streams in (tracking nesting and
 * strings), then parses each element on its own: one broken element is one rejected record.
 */
async function* readJsonArray(chunks: AsyncIterable<string>): AsyncGenerator<SourceRecord> {
  type Phase = 'before' | 'expectElement' | 'element' | 'after';
  let phase: Phase = 'before';
  let line = 1;
  let index = 0;
  let text = '';
  let startLine = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let trailing: { line: number; text: string } | undefined;
  const isSpace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\uFEFF';

  const element = (): SourceRecord => {
    const raw = text.trim();
    const at = index++;
    text = '';
    if (raw === '') return { line: startLine, index: at, raw, problems: [{ field: '(json)', message: 'empty array element' }] };
    try {
      return { line: startLine, index: at, raw, value: JSON.parse(raw), problems: [] };
    } catch (err) {
      return { line: startLine, index: at, raw, problems: [{ field: '(json)', message: `not valid JSON: ${(err as Error).message}` }] };
    }
  };

  for await (const chunk of chunks) {
    const out: SourceRecord[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i]!;
      switch (phase) {
        case 'before':
          if (isSpace(ch)) break;
          if (ch !== '[') throw usageError(`the input is not a JSON array (line ${line} starts with "${ch}"); for one JSON object per line use --format ndjson`);
          phase = 'expectElement';
          break;
        case 'expectElement':
          if (isSpace(ch)) break;
          if (ch === ']' && index === 0) {
            phase = 'after';
            break;
          }
          phase = 'element';
          startLine = line;
          i--; // reprocess as the element's first character
          break;
        case 'element':
          if (inString) {
            if (escaped) escaped = false;
            else if (ch === '\\') escaped = true;
            else if (ch === '"') inString = false;
          } else if (ch === '"') inString = true;
          else if (ch === '{' || ch === '[') depth++;
          else if (ch === '}' || ch === ']') {
            if (depth === 0) {
              // the array's closing bracket
              out.push(element());
              phase = 'after';
              break;
            }
            depth--;
          } else if (ch === ',' && depth === 0) {
            out.push(element());
            phase = 'expectElement';
            break;
          }
          text += ch;
          break;
        case 'after':
          if (!isSpace(ch)) {
            trailing ??= { line, text: '' };
            if (trailing.text.length < 80) trailing.text += ch;
          }
          break;
      }
      if (ch === '\n') line++;
    }
    yield* out;
  }

  if (phase === 'element' || phase === 'expectElement') {
    const record = element();
    record.problems.push({ field: '(json)', message: 'the input ends before the array is closed with ]' });
    yield record;
  } else if (phase === 'before') {
    return; // empty input: no records
  }
  if (trailing) {
    yield {
      line: trailing.line,
      index,
      raw: trailing.text,
      problems: [{ field: '(json)', message: `unexpected text after the end of the array: ${trailing.text}` }],
    };
  }
}

// ---------------------------------------------------------------- CSV

async function* readCsv(chunks: AsyncIterable<string>): AsyncGenerator<SourceRecord> {
  const parser = new CsvParser();
  let grouper: CsvOrderGrouper | undefined;
  let header = '';
  const toRecord = (order: CsvOrder): SourceRecord => ({
    line: order.line,
    raw: order.rows.map((r) => r.raw).join('\n'),
    value: order.value,
    problems: order.problems,
    header,
  });
  const consume = function* (rows: ReturnType<CsvParser['push']>): Generator<SourceRecord> {
    for (const row of rows) {
      if (!grouper) {
        try {
          grouper = new CsvOrderGrouper(checkHeader(row));
          header = row.raw;
        } catch (err) {
          if (err instanceof CsvHeaderError) throw usageError(err.message);
          throw err;
        }
        continue;
      }
      for (const order of grouper.push(row)) yield toRecord(order);
    }
  };
  for await (const chunk of chunks) yield* consume(parser.push(chunk));
  yield* consume(parser.end());
  if (grouper) for (const order of grouper.end()) yield toRecord(order);
}
