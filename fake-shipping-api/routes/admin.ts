/**
 * The admin endpoints under /__admin, to steer and observe the fake: GET stats, GET labels,
 * POST reset-stats, GET|POST faults. No authentication, and not counted in the stats.
 */
import type { IncomingMessage } from 'node:http';
import { parseJson, readBody } from '../../local-http';
import { methodNotAllowed, notJson, standard, validationFailed, type Answer } from '../answers';
import { DEFAULTS } from '../defaults';
import { InvalidFaultsError, type Faults } from '../faults';
import { z } from 'zod';
import { fieldProblems } from '../../shipping-api/contract';
import type { FakeState } from '../state';

type AdminHandler = (req: IncomingMessage, fake: FakeState) => Promise<Answer> | Answer;

/** Path under /__admin -> method -> handler; the methods listed make the 405's Allow header. */
const ADMIN_ROUTES: Record<string, Record<string, AdminHandler>> = {
  stats: { GET: (_req, fake) => ({ status: 200, body: fake.traffic.snapshot() }) },
  labels: { GET: (_req, fake) => ({ status: 200, body: { labels: fake.labels.summaries() } }) },
  'reset-stats': {
    POST: (_req, fake) => {
      fake.traffic.resetStats();
      return { status: 200, body: fake.traffic.snapshot() };
    },
  },
  faults: {
    GET: (_req, fake) => ({ status: 200, body: fake.faults.current() }),
    POST: patchFaults,
  },
  // Names, schemes and limits; never a credential.
  accounts: {
    GET: (_req, fake) => ({
      status: 200,
      body: { accounts: fake.accounts.map((a) => ({ name: a.name, auth: a.auth ?? 'headers', rateLimit: a.rateLimit ?? null })) },
    }),
  },
  credentials: { POST: rotateCredentials },
};

const Rotation = z.union([
  z.strictObject({ account: z.string().min(1), apiKey: z.string().min(1), apiToken: z.string().min(1) }),
  z.strictObject({ account: z.string().min(1), accessToken: z.string().min(1) }),
]);

/** POST /__admin/credentials `{account, apiKey, apiToken}` or `{account, accessToken}`: the old ones get 401 from now on. */
async function rotateCredentials(req: IncomingMessage, fake: FakeState): Promise<Answer> {
  const raw = await readBody(req, DEFAULTS.maxBodyBytes);
  if (raw === null) return standard(413);
  const json = parseJson(raw.toString('utf8'));
  if (!json.ok) return notJson(json.message);
  const parsed = Rotation.safeParse(json.value);
  if (!parsed.success)
    return validationFailed(fieldProblems(parsed.error), 'Expected {account, apiKey, apiToken} or {account, accessToken}');
  const { account, ...credentials } = parsed.data;
  try {
    const rotated = fake.rotateCredentials(account, credentials);
    return { status: 200, body: { account: rotated.name, auth: rotated.auth ?? 'headers' } };
  } catch (e) {
    return validationFailed([{ field: 'account', message: (e as Error).message }], 'Cannot rotate');
  }
}

/** POST /__admin/faults: a partial patch; an empty body changes nothing and shows the faults. */
async function patchFaults(req: IncomingMessage, fake: FakeState): Promise<Answer> {
  const raw = await readBody(req, DEFAULTS.maxBodyBytes);
  if (raw === null) return standard(413);
  const text = raw.toString('utf8');
  const json = text.trim() === '' ? { ok: true as const, value: {} } : parseJson(text);
  if (!json.ok) return notJson(json.message);
  try {
    return { status: 200, body: fake.faults.set(json.value as Partial<Faults>) };
  } catch (e) {
    if (e instanceof InvalidFaultsError) return validationFailed(e.details, 'Invalid faults patch');
    throw e;
  }
}

export async function handleAdmin(req: IncomingMessage, method: string, path: string, fake: FakeState): Promise<Answer> {
  const handlers = ADMIN_ROUTES[path];
  if (!handlers) return standard(404, 'Unknown admin endpoint');
  const handler = handlers[method];
  if (!handler) return methodNotAllowed(method, Object.keys(handlers).join(', '));
  return handler(req, fake);
}
