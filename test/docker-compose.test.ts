// The compose stack registers search attributes by hand: keep them in step with the workflow's.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/definitions';

it('docker-compose.yml registers every search attribute the workflow upserts', () => {
  const compose = readFileSync(path.join(__dirname, '..', 'docker-compose.yml'), 'utf8');
  const registered = [...compose.matchAll(/--search-attribute=(\w+)=Keyword/g)].map((m) => m[1]).sort();
  expect(registered).toEqual(SEARCH_ATTRIBUTE_KEYS.map((k) => k.name).sort());
});
