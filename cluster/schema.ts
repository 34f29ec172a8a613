/**
 * The Temporal schema in PostgreSQL, set up by the server's own tool (`temporal-sql-tool`), on
 * every start: for each database `create-database` (already there is fine), `setup-schema -v 0.0`
 * (the version tables; a no-op once the schema is past 0.0) and `update-schema` to the newest
 * version (a no-op when current; after a server upgrade it applies the new versions). The versioned schema files are the ones shipped
 * in the server module, embedded in the tool (`--schema-name postgresql/v12/...`), so they always
 * match its version.
 */
import { spawn } from 'node:child_process';
import { PG_USER } from './postgres';
import { TEMPORAL_DATABASE, VISIBILITY_DATABASE } from './config';

const SCHEMAS: Array<{ database: string; schemaName: string }> = [
  { database: TEMPORAL_DATABASE, schemaName: 'postgresql/v12/temporal' },
  { database: VISIBILITY_DATABASE, schemaName: 'postgresql/v12/visibility' },
];

function runTool(sqlTool: string, pgPort: number, password: string, database: string, args: string[]): Promise<{ code: number | null; output: string }> {
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
    child.on('exit', (code) => resolve({ code, output }));
  });
}

async function mustRun(sqlTool: string, pgPort: number, password: string, database: string, args: string[]): Promise<string> {
  const { code, output } = await runTool(sqlTool, pgPort, password, database, args);
  if (code !== 0) throw new Error(`temporal-sql-tool --db ${database} ${args.join(' ')} failed (${code}):\n${output.trim()}`);
  return output;
}

/** Creates and updates both databases; returns the names of those it created. */
export async function setupSchemas(sqlTool: string, pgPort: number, password: string): Promise<string[]> {
  const created: string[] = [];
  for (const { database, schemaName } of SCHEMAS) {
    const create = await runTool(sqlTool, pgPort, password, database, ['create-database']);
    if (create.code === 0) created.push(database);
    else if (!/already exists/.test(create.output)) {
      throw new Error(`temporal-sql-tool --db ${database} create-database failed (${create.code}):\n${create.output.trim()}`);
    }
    await mustRun(sqlTool, pgPort, password, database, ['setup-schema', '-v', '0.0']);
    await mustRun(sqlTool, pgPort, password, database, ['update-schema', '--schema-name', schemaName]);
  }
  return created;
}
