/**
 * The workflow sees plain types (shipment.ts, shop-order.ts), the edges validate with zod
 * (schemas.ts, events.ts): this file stops compiling when the two drift apart. Nothing imports
 * it; the type check and the build read it.
 */
import type { z } from 'zod';
import type { Outcome } from './events';
import type { ShopOrderSeen, TrackingPolicy } from './schemas';
import type { OutcomeKind, TrackingPolicy as TrackingPolicyShape } from './shipment';
import type { ShopOrderSeen as ShopOrderSeenShape } from './shop-order';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const policyMatches: Same<z.infer<typeof TrackingPolicy>, TrackingPolicyShape> = true;
const seenMatches: Same<z.infer<typeof ShopOrderSeen>, ShopOrderSeenShape> = true;
const outcomesMatch: Same<Outcome, OutcomeKind> = true;
void policyMatches;
void seenMatches;
void outcomesMatch;
