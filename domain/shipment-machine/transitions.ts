/**
 * The shipment's transitions of phase, revision and attention mark: the one place each is
 * written. The machine's decisions apply them to its own state, and the workflow (the shell that
 * carries the commands out) applies the same ones to its state, so the model test drives the
 * code the workflow runs. Each takes only the fields it writes: both states fit.
 */
import type { OutcomeKind } from '../shipment';
import type { Attention, Phase } from './state';

interface Phased {
  phase: Phase | 'parcels';
}

/** The label of the current revision is asked for (also a relabel's); the workflow names the revision the machine asked for. */
export function labelAsked(s: Phased & { revision?: number }, revision?: number): void {
  s.phase = 'creating_label';
  if (revision !== undefined) s.revision = revision;
}

/** A rejected label (or a changed order that does not map) waits for an operator's corrected data. */
export function correctionAwaited(s: Phased): void {
  s.phase = 'awaiting_correction';
}

/** The merchant holds the order: the label waits for the release. */
export function heldInShop(s: Phased): void {
  s.phase = 'held_in_shop';
}

/** The label came back: its order is read next. */
export function labelMade(s: Phased): void {
  s.phase = 'reading_order';
}

/** The shipment tracks its label (a new one, or the old one still when a relabel made none). */
export function tracks(s: Phased): void {
  s.phase = 'tracking';
}

/** The shipment ends with this outcome. */
export function ends<O extends OutcomeKind>(s: Phased & { outcome: O | null }, outcome: O): void {
  s.phase = 'completed';
  s.outcome = outcome;
}

/** The next revision: a corrected request, a changed order taken in, or a relabel (one key, one request). */
export function nextRevision(s: { revision: number }): number {
  return ++s.revision;
}

/** The mark a person should look at (null: none). */
export function markAttention(shop: { attention: Attention | null }, attention: Attention | null): void {
  shop.attention = attention;
}

/** The label was refused for good: the shipment ends failed (the workflow fails; no outcome is its own). */
export function fails(s: Phased): void {
  s.phase = 'completed';
}
