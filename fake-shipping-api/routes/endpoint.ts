/** What every API route gets, and the ownership check the label and order routes share. */
import { standard, type Answer } from '../answers';
import type { LabelRecord } from '../records';
import type { FakeState } from '../state';
import type { AnyFakeAccount } from '../types';

/** An authenticated API request that got past the injected faults. */
export interface ApiRequest {
  account: AnyFakeAccount;
  /** The label, order or tracking id in the path; the router sets it for the `/{id}` routes. */
  id?: string;
  url: URL;
  /** POST /labels only: the body, or null when it passed the size limit. */
  body: string | null;
}

/** One endpoint. Synchronous on purpose: nothing may interleave with its state changes. */
export type EndpointHandler = (request: ApiRequest, fake: FakeState) => Answer;

/** The label with `id` if the account owns it; another account's label is a 403, not a 404. */
export function ownedLabel(
  fake: FakeState,
  account: AnyFakeAccount,
  id: string,
  notFound: string,
): { record: LabelRecord } | { answer: Answer } {
  const record = fake.labels.get(id);
  if (!record) return { answer: standard(404, notFound) };
  if (record.account !== account.name) return { answer: standard(403, 'Forbidden') };
  return { record };
}
