#!/usr/bin/env node
/** `reftrack-server`: the operator command (start, migrate, seed, keys). */
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createDb } from './db/knex.js';
import { migrateLatest } from './db/migrate.js';
import { startServer } from './server.js';
import { loadFixture, readFixtureFile, FixtureError } from './seed/fixture.js';
import { seedDemo } from './seed/demo.js';
import { KeyOpError, markKeyForRotation, regenerateProgramKey } from './ops/program-keys.js';
import { AccountOpError, setSuspended } from './ops/accounts.js';
import { AgentKeyError, createAgentKey } from './auth/agent-key.js';
import { signDevToken } from './auth/id-token.js';

const schemaOf = (config: Config) => (config.database.client === 'postgres' ? config.database.schema : undefined);

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function isoTime(value: string): number {
  const t = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(t)) throw new InvalidArgumentError('must be an ISO 8601 time, e.g. 2026-12-31T00:00:00Z');
  return t;
}

/** Opens the database, migrates, runs `work`, closes. */
async function withDb<T>(work: (db: ReturnType<typeof createDb>, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = createDb(config.database);
  try {
    await migrateLatest(db, schemaOf(config));
    return await work(db, config);
  } finally {
    await db.destroy();
  }
}

async function start(opts: { demo?: boolean }): Promise<void> {
  const config = loadConfig();
  const running = await startServer(config);
  const { logger } = running.deps;
  logger.info({ url: running.url, database: config.database.client }, 'reftrack-server listening');
  if (opts.demo) {
    const demo = await seedDemo(running.deps.db, config.publicBaseUrl);
    process.stdout.write(
      `\nReftrack is running at ${running.url}\n` +
        `Demo program id: ${demo.programId}\n` +
        `Demo program key (shown once): ${demo.apiKey}\n` +
        `Test affiliate link: ${demo.testLink}\n\n`,
    );
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

const program = new Command('reftrack-server').description('Reftrack reference server and operator command').showHelpAfterError();

program.command('start', { isDefault: true }).description('migrate, then serve').option('--demo', 'seed the demo program and print its key').action(start);
program.command('migrate').description('run migrations and exit').action(() => withDb(async () => console.log('migrations are up to date')));
program
  .command('seed')
  .description('load a fixture file (idempotent) or the demo data')
  .option('--file <file>', 'fixture JSON file')
  .option('--demo', 'demo workspace, program, partner and link; prints the program key and a test link')
  .action((opts: { file?: string; demo?: boolean }) =>
    withDb(async (db, config) => {
      if (!opts.file && !opts.demo) throw new FixtureError('seed needs --file F or --demo');
      if (opts.file) {
        await loadFixture(db, readFixtureFile(opts.file));
        console.log(`loaded ${opts.file}`);
      }
      if (opts.demo) {
        const demo = await seedDemo(db, config.publicBaseUrl);
        console.log(`Demo program id: ${demo.programId}\nDemo program key (shown once): ${demo.apiKey}\nTest affiliate link: ${demo.testLink}`);
      }
    }),
  );
const keys = program.command('keys').description('program key operations');
keys
  .command('mark-rotation')
  .description('mark a program key for mandatory rotation')
  .requiredOption('--program <id>', 'program id', positiveInt)
  .requiredOption('--deadline <iso>', 'when the key stops working (ISO 8601)', isoTime)
  .action((opts: { program: number; deadline: number }) =>
    withDb(async (db) => {
      await markKeyForRotation(db, opts.program, opts.deadline);
      console.log(`program ${opts.program}: key marked for rotation, retires at ${new Date(opts.deadline).toISOString()}`);
    }),
  );
keys
  .command('regenerate')
  .description('issue a new program key and print it once; the old key stops at once')
  .requiredOption('--program <id>', 'program id', positiveInt)
  .action((opts: { program: number }) =>
    withDb(async (db) => {
      console.log(await regenerateProgramKey(db, opts.program));
    }),
  );

program
  .command('dev-token')
  .description('print an id_token from the development identity provider (only without OIDC_ISSUER)')
  .requiredOption('--email <email>', 'the account e-mail')
  .option('--name <name>', 'display name for a first sign-in')
  .action((opts: { email: string; name?: string }) =>
    withDb(async (db, config) => {
      if (config.oidcIssuer) throw new ConfigError('dev-token is unavailable while OIDC_ISSUER is set: sign in through your identity provider');
      console.log(await signDevToken(db, opts.email, opts.name));
    }),
  );
const accounts = program.command('accounts').description('account operations');
for (const [name, suspended] of [['suspend', true], ['restore', false]] as const) {
  accounts
    .command(name)
    .description(suspended ? 'refuse sign-in and stop the live sessions of an account' : 'allow an account to sign in again')
    .requiredOption('--email <email>', 'the account e-mail')
    .action((opts: { email: string }) =>
      withDb(async (db) => {
        await setSuspended(db, opts.email, suspended);
        console.log(`${opts.email}: ${suspended ? 'suspended' : 'restored'}`);
      }),
    );
}
program
  .command('agent-keys')
  .description('agent key operations')
  .command('create')
  .description('print a new agt_ key once')
  .requiredOption('--workspace <id>', 'workspace id', positiveInt)
  .requiredOption('--scopes <list>', 'comma-separated scopes: programs:read, programs:write')
  .option('--name <name>', 'what the key is for')
  .action((opts: { workspace: number; scopes: string; name?: string }) =>
    withDb(async (db) => {
      console.log(await createAgentKey(db, opts.workspace, opts.scopes.split(',').map((s) => s.trim()).filter(Boolean), opts.name ?? null));
    }),
  );

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof FixtureError || err instanceof KeyOpError || err instanceof AccountOpError || err instanceof AgentKeyError) {
    console.error(`reftrack-server: ${err.message}`);
    process.exit(2);
  }
  console.error(`reftrack-server: ${(err as Error).message ?? err}`);
  process.exit(1);
});
