/**
 * The text of the order notes the WooCommerce connector writes. Deterministic from the event,
 * so a note already on the order is recognised by its text and never written twice; the event's
 * reference at its end (markNote) tells a copy of this event's note from the same words of another.
 */
import type { LabelCreatedData, LabelRejectedData, TrackingUpdatedData } from '../../domain/events';

/** `carrier`: the courier's provider name when the connector knows one, else its code. */
export function labelNote(label: LabelCreatedData | null, number: string | null, carrierName?: string | null): string {
  const carrier = carrierName ?? label?.courier ?? 'the carrier';
  if (number === null) return `Shipping label created with ${carrier} (revision ${label?.revision ?? 1}); the tracking number follows.`;
  return `Shipped with ${carrier}, tracking number ${number}.`;
}

export function trackingNote(tracking: TrackingUpdatedData): string {
  const checkpoint = tracking.lastCheckpoint;
  const place = [checkpoint?.city ?? checkpoint?.location, checkpoint?.countryRegion].filter(Boolean).join(', ');
  const when = checkpoint?.checkpointTime ? ` at ${formatTime(checkpoint.checkpointTime)}` : '';
  const what = tracking.subtagMessage ?? checkpoint?.message ?? tracking.tag;
  return clip(`Tracking ${tracking.trackingNumber ?? ''}: ${what}${place ? ` (${place})` : ''}${when}.`.replace('Tracking :', 'Tracking:'));
}

export function deliveredNote(tracking: TrackingUpdatedData): string {
  const when = tracking.lastCheckpoint?.checkpointTime ? ` at ${formatTime(tracking.lastCheckpoint.checkpointTime)}` : '';
  return clip(`Delivered${when} (tracking ${tracking.trackingNumber ?? 'unknown'}).`);
}

export function rejectedNote(rejection: LabelRejectedData): string {
  return clip(`Shipping label rejected (revision ${rejection.revision}): ${rejection.courierMessage ?? rejection.message}`);
}

/** ISO time in UTC to the minute, the way a note reads it. */
function formatTime(iso: string): string {
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? iso : `${t.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function clip(text: string): string {
  return text.length > 1000 ? `${text.slice(0, 999)}…` : text;
}

/** The note as written: its text and the event's reference (the first 8 hex digits of its id). */
export function markNote(text: string, eventId: string): string {
  return `${text} (ref ${eventId.slice(4, 12)})`;
}

/** Whether a note carries an event's reference: one of ours. */
export function isMarked(note: string): boolean {
  return / \(ref [0-9a-f]{8}\)$/.test(note);
}
