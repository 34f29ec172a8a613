/**
 * Preflight of an import: a courier code must be one GET /couriers returns, and a product code
 * one GET /products returns for that courier. The courier list is read once per run, each
 * courier's products at most once per run (the first record of that courier waits for it; the
 * others share the answer), so 10,000 orders cost 1 + (number of couriers) requests.
 */
import type { Courier, FieldProblem, LabelRequestWithoutKey, Product } from '../shipping-api/contract';
import { ShippingApiError } from '../shipping-api/errors';
import { afterFailure, type AttemptProgress } from '../workflow-definitions/activity-failures';
import { readAgainUntil, type ReadAgainOptions } from './read-again';
import { DEFAULT_SHIPPING_ACCOUNT } from '../domain/shipment';

/** The part of ShippingApiClient the preflight needs. */
export interface Catalog {
  listCouriers(): Promise<Courier[]>;
  listProducts(courier: string): Promise<Product[]>;
}

export class Preflight {
  private readonly products = new Map<string, Promise<Set<string>>>();

  private constructor(
    private readonly catalog: Catalog,
    private readonly couriers: Set<string>,
  ) {}

  /** Reads the courier list; its failure is the caller's to report (nothing has started yet). */
  static async create(catalog: Catalog): Promise<Preflight> {
    const couriers = await catalog.listCouriers();
    return new Preflight(catalog, new Set(couriers.map((c) => c.code)));
  }

  /**
   * The record's problems: an unknown courier, or an unknown product of a known courier.
   * Rejects (throws) only when a product list cannot be read.
   */
  async check(labelRequest: LabelRequestWithoutKey): Promise<FieldProblem[]> {
    const { courier } = labelRequest;
    if (!this.couriers.has(courier)) {
      return [
        {
          field: 'labelRequest.courier',
          message: `unknown courier "${courier}"; GET /couriers offers: ${[...this.couriers].join(', ') || '(none)'}`,
        },
      ];
    }
    const products = await this.productsOf(courier);
    const code = labelRequest.service.productCode;
    if (products.has(code)) return [];
    return [
      {
        field: 'labelRequest.service.productCode',
        message: `courier "${courier}" has no product "${code}"; GET /products offers: ${[...products].join(', ') || '(none)'}`,
      },
    ];
  }

  private productsOf(courier: string): Promise<Set<string>> {
    let entry = this.products.get(courier);
    if (!entry) {
      entry = this.catalog.listProducts(courier).then((list) => new Set(list.map((p) => p.code)));
      this.products.set(courier, entry);
    }
    return entry;
  }
}

/**
 * The preflight of each shipping account: an order is checked against its shop's account (the
 * couriers and products one account offers another may not). Each account's courier list is
 * read once, by the first record that needs it, or at once with `ready` (the command line
 * reads the default account's before anything starts). A list that cannot be read fails the
 * records of that account, naming it.
 */
export class AccountPreflights {
  private readonly byAccount = new Map<string, Promise<Preflight>>();

  constructor(private readonly catalogOf: (account: string) => Promise<Catalog>) {}

  ready(account: string = DEFAULT_SHIPPING_ACCOUNT): Promise<Preflight> {
    let entry = this.byAccount.get(account);
    if (!entry) {
      entry = this.catalogOf(account).then((catalog) => Preflight.create(catalog));
      entry.catch(() => {}); // reported to each record that waits for it
      this.byAccount.set(account, entry);
    }
    return entry;
  }

  async check(labelRequest: LabelRequestWithoutKey, account: string = DEFAULT_SHIPPING_ACCOUNT): Promise<FieldProblem[]> {
    let preflight: Preflight;
    try {
      preflight = await this.ready(account);
    } catch (err) {
      throw new AccountPreflightError(account, `cannot read GET /couriers: ${messageOf(err)}`, err);
    }
    try {
      return await preflight.check(labelRequest);
    } catch (err) {
      throw new AccountPreflightError(account, `cannot read GET /products?courier=${labelRequest.courier}: ${messageOf(err)}`, err);
    }
  }
}

/** A record not started because its account's couriers or products could not be read (held past --deadline, refused, …). */
export class AccountPreflightError extends Error {
  override readonly name = 'AccountPreflightError';

  constructor(
    readonly account: string,
    /** What could not be read, and why. */
    readonly reason: string,
    cause: unknown,
  ) {
    super(`preflight of shipping account "${account}": ${reason}`, { cause });
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** How a command's reads of the shipping API ride out an account's hold: until `--deadline`, saying so. */
export type PatientReads = ReadAgainOptions;

/**
 * Whether a read of the shipping API is waited out: a 429 (the account is held) or a 5xx (the
 * API fails in passing). Anything else ends the read at once: an unreachable API or refused
 * credentials are the operator's to fix.
 */
export function waitedOut(err: unknown): err is ShippingApiError {
  return err instanceof ShippingApiError && (err.kind === 'rate_limited' || err.kind === 'server_error');
}

/**
 * One read of the shipping API, tried again after a 429 once its Retry-After has passed, or after
 * a 5xx with the workers' backoff (both by afterFailure, the one rule of every API call), until
 * `deadline`. Anything else ends it at once (see waitedOut), as does a wait that would end after
 * the deadline.
 */
export async function readPatiently<T>(what: string, read: () => Promise<T>, options: PatientReads): Promise<T> {
  let progress: AttemptProgress = {};
  return readAgainUntil(
    read,
    {
      next: (err) => {
        if (!waitedOut(err)) return null;
        const after = afterFailure(err, progress, Date.now());
        if (!after.retryable) return null;
        progress = after;
        const seconds = Math.ceil(after.delayMs / 1000);
        return {
          waitMs: after.delayMs,
          line: (deadline) =>
            err.kind === 'rate_limited'
              ? `${what}: the account is held (429, Retry-After ${seconds} s); reading again then (deadline ${deadline})`
              : `${what}: ${err.message}; reading again in ${seconds} s (failure ${after.failuresInARow} in a row, deadline ${deadline})`,
        };
      },
      stop: (err, deadline) =>
        deadline === null || !(err instanceof ShippingApiError)
          ? err
          : new ShippingApiError({
              ...err.toJSON(),
              message: `${err.message}; the --deadline (${deadline}) comes before it may be read again`,
            }),
    },
    options,
  );
}

/** The catalog's reads, each ridden out as readPatiently does. */
export function patientCatalog(catalog: Catalog, what: string, options: PatientReads): Catalog {
  return {
    listCouriers: () => readPatiently(`${what}: GET /couriers`, () => catalog.listCouriers(), options),
    listProducts: (courier) => readPatiently(`${what}: GET /products?courier=${courier}`, () => catalog.listProducts(courier), options),
  };
}
