/**
 * A one-line progress bar on a terminal's stderr, redrawn at most ten times a second. When the
 * input's size is known the bar shows the share of it read; otherwise only counts. Nothing at
 * all is drawn when stderr is not a terminal (pipes, CI logs, tests).
 */
export interface ProgressCounts {
  records: number;
  started: number;
  alreadyKnown: number;
  rejected: number;
  failed: number;
  accepted: number;
}

type TtyStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export class Progress {
  private lastDraw = 0;
  private drawn = false;
  readonly enabled: boolean;

  constructor(
    private readonly stream: TtyStream,
    private readonly dryRun: boolean,
    private readonly size: { total?: number; read: () => number },
  ) {
    this.enabled = stream.isTTY === true;
  }

  update(counts: ProgressCounts, force = false): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const width = Math.max(40, (this.stream.columns || 80) - 1);
    const parts = this.dryRun
      ? [`${counts.records} records`, `${counts.accepted} valid`, `${counts.rejected} rejected`]
      : [
          `${counts.records} records`,
          `${counts.started} started`,
          `${counts.alreadyKnown} known`,
          `${counts.rejected} rejected`,
          `${counts.failed} failed`,
        ];
    let line = parts.join(' · ');
    const { total } = this.size;
    if (total !== undefined && total > 0) {
      const share = Math.min(1, this.size.read() / total);
      const barWidth = Math.max(10, Math.min(30, width - line.length - 8));
      const filled = Math.round(share * barWidth);
      line = `[${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}] ${String(Math.round(share * 100)).padStart(3)}% ${line}`;
    }
    this.stream.write(`\r\x1b[2K${line.slice(0, width)}`);
    this.drawn = true;
  }

  /** Draws the final counts and leaves them on their own line. */
  finish(counts: ProgressCounts): void {
    if (!this.enabled) return;
    this.update(counts, true);
    this.stream.write('\n');
    this.drawn = false;
  }

  /** Removes the bar so another line can be written; the next update draws it again. */
  clear(): void {
    if (!this.enabled || !this.drawn) return;
    this.stream.write('\r\x1b[2K');
    this.drawn = false;
    this.lastDraw = 0;
  }
}
