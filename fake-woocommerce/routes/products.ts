/** GET /wc/v3/products/{id}: what a label needs that an order line lacks (weight, dimensions). */
import { productJson } from '../order-json';
import { ok, wpError, type Reply } from '../replies';
import type { RouteContext } from './context';

export function getProduct(ctx: RouteContext): Reply {
  const product = ctx.state.store.products.get(ctx.match.id!);
  if (!product) return wpError(404, 'woocommerce_rest_product_invalid_id', 'Invalid ID.');
  return ctx.permit() ?? ok(productJson(product, ctx.state.json()));
}
