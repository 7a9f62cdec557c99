/** Runs the timestamped migrations kept in apps/server/migrations (outside the bundle). */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import type { Db } from './knex.js';

/** The package root, found from this file whether it runs from src/ (tests) or dist/ (bundle). */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (fs.existsSync(path.join(dir, 'migrations')) && fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('migrations folder not found');
    dir = parent;
  }
}

export const migrationsDir = (): string => path.join(packageRoot(), 'migrations');

interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

class FolderSource implements Knex.MigrationSource<string> {
  constructor(private readonly dir: string) {}
  async getMigrations(): Promise<string[]> {
    return fs.readdirSync(this.dir).filter((f) => /^\d{14}_.+\.js$/.test(f)).sort();
  }
  getMigrationName(name: string): string {
    return name;
  }
  async getMigration(name: string): Promise<MigrationModule> {
    return (await import(pathToFileURL(path.join(this.dir, name)).href)) as MigrationModule;
  }
}

export function migrationConfig(schema?: string): Knex.MigratorConfig {
  return { migrationSource: new FolderSource(migrationsDir()), schemaName: schema, tableName: 'knex_migrations' };
}

/** A database holding a newer release's migrations and pending ones of this release: no order of applying them is safe. */
export class MigrationOrderError extends Error {}

/**
 * Applies this release's pending migrations. A database already migrated by a newer release
 * (migrations this release does not have, none of its own pending) is left as it is: during a
 * rolling upgrade or a rollback, this release starts against the expanded schema (docs/operator.md,
 * "Upgrades"); knex on its own would refuse it as a "corrupt migration directory".
 */
export async function migrateLatest(db: Db, schema?: string): Promise<void> {
  const status = await migrationStatus(db, schema);
  if (status.unknown.length > 0) {
    if (status.pending.length > 0) {
      throw new MigrationOrderError(
        `the database has migrations of a newer release (${status.unknown.join(', ')}) and lacks some of this release (${status.pending.join(', ')}): start the newer release instead`,
      );
    }
    return;
  }
  await db.migrate.latest(migrationConfig(schema));
}

export async function migrateDown(db: Db, schema?: string): Promise<void> {
  await db.migrate.rollback(migrationConfig(schema), true);
}

export interface MigrationStatus {
  applied: string[];
  pending: string[];
  /** Applied by a newer release (files this release does not have): expected during a rolling upgrade. */
  unknown: string[];
}

/** Which of this release's migrations are applied and which are pending, without running any. */
export async function migrationStatus(db: Db, schema?: string): Promise<MigrationStatus> {
  const files = await new FolderSource(migrationsDir()).getMigrations();
  const table = schema ? db.schema.withSchema(schema) : db.schema;
  const done = (await table.hasTable('knex_migrations'))
    ? ((await (schema ? db.withSchema(schema) : db).select('name').from('knex_migrations').orderBy('id')) as Array<{ name: string }>).map((r) => r.name)
    : [];
  const applied = new Set(done);
  const known = new Set(files);
  return { applied: files.filter((f) => applied.has(f)), pending: files.filter((f) => !applied.has(f)), unknown: done.filter((n) => !known.has(n)) };
}

/** Applies the pending migrations; the names of those it applied (empty: the schema was up to date). */
export async function migrateLatestReport(db: Db, schema?: string): Promise<string[]> {
  const status = await migrationStatus(db, schema);
  if (status.unknown.length > 0) {
    if (status.pending.length > 0) throw new MigrationOrderError(`the database has migrations of a newer release (${status.unknown.join(', ')}) and lacks some of this release (${status.pending.join(', ')}): run the newer release's migrate instead`);
    return [];
  }
  const [, applied] = (await db.migrate.latest(migrationConfig(schema))) as [number, string[]];
  return applied;
}
