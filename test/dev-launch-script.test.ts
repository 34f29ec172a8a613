/** How `npm run dev` runs a package.json script: one node process for `tsx <file>`, with the script's defaulted variables. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchScript } from '../dev-server/dev-options';

const scripts = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).scripts as Record<string, string>;

describe('launchScript', () => {
  it("runs the worker's script as one node process, with glibc's arenas defaulted to two as its shell would", () => {
    const launch = launchScript(scripts, 'worker', []);
    expect(launch).toMatchObject({ command: process.execPath, args: ['--import', 'tsx', 'worker/main.ts'], signalGroupOnStop: false });
    expect(launch.defaults).toEqual({ MALLOC_ARENA_MAX: '2' });
    expect(scripts.start).toMatch(/^MALLOC_ARENA_MAX=\$\{MALLOC_ARENA_MAX:-2\} /);
  });

  it('takes several defaults, and leaves any other assignment to npm run and its shell', () => {
    const own = { a: 'A=${A:-1} B_2=${B_2:-x/y} tsx a.ts --flag', b: 'A=1 tsx a.ts', c: 'A=${B:-1} tsx a.ts' };
    expect(launchScript(own, 'a', ['--more'])).toMatchObject({
      args: ['--import', 'tsx', 'a.ts', '--flag', '--more'],
      defaults: { A: '1', B_2: 'x/y' },
    });
    expect(launchScript(own, 'b', [])).toMatchObject({ command: 'npm', args: ['run', '--silent', 'b'], signalGroupOnStop: true });
    expect(launchScript(own, 'c', [])).toMatchObject({ command: 'npm', defaults: {} });
  });
});
