/**
 * The Temporal schema in PostgreSQL, set up by the server's own tool (`temporal-sql-tool`) on
 * every start. For each database: `create-database` (the tool accepts an existing one),
 * `setup-schema -v 0.0` (the version tables; a no-op once the schema is past 0.0) and
 * `update-schema` to the newest version (a no-op when current; after a server upgrade it
 * applies the new versions). The versioned schema is the one shipped in the server module,
 * embedded in the tool (`--schema-name postgresql/v12/...`), so it always matches the version.
 */
import { spawn } from 'node:child_process';
import { PG_USER } from './postgres';
import { TEMPORAL_DATABASE, VISIBILITY_DATABASE } from './config';

const SCHEMAS: Array<{ database: string; schemaName: string }> = [
  { database: TEMPORAL_DATABASE, schemaName: 'postgresql/v12/temporal' },
  { database: VISIBILITY_DATABASE, schemaName: 'postgresql/v12/visibility' },
];

function runTool(sqlTool: string, pgPort: number, password: string, database: string, args: string[]): Promise<void> {
  const common = ['--plugin', 'postgres12', '--ep', '127.0.0.1', '-p', String(pgPort), '-u', PG_USER, '--db', database];
  return new Promise((resolve, reject) => {
    // The password through the tool's SQL_PASSWORD variable, not its --pw flag (visible in ps).
    const child = spawn(sqlTool, [...common, ...args], {
      env: { PATH: process.env.PATH, SQL_PASSWORD: password },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`temporal-sql-tool --db ${database} ${args.join(' ')} failed (${code}):\n${output.trim()}`)),
    );
  });
}

/** Brings both databases to the schema of this server version, creating them if needed. */
export async function setupSchemas(sqlTool: string, pgPort: number, password: string): Promise<string[]> {
  for (const { database, schemaName } of SCHEMAS) {
    for (const args of [['create-database'], ['setup-schema', '-v', '0.0'], ['update-schema', '--schema-name', schemaName]]) {
      await runTool(sqlTool, pgPort, password, database, args);
    }
  }
  return SCHEMAS.map((s) => s.database);
}
