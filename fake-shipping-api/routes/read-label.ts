/** GET /labels/{id}: the label document as it stands now (tracking number once known). */
import { labelDocument } from '../records';
import { ownedLabel, type EndpointHandler } from './endpoint';

export const readLabel: EndpointHandler = ({ account, id }, fake) => {
  const found = ownedLabel(fake, account, id!, 'Label not found');
  return 'answer' in found ? found.answer : { status: 200, body: labelDocument(found.record, Date.now(), fake.trackingStepMs) };
};
