import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import {
  cachedCliPath,
  findTemporalCli,
  REPO_ROOT,
  temporalServerExecutable,
  TEMPORAL_CLI_MODULE,
  TEMPORAL_CLI_VERSION,
} from '../dev-server/temporal-cli';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflow-definitions/shipment';
import { createTestEnv } from './helpers/temporal-env';

// ---------------------------------------------------------------- fixtures

const tmpDirs: string[] = [];
function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-cli-test-'));
  tmpDirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of tmpDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A shell script that answers `--version` like the CLI does (or fails, if `ok` is false). */
function fakeCli(dir: string, label: string, { ok = true, name = 'temporal' } = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  const body = ok ? `echo "temporal version ${label} (Server 0.0.0, UI 0.0.0)"` : `echo "broken ${label}" >&2; exit 3`;
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

/** A fake `go` whose `install` writes a fake CLI into $GOBIN and counts its invocations. */
function fakeGo(dir: string, { delaySeconds = 0 } = {}): { counter: string } {
  fs.mkdirSync(dir, { recursive: true });
  const counter = path.join(dir, 'go-invocations');
  const script = `#!/bin/sh
PATH="/usr/local/bin:/usr/bin:/bin:$PATH"
echo "$@" >> "${counter}"
[ "$1" = "install" ] || exit 1
[ "$2" = "${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}" ] || { echo "unexpected package $2" >&2; exit 1; }
sleep ${delaySeconds}
printf '#!/bin/sh\\necho "temporal version built-by-fake-go"\\n' > "$GOBIN/temporal"
chmod +x "$GOBIN/temporal"
`;
  fs.writeFileSync(path.join(dir, 'go'), script, { mode: 0o755 });
  return { counter };
}

const invocations = (counter: string) => (fs.existsSync(counter) ? fs.readFileSync(counter, 'utf8').trim().split('\n').length : 0);

/** A repo root with (optionally) a cached CLI, a PATH dir with (optionally) `temporal`, and a third dir. */
function layout({ cache = false, onPath = false }: { cache?: boolean; onPath?: boolean } = {}) {
  const root = tmpDir();
  const repoRoot = path.join(root, 'repo');
  const pathDir = path.join(root, 'bin');
  fs.mkdirSync(repoRoot, { recursive: true });
  fs.mkdirSync(pathDir, { recursive: true });
  const cached = cache ? fakeCli(path.dirname(cachedCliPath(repoRoot)), 'cache') : undefined;
  const onPathFile = onPath ? fakeCli(pathDir, 'path') : undefined;
  return { root, repoRoot, pathDir, cached, onPathFile };
}

// ---------------------------------------------------------------- resolution order

describe('findTemporalCli', () => {
  it('prefers TEMPORAL_CLI_PATH over PATH and the project cache', async () => {
    const l = layout({ cache: true, onPath: true });
    const explicit = fakeCli(path.join(l.root, 'explicit'), 'explicit');
    const found = await findTemporalCli({
      build: false,
      repoRoot: l.repoRoot,
      env: { TEMPORAL_CLI_PATH: explicit, PATH: l.pathDir },
    });
    expect(found).toBe(explicit);
  });

  it('throws naming TEMPORAL_CLI_PATH and the path when it does not exist', async () => {
    const l = layout({ cache: true, onPath: true });
    const missing = path.join(l.root, 'nope', 'temporal');
    await expect(
      findTemporalCli({ build: false, repoRoot: l.repoRoot, env: { TEMPORAL_CLI_PATH: missing, PATH: l.pathDir } }),
    ).rejects.toThrow(new RegExp(`TEMPORAL_CLI_PATH.*${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });

  it('throws when TEMPORAL_CLI_PATH is not executable or does not answer --version', async () => {
    const l = layout();
    const notExecutable = path.join(l.root, 'temporal.txt');
    fs.writeFileSync(notExecutable, 'not a program', { mode: 0o644 });
    await expect(
      findTemporalCli({ build: false, repoRoot: l.repoRoot, env: { TEMPORAL_CLI_PATH: notExecutable, PATH: l.pathDir } }),
    ).rejects.toThrow(/TEMPORAL_CLI_PATH.*temporal\.txt/);

    const broken = fakeCli(path.join(l.root, 'broken'), 'x', { ok: false });
    await expect(
      findTemporalCli({ build: false, repoRoot: l.repoRoot, env: { TEMPORAL_CLI_PATH: broken, PATH: l.pathDir } }),
    ).rejects.toThrow(/TEMPORAL_CLI_PATH.*does not run/);
  });

  it('finds `temporal` on PATH before the project cache', async () => {
    const l = layout({ cache: true, onPath: true });
    const emptyDir = path.join(l.root, 'empty');
    fs.mkdirSync(emptyDir);
    const found = await findTemporalCli({
      build: false,
      repoRoot: l.repoRoot,
      env: { PATH: [emptyDir, l.pathDir].join(path.delimiter) },
    });
    expect(found).toBe(l.onPathFile);
  });

  it('skips a `temporal` on PATH that fails --version', async () => {
    const l = layout({ cache: true });
    fakeCli(l.pathDir, 'broken', { ok: false });
    const found = await findTemporalCli({ build: false, repoRoot: l.repoRoot, env: { PATH: l.pathDir } });
    expect(found).toBe(l.cached);
  });

  it('uses the project cache <repo>/.tools/bin/temporal', async () => {
    const l = layout({ cache: true });
    expect(l.cached).toBe(path.join(l.repoRoot, '.tools', 'bin', 'temporal'));
    const found = await findTemporalCli({ build: false, repoRoot: l.repoRoot, env: { PATH: l.pathDir } });
    expect(found).toBe(l.cached);
  });

  it('returns undefined when nothing is found and building is off, or there is no go', async () => {
    const l = layout();
    expect(await findTemporalCli({ build: false, repoRoot: l.repoRoot, env: { PATH: l.pathDir } })).toBeUndefined();
    expect(await findTemporalCli({ build: true, repoRoot: l.repoRoot, env: { PATH: l.pathDir } })).toBeUndefined();
    expect(fs.existsSync(path.join(l.repoRoot, '.tools'))).toBe(false);
  });

  it('builds with `go install` into the project cache when go is on PATH', async () => {
    const l = layout();
    const { counter } = fakeGo(l.pathDir);
    const logs: string[] = [];
    const found = await findTemporalCli({ repoRoot: l.repoRoot, env: { PATH: l.pathDir }, log: (m) => logs.push(m) });
    expect(found).toBe(cachedCliPath(l.repoRoot));
    expect(invocations(counter)).toBe(1);
    expect(logs.join('\n')).toMatch(/minutes/);
    // Nothing left behind but the binary.
    expect(fs.readdirSync(path.join(l.repoRoot, '.tools')).sort()).toEqual(['bin']);
    // Second lookup hits the cache without building.
    expect(await findTemporalCli({ repoRoot: l.repoRoot, env: { PATH: l.pathDir } })).toBe(found);
    expect(invocations(counter)).toBe(1);
  });

  it('builds once when several processes ask at the same time (lock)', async () => {
    const l = layout();
    const { counter } = fakeGo(l.pathDir, { delaySeconds: 2 });
    const script = path.join(l.root, 'find.ts');
    fs.writeFileSync(
      script,
      `import { findTemporalCli } from ${JSON.stringify(path.join(REPO_ROOT, 'dev-server', 'temporal-cli'))};
findTemporalCli({ repoRoot: ${JSON.stringify(l.repoRoot)}, env: { PATH: ${JSON.stringify(l.pathDir)} } })
  .then((p) => { console.log(p); })
  .catch((e) => { console.error(e); process.exit(1); });
`,
    );
    const tsx = path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
    const run = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(tsx, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`exit ${code}`))));
      });
    const results = await Promise.all([run(), run(), run()]);
    expect(results).toEqual(Array(3).fill(cachedCliPath(l.repoRoot)));
    expect(invocations(counter)).toBe(1);
  });

  it('takes over a build lock left by a dead process', async () => {
    const l = layout();
    const { counter } = fakeGo(l.pathDir);
    const lockDir = path.join(l.repoRoot, '.tools', 'temporal-build.lock');
    fs.mkdirSync(lockDir, { recursive: true });
    // A pid that is not running (pid_max is far below this on Linux).
    fs.writeFileSync(path.join(lockDir, 'owner.json'), JSON.stringify({ pid: 2 ** 30, host: os.hostname(), startedAt: 0 }));
    const found = await findTemporalCli({ repoRoot: l.repoRoot, env: { PATH: l.pathDir } });
    expect(found).toBe(cachedCliPath(l.repoRoot));
    expect(invocations(counter)).toBe(1);
    expect(fs.existsSync(lockDir)).toBe(false);
  });
});

describe('temporalServerExecutable', () => {
  it('is an existing path when the CLI is found', () => {
    const l = layout({ onPath: true });
    expect(temporalServerExecutable({ repoRoot: l.repoRoot, env: { PATH: l.pathDir } })).toEqual({
      type: 'existing-path',
      path: l.onPathFile,
    });
  });

  it("falls back to the SDK's download when nothing is found", () => {
    const l = layout();
    const logs: string[] = [];
    expect(temporalServerExecutable({ repoRoot: l.repoRoot, env: { PATH: l.pathDir }, log: (m) => logs.push(m) })).toEqual({
      type: 'cached-download',
    });
    expect(logs.join('\n')).toMatch(/TEMPORAL_CLI_PATH/);
  });
});

// ---------------------------------------------------------------- real dev server

describe('createTestEnv', () => {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await createTestEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it('inherits TEMPORAL_CLI_PATH from global setup', () => {
    // global-setup.ts found (or built) the CLI once; forks must see it and not look for their own.
    const found = inject('temporalCliPath');
    if (found) expect(process.env.TEMPORAL_CLI_PATH).toBe(found);
  });

  it('starts a dev server with the search attributes of workflow-definitions/shipment registered', async () => {
    const { customAttributes } = await env!.connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(SEARCH_ATTRIBUTE_KEYS.length).toBeGreaterThan(0);
    for (const key of SEARCH_ATTRIBUTE_KEYS) {
      expect(customAttributes?.[key.name], key.name).toBe(encodeSearchAttributeIndexedValueType(key.type));
    }
  });
});
