/** GET /products?courier=<code>: the shipping products one courier offers. */
import type { z } from 'zod';
import type { ProductList } from '../../shipping-api/contract';
import { standard, validationFailed } from '../answers';
import { findCourier } from '../catalog';
import type { EndpointHandler } from './endpoint';

export const listProducts: EndpointHandler = ({ url }) => {
  const code = url.searchParams.get('courier');
  if (code === null || code === '') {
    return validationFailed([{ field: 'courier', message: 'query parameter is required' }]);
  }
  const courier = findCourier(code);
  if (!courier) return standard(404, `Courier not found: ${code}`);
  const body: z.infer<typeof ProductList> = { products: courier.products.map((p) => ({ ...p })) };
  return { status: 200, body };
};
