/**
 * A small streaming RFC 4180 CSV parser: quoted fields, doubled quotes ("") inside them, commas
 * and line breaks inside quotes, CRLF or LF row ends, an optional UTF-8 BOM. Text is fed in
 * chunks of any size (a quote or a CRLF may be split between chunks) and complete rows come
 * out as soon as they end, so a file of any length is parsed in constant memory.
 *
 * Two lenient choices, both common in real exports: a quote inside an unquoted field is kept as
 * a literal character, and empty lines are skipped. Text after a closing quote ("ab"c) and a
 * quote left open at the end of the input are errors of that row (`row.error`), not exceptions,
 * so the caller can reject the row and go on.
 */

import { PREVIEW_CHARS, RECORD_LIMITS } from './limits';

export interface CsvRow {
  fields: string[];
  /** 1-based physical line on which the row starts (line breaks inside quotes count). */
  line: number;
  /** The row's original text, without its line break. */
  raw: string;
  /** Set when the row is malformed; `fields` then holds what could be read. */
  error?: string;
}

type State = 'fieldStart' | 'unquoted' | 'quoted' | 'quoteInQuoted';

/** Characters that end a run of plain text in an unquoted field, and in a quoted one (line breaks are counted). */
const UNQUOTED_SPECIAL = /[,\r\n]/g;
const QUOTED_SPECIAL = /["\r\n]/g;

export class CsvParser {
  private state: State = 'fieldStart';
  private field = '';
  private fields: string[] = [];
  private raw = '';
  private error: string | undefined;
  private line = 1;
  private rowLine = 1;
  /** The previous chunk ended with CR: a LF at the start of the next one belongs to it. */
  private pendingCr = false;
  private previous = '';
  private started = false;
  private out: CsvRow[] = [];

  /** Feeds a chunk; returns the rows completed by it. */
  push(chunk: string): CsvRow[] {
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      if (this.pendingCr) {
        this.pendingCr = false;
        if (ch === '\n') continue; // the LF of a CRLF split across chunks
      }
      const plainEnd = this.plainRunEnd(text, i);
      if (plainEnd > i + 1) {
        // A run of characters that change no state is appended at once: time linear in the row's length.
        const part = text.slice(i, plainEnd);
        this.field += part;
        this.raw += part;
        i = plainEnd - 1;
      } else this.step(ch);
      this.previous = text[i]!;
      if (this.raw.length > RECORD_LIMITS.maxChars) this.dropOverlongRow();
    }
    return this.take();
  }

  /** Ends the input; returns the last row, if any. */
  end(): CsvRow[] {
    if (this.state === 'quoted') {
      this.error = `a quoted field opened on line ${this.rowLine} is never closed`;
    }
    if (this.state !== 'fieldStart' || this.fields.length > 0 || this.raw !== '') this.endRow();
    return this.take();
  }

  /** End of the run of ordinary characters at `i` inside a field (i itself when there is none). */
  private plainRunEnd(text: string, i: number): number {
    const special = this.state === 'unquoted' ? UNQUOTED_SPECIAL : this.state === 'quoted' ? QUOTED_SPECIAL : undefined;
    if (!special) return i;
    special.lastIndex = i;
    return special.exec(text)?.index ?? text.length;
  }

  /** A row longer than a record may be keeps only its start, so memory stays bounded; it becomes a row error. */
  private dropOverlongRow(): void {
    this.error ??= `the row on line ${this.rowLine} is longer than ${RECORD_LIMITS.maxChars} characters (only its start is kept)`;
    this.raw = this.raw.slice(0, PREVIEW_CHARS);
    this.field = '';
    this.fields = [];
  }

  private take(): CsvRow[] {
    const rows = this.out;
    this.out = [];
    return rows;
  }

  private step(ch: string): void {
    switch (this.state) {
      case 'fieldStart':
        if (ch === '"') {
          this.state = 'quoted';
          this.raw += ch;
          return;
        }
        this.state = 'unquoted';
        return this.step(ch);

      case 'unquoted':
        if (ch === ',') {
          this.raw += ch;
          return this.endField();
        }
        if (ch === '\n' || ch === '\r') return this.lineBreak(ch);
        this.field += ch;
        this.raw += ch;
        return;

      case 'quoted':
        this.raw += ch;
        if (ch === '"') {
          this.state = 'quoteInQuoted';
          return;
        }
        if (ch === '\r' || ch === '\n') this.countLine(ch);
        this.field += ch;
        return;

      case 'quoteInQuoted':
        if (ch === '"') {
          // "" inside a quoted field is one literal quote.
          this.field += '"';
          this.raw += ch;
          this.state = 'quoted';
          return;
        }
        if (ch === ',') {
          this.raw += ch;
          return this.endField();
        }
        if (ch === '\n' || ch === '\r') return this.lineBreak(ch);
        this.error ??= `unexpected text after a closing quote on line ${this.line}`;
        this.field += ch;
        this.raw += ch;
        this.state = 'unquoted';
        return;
    }
  }

  private countLine(ch: string): void {
    // CRLF counts once: the CR counts, the LF after it does not.
    if (ch === '\r' || this.previous !== '\r') this.line++;
  }

  private lineBreak(ch: string): void {
    this.endRow();
    this.line++;
    this.rowLine = this.line;
    if (ch === '\r') this.pendingCr = true;
  }

  private endField(): void {
    this.fields.push(this.field);
    this.field = '';
    this.state = 'fieldStart';
  }

  private endRow(): void {
    this.fields.push(this.field);
    const empty = this.fields.length === 1 && this.fields[0] === '' && this.raw === '' && this.error === undefined;
    if (!empty) {
      const row: CsvRow = { fields: this.fields, line: this.rowLine, raw: this.raw };
      if (this.error !== undefined) row.error = this.error;
      this.out.push(row);
    }
    this.fields = [];
    this.field = '';
    this.raw = '';
    this.error = undefined;
    this.state = 'fieldStart';
  }
}

/** Parses a whole text at once. */
export function parseCsv(text: string): CsvRow[] {
  const parser = new CsvParser();
  return [...parser.push(text), ...parser.end()];
}
