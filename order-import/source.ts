/**
 * Reads import records from a text stream, one at a time, in NDJSON, a JSON array or CSV.
 * Nothing holds more than one record (or one CSV order) in memory, so the size of the input
 * does not matter. Problems of a single record (a line that is not JSON, a malformed CSV row)
 * are attached to that record; only a document that is not of the announced format at all
 * (a JSON file that is not an array, an unknown CSV column) stops the run, before any record.
 */
import { extname } from 'node:path';
import type { FieldProblem } from '../shipping-api/contract';
import { CsvParser } from './csv';
import { checkHeader, CsvHeaderError, CsvOrderGrouper, type CsvOrder } from './csv-orders';
import { dottedPath } from '../shipping-api/contract';
import { INVALID_UTF8 } from './utf8';

import { PREVIEW_CHARS, RECORD_LIMITS } from './limits';

/** The input as a whole cannot be read (empty, not the format named, a broken CSV header): the command's usage exit. */
export class InputError extends Error {
  override readonly name = 'InputError';
}

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

export async function* readRecords(chunks: AsyncIterable<string>, format: InputFormat): AsyncGenerator<SourceRecord> {
  // An empty file is a mistake far more often than a quiet day (a wrong path, an export that
  // failed): refused, not "0 records". An explicit empty document (`[]`, a CSV header) is fine.
  let blank = true;
  const watched = (async function* () {
    for await (const chunk of chunks) {
      if (blank && /\S/.test(chunk)) blank = false;
      yield chunk;
    }
  })();
  let records = 0;
  for await (const record of READERS[format](watched)) {
    records++;
    yield record;
  }
  if (records === 0 && blank) throw new InputError('the input is empty: it holds no records (is it the right file?)');
}

const READERS: Record<InputFormat, (chunks: AsyncIterable<string>) => AsyncGenerator<SourceRecord>> = {
  ndjson: (chunks) => readNdjson(chunks),
  json: (chunks) => readJsonArray(chunks),
  csv: (chunks) => readCsv(chunks),
};

// ---------------------------------------------------------------- NDJSON

async function* readNdjson(chunks: AsyncIterable<string>): AsyncGenerator<SourceRecord> {
  // Each chunk is searched once for line breaks (only its own text), so a line of any length
  // costs time in proportion to its length; one longer than a record may be is not kept.
  let pending = new BoundedText();
  let line = 0;
  for await (const chunk of chunks) {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      pending.add(chunk.slice(start, nl));
      const record = ndjsonLine(pending, ++line);
      if (record) yield record;
      pending = new BoundedText();
      start = nl + 1;
    }
    pending.add(chunk.slice(start));
  }
  if (pending.length > 0) {
    const record = ndjsonLine(pending, line + 1);
    if (record) yield record;
  }
}

function ndjsonLine(pending: BoundedText, line: number): SourceRecord | undefined {
  if (pending.tooLong) return tooLong(pending, line);
  let raw = pending.text.endsWith('\r') ? pending.text.slice(0, -1) : pending.text;
  if (line === 1 && raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1);
  if (raw.trim() === '') return undefined;
  return parsed({ line, raw, problems: [] });
}

/** Text of one record while it streams in: whole up to RECORD_LIMITS.maxChars, then only its start and length. */
class BoundedText {
  text = '';
  length = 0;

  get tooLong(): boolean {
    return this.length > RECORD_LIMITS.maxChars;
  }

  add(part: string): void {
    const wasTooLong = this.tooLong;
    this.length += part.length;
    if (!this.tooLong) this.text += part;
    else if (!wasTooLong) this.text = (this.text + part.slice(0, PREVIEW_CHARS)).slice(0, PREVIEW_CHARS);
  }
}

function tooLong(text: BoundedText, line: number, index?: number): SourceRecord {
  const record: SourceRecord = {
    line,
    raw: `${text.text}…`,
    problems: [
      {
        field: '(size)',
        message: `the record has ${text.length} characters; one record may have at most ${RECORD_LIMITS.maxChars} (only its start is kept)`,
      },
    ],
  };
  if (index !== undefined) record.index = index;
  return record;
}

/**
 * Parses a record's text: not JSON, invalid UTF-8, deeper than RECORD_LIMITS.maxDepth or a
 * `__proto__` key is a problem of that record. A record too deep keeps no parsed value, so no
 * later step (the rejects file, Temporal) has to serialize it.
 */
function parsed(record: SourceRecord): SourceRecord {
  const encoding = encodingProblem(record.raw, record.line);
  if (encoding) return { ...record, problems: [...record.problems, encoding] };
  let value: unknown;
  try {
    value = JSON.parse(record.raw);
  } catch (err) {
    return { ...record, problems: [...record.problems, { field: '(json)', message: `not valid JSON: ${(err as Error).message}` }] };
  }
  const problems = structureProblems(value);
  if (problems.some((p) => p.field === '(depth)')) return { ...record, problems: [...record.problems, ...problems] };
  return { ...record, value, problems: [...record.problems, ...problems] };
}

/** Line `line` (or a later one of the same record) holds bytes that are not UTF-8. */
export function encodingProblem(text: string, line: number): FieldProblem | undefined {
  const at = text.indexOf(INVALID_UTF8);
  if (at < 0) return undefined;
  const where = line + countLineBreaks(text, at);
  return {
    field: '(encoding)',
    message: `line ${where} is not valid UTF-8 (byte ${at + 1} of the record cannot be decoded); fix the file's encoding`,
  };
}

function countLineBreaks(text: string, end: number): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < end; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Nesting deeper than allowed and `__proto__` keys (JSON.parse keeps them as own keys, which a copy would turn into a prototype), without recursion. */
export function structureProblems(value: unknown): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const stack: Array<{ node: unknown; path: Array<string | number> }> = [{ node: value, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (path.length >= RECORD_LIMITS.maxDepth) {
      return [{ field: '(depth)', message: `nested deeper than ${RECORD_LIMITS.maxDepth} levels (at ${dottedPath(path.slice(0, 8))}…)` }];
    }
    for (const key of Object.keys(node)) {
      const at = [...path, Array.isArray(node) ? Number(key) : key];
      if (key === '__proto__') problems.push({ field: dottedPath(at), message: 'is not allowed as a field name' });
      else stack.push({ node: (node as Record<string, unknown>)[key], path: at });
    }
  }
  return problems;
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
  let text = new BoundedText();
  let startLine = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let trailing: { line: number; text: string } | undefined;
  const isSpace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\uFEFF';

  const element = (): SourceRecord => {
    const at = index++;
    const whole = text;
    text = new BoundedText();
    if (whole.tooLong) return tooLong(whole, startLine, at);
    const raw = whole.text.trim();
    if (raw === '') return { line: startLine, index: at, raw, problems: [{ field: '(json)', message: 'empty array element' }] };
    return parsed({ line: startLine, index: at, raw, problems: [] });
  };

  for await (const chunk of chunks) {
    const out: SourceRecord[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i]!;
      switch (phase) {
        case 'before':
          if (isSpace(ch)) break;
          if (ch !== '[')
            throw new InputError(
              `the input is not a JSON array (line ${line} starts with "${ch}"); for one JSON object per line use --format ndjson`,
            );
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
          text.add(ch);
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
  const toRecord = (order: CsvOrder): SourceRecord => {
    const raw = order.rows.map((r) => r.raw).join('\n');
    const encoding = order.rows.map((r) => encodingProblem(r.raw, r.line)).find((p) => p !== undefined);
    return { line: order.line, raw, value: order.value, problems: encoding ? [encoding, ...order.problems] : order.problems, header };
  };
  const consume = function* (rows: ReturnType<CsvParser['push']>): Generator<SourceRecord> {
    for (const row of rows) {
      if (!grouper) {
        try {
          grouper = new CsvOrderGrouper(checkHeader(row));
          header = row.raw;
        } catch (err) {
          if (err instanceof CsvHeaderError) throw new InputError(err.message);
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
