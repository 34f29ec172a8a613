import { expect, it } from 'vitest';
import { freePort } from '../dev-server/free-port';

it('never hands out one port twice in a process: each is free until its child binds it', async () => {
  // 500 picks among the ~12,000 ports below the ephemeral range: a repeat is near certain by chance.
  const ports: number[] = [];
  for (let i = 0; i < 500; i++) ports.push(await freePort());
  expect(new Set(ports).size).toBe(ports.length);
});
