/**
 * A duration as messages and the Web UI show it: the largest whole unit (15m, 2h, 1500ms), exact,
 * never rounded. Plain code: the workflow bundle imports it. Parsing is `ms`'s (config/settings.ts).
 */
const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
] as const;

export function formatDuration(ms: number): string {
  for (const [unit, size] of UNITS) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
