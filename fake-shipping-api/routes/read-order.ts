/** GET /orders/{orderId}: the order and its carrier details; the order id is the label id. */
import { standard } from '../answers';
import { orderDetail } from '../records';
import { ownedLabel, type EndpointHandler } from './endpoint';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const readOrder: EndpointHandler = ({ account, id }, fake) => {
  // Not a uuid: no order can have it, so 404 before any lookup (ids are stored lower-case).
  if (!UUID.test(id!)) return standard(404, 'Order not found');
  const found = ownedLabel(fake, account, id!.toLowerCase(), 'Order not found');
  return 'answer' in found ? found.answer : { status: 200, body: orderDetail(found.record, Date.now(), fake.trackingStepMs) };
};
