/**
 * Warnings of the Temporal dev server that look like faults in `npm run dev`'s terminal and are
 * not: an update or a long poll that waits (the resubmit and redeliver updates wait for the
 * shipment) is logged as a slow call. Anything at ERROR or above is always shown.
 */
export function isHarmlessServerWarning(line: string): boolean {
  return /level=WARN/i.test(line) && /Slow gRPC call/.test(line);
}
