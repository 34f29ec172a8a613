import { it } from 'vitest';
import { simulate } from './helpers/pacer-sim';
it('diag', async () => {
  for (const shares of ['fleet'] as const) {
    const run = await simulate({ seconds: 60, limit: () => 2, demand: { clients: 6, thinkMs: 1000 }, workers: 1, shares, seed: 201 });
    console.log(shares, run.seconds.map((s, i) => `${i}:${s.accepted}/${s.limited}/${s.noise}/${s.workers.map((w) => `${w.rate}${w.noiseShare ? '!' + w.noiseShare : ''}`).join(',')}`).join(' '));
  }
}, 120000);
