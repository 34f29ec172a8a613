/**
 * Preflight of an import: a courier code must be one GET /couriers returns, and a product code
 * one GET /products returns for that courier. The courier list is read once per run, each
 * courier's products at most once per run (the first record of that courier waits for it; the
 * others share the answer), so 10,000 orders cost 1 + (number of couriers) requests.
 */
import type { Courier, FieldProblem, LabelRequestWithoutKey, Product } from '../shipping-api/contract';

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
