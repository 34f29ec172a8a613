/** GET /couriers: every courier of the catalog. */
import type { z } from 'zod';
import type { CourierList } from '../../shipping-api/contract';
import { CATALOG } from '../catalog';
import type { EndpointHandler } from './endpoint';

export const listCouriers: EndpointHandler = () => {
  const body: z.infer<typeof CourierList> = { couriers: CATALOG.map((c) => ({ ...c.courier })) };
  return { status: 200, body };
};
