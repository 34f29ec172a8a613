/**
 * The Temporal programs `npm run cluster` runs: the server, its SQL schema tool and the Web UI
 * server, at the versions the Temporal CLI v1.5.1 embeds (its go.mod requires
 * go.temporal.io/server v1.29.1 and github.com/temporalio/ui-server/v2 v2.42.1), so the cluster
 * runs the same server the dev server and the tests run. Found like the CLI
 * (dev-server/temporal-cli.ts): an environment variable, PATH, the project cache `.tools/bin`,
 * else `go install` into that cache. None of these modules carries replace directives, so
 * `go install module/cmd/x@version` works for each.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { buildWithGo, cacheBinDir, findOnPath, isExecutableFile, REPO_ROOT } from '../dev-server/temporal-cli';

export const TEMPORAL_SERVER_VERSION = '1.29.1';
export const TEMPORAL_UI_VERSION = '2.42.1';

export interface ClusterBinary {
  /** File name on PATH and in `.tools/bin` (the names the official images use). */
  file: string;
  /** Environment variable that points at a binary to use instead. */
  envVar: string;
  /** `go install` argument. */
  pkg: string;
  /** Name `go install` gives the binary (last element of the package path). */
  builtName: string;
  /** Version the binary must report with `--version`. */
  version: string;
  what: string;
}

export const CLUSTER_BINARIES = {
  server: {
    file: 'temporal-server',
    envVar: 'TEMPORAL_SERVER_PATH',
    pkg: `go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
    builtName: 'server',
    version: TEMPORAL_SERVER_VERSION,
    what: `the Temporal server ${TEMPORAL_SERVER_VERSION}`,
  },
  sqlTool: {
    file: 'temporal-sql-tool',
    envVar: 'TEMPORAL_SQL_TOOL_PATH',
    pkg: `go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
    builtName: 'sql',
    version: TEMPORAL_SERVER_VERSION,
    what: `the Temporal SQL schema tool ${TEMPORAL_SERVER_VERSION}`,
  },
  ui: {
    file: 'temporal-ui-server',
    envVar: 'TEMPORAL_UI_SERVER_PATH',
    pkg: `github.com/temporalio/ui-server/v2/cmd/server@v${TEMPORAL_UI_VERSION}`,
    builtName: 'server',
    version: TEMPORAL_UI_VERSION,
    what: `the Temporal UI server ${TEMPORAL_UI_VERSION}`,
  },
} as const satisfies Record<string, ClusterBinary>;

export type ClusterBinaries = Record<keyof typeof CLUSTER_BINARIES, string>;

/** `<file> --version` must name the expected version (urfave/cli prints "<name> version <v>"). */
function verify(bin: ClusterBinary, file: string): string {
  const result = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (result.error) throw new Error(`${file} --version failed: ${result.error.message}`);
  const out = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
  if (result.status !== 0) throw new Error(`${file} --version exited with ${result.status ?? result.signal}: ${out}`);
  const line = out.split('\n')[0] ?? '';
  if (!new RegExp(`\\b${bin.version.replace(/\./g, '\\.')}\\b`).test(line)) {
    throw new Error(`${file} reports "${line}", expected version ${bin.version}`);
  }
  return line;
}

async function findOne(
  bin: ClusterBinary,
  opts: { env: NodeJS.ProcessEnv; log: (msg: string) => void; repoRoot: string },
): Promise<string> {
  const { env, log } = opts;
  const fromEnv = env[bin.envVar];
  if (fromEnv) {
    const file = path.resolve(fromEnv);
    if (!isExecutableFile(file)) throw new Error(`${bin.envVar} is set to ${fromEnv}, but that is not an executable file`);
    try {
      verify(bin, file);
    } catch (err) {
      throw new Error(`${bin.envVar} is set to ${fromEnv}, but it is not usable: ${(err as Error).message}`, { cause: err });
    }
    return file;
  }
  const target = path.join(cacheBinDir(opts.repoRoot), bin.file);
  for (const [source, file] of [
    ['PATH', findOnPath(bin.file, env)],
    ['project cache', target],
  ] as const) {
    if (!file || !isExecutableFile(file)) continue;
    try {
      verify(bin, file);
      return file;
    } catch (err) {
      log(`Ignoring ${file} (${source}): ${(err as Error).message}`);
    }
  }
  const go = findOnPath('go', env);
  if (!go) {
    throw new Error(
      `No ${bin.file}: set ${bin.envVar}, put ${bin.file} on PATH or in ${target}, or install Go (1.25 or later) to build it ` +
        `(GOBIN=.tools/bin go install ${bin.pkg}).`,
    );
  }
  return buildWithGo(
    { pkg: bin.pkg, builtName: bin.builtName, target, verify: (file) => verify(bin, file), what: bin.what },
    { go, env, log },
  );
}

/** Finds or builds all three, one after another (each Go build uses every core it gets). */
export async function findClusterBinaries(
  opts: { env?: NodeJS.ProcessEnv; log?: (msg: string) => void; repoRoot?: string } = {},
): Promise<ClusterBinaries> {
  const o = { env: opts.env ?? process.env, log: opts.log ?? (() => undefined), repoRoot: opts.repoRoot ?? REPO_ROOT };
  return {
    server: await findOne(CLUSTER_BINARIES.server, o),
    sqlTool: await findOne(CLUSTER_BINARIES.sqlTool, o),
    ui: await findOne(CLUSTER_BINARIES.ui, o),
  };
}
