/**
 * The `courier` metric label from a closed set: the courier codes the account's GET /couriers
 * lists (read at worker start and every hour), anything else `other`. A label request's courier
 * is order data: a name, an e-mail and a phone number became a Prometheus series, one per order.
 */
import type { Courier } from '../shipping-api/contract';

/** More codes than an account plausibly has would be order data again: the rest count as `other`. */
export const MAX_COURIER_LABELS = 200;
const COURIER_CODE = /^[A-Za-z0-9._-]{1,64}$/;
export const REFRESH_EVERY_MS = 3_600_000;

export class CourierLabels {
  private known: ReadonlySet<string> = new Set();

  /** The label value of `courier`: its code when the account lists it, else `other`. */
  label(courier: unknown): string {
    return typeof courier === 'string' && this.known.has(courier) ? courier : 'other';
  }

  replace(couriers: readonly Courier[]): void {
    this.known = new Set(
      couriers
        .map((c) => c.code)
        .filter((code) => COURIER_CODE.test(code))
        .slice(0, MAX_COURIER_LABELS),
    );
  }
}

export const courierLabels = new CourierLabels();

/**
 * Reads the account's couriers now and every REFRESH_EVERY_MS. A failed read keeps the last
 * set (all `other` until one succeeds) and is logged; it never stops the worker.
 */
export function watchCourierCodes(
  listCouriers: () => Promise<Courier[]>,
  warn: (message: string, meta: Record<string, unknown>) => void,
  labels: CourierLabels = courierLabels,
): { close(): void } {
  const refresh = () =>
    listCouriers().then(
      (couriers) => labels.replace(couriers),
      (err: unknown) =>
        warn('cannot read GET /couriers for the courier metric label; unknown couriers count as "other"', { err: String(err) }),
    );
  void refresh();
  const timer = setInterval(() => void refresh(), REFRESH_EVERY_MS);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
