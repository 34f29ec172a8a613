/**
 * `npm run dev` in a terminal that has the banner's `export SHIPPING_API_BASE_URL=…`: the
 * address is dev's own fake's, so when nothing listens there dev starts the fake instead of
 * pointing the worker at nothing; any other address, or one something answers on, is used as given.
 */
import net from 'node:net';
import { expect, it } from 'vitest';
import { isIdleOwnFakeApi } from '../dev-server/own-fake-api';
import { freePort } from '../dev-server/free-port';

it("takes dev's own fake address with nothing listening for a left-over export, and anything else for a real choice", async () => {
  const port = await freePort();
  expect(await isIdleOwnFakeApi(`http://127.0.0.1:${port}`, port)).toBe(true);
  expect(await isIdleOwnFakeApi(`http://localhost:${port}/`, port)).toBe(true);
  // Another port, another host, or no URL at all: the user's own API.
  expect(await isIdleOwnFakeApi(`http://127.0.0.1:${port + 1}`, port)).toBe(false);
  expect(await isIdleOwnFakeApi(`https://api.example.com:${port}`, port)).toBe(false);
  expect(await isIdleOwnFakeApi('not a url', port)).toBe(false);
  // Something answers there (a fake started by hand, another dev): used as given.
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  try {
    expect(await isIdleOwnFakeApi(`http://127.0.0.1:${port}`, port)).toBe(false);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
