/**
 * `npm run temporal:cli` — prints the path of the Temporal CLI, building it with Go into
 * `.tools/bin/` when needed. Progress goes to stderr, so `$(npx tsx dev-server/find-cli-main.ts)`
 * captures just the path.
 */
import { parseArgs } from 'node:util';
import { cachedCliPath, findTemporalCli, TEMPORAL_CLI_MODULE, TEMPORAL_CLI_VERSION } from './temporal-cli';

const HELP = `Usage: npm run temporal:cli [-- --no-build] [-- --quiet]

Prints the path of the Temporal CLI used by \`npm run dev\` and the tests, looking in order at:
  1. $TEMPORAL_CLI_PATH (an error if it is set but not executable)
  2. \`temporal\` on PATH
  3. the project cache ${cachedCliPath()}
  4. otherwise builds it with Go (GOBIN=.tools/bin go install ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION});
     takes a few minutes the first time.

Options:
  --no-build   only look, never build
  --quiet      no progress messages on stderr
  -h, --help   this text
`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'no-build': { type: 'boolean', default: false },
      quiet: { type: 'boolean', short: 'q', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const log = values.quiet ? () => undefined : (msg: string) => process.stderr.write(`${msg}\n`);
  const build = !values['no-build'];
  const found = await findTemporalCli({ build, log });
  if (found) {
    process.stdout.write(`${found}\n`);
    return 0;
  }
  process.stderr.write(
    [
      '',
      'No Temporal CLI found' + (build ? ', and Go is not on PATH to build one.' : ' (building was disabled with --no-build).'),
      'Any one of these fixes it:',
      '  - install Go (1.23 or later) and run this again: it builds the CLI into .tools/bin/ (a few minutes, once);',
      `      or by hand: GOBIN="$PWD/.tools/bin" go install ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`,
      '  - put a `temporal` binary on PATH (https://docs.temporal.io/cli#install);',
      '  - set TEMPORAL_CLI_PATH=/path/to/temporal.',
      'Without any of these, tests fall back to the Temporal SDK downloading the CLI, which needs internet access.',
      '',
    ].join('\n'),
  );
  return 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
