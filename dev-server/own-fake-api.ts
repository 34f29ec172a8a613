/**
 * `SHIPPING_API_BASE_URL` left over from an earlier dev banner: the banner prints an export of
 * the fake's own address for the other terminal, and a user who then restarts `npm run dev`
 * in that terminal would otherwise get a worker calling an address nothing listens on.
 */
import { portProblem } from '../launcher/ports';

/** Whether `url` is dev's own fake API address (loopback, the fake's port) with nothing listening on it. */
export async function isIdleOwnFakeApi(url: string, fakeApiPort: number): Promise<boolean> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname);
  if (!loopback || Number(parsed.port) !== fakeApiPort) return false;
  return (await portProblem(fakeApiPort, 'fake shipping API', '--fake-api-port')) === null;
}
