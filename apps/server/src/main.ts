#!/usr/bin/env node
/** `reftrack-server`: the operator command (start, migrate, seed, keys, credentials, prune). */
import { Command, InvalidArgumentError } from 'commander';
import { AGENT_SCOPES } from '@reftrack/contract';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createDb } from './db/knex.js';
import { migrateLatest, migrateLatestReport, migrationStatus } from './db/migrate.js';
import { createLogger } from './logger.js';
import { BackupError, backupSqlite } from './ops/backup.js';
import { startServer } from './server.js';
import { loadFixture, readFixtureFile, FixtureError } from './seed/fixture.js';
import { DEMO, seedDemo, type DemoResult } from './seed/demo.js';
import { demoKeyFile } from './seed/demo-key.js';
import { KeyOpError, markKeyForRotation, regenerateProgramKey } from './ops/program-keys.js';
import { AccountOpError, setSuspended } from './ops/accounts.js';
import { AgentKeyError, createAgentKey } from './auth/agent-key.js';
import { signDevToken } from './auth/id-token.js';
import { devSignInRefusal } from './auth/sign-in-policy.js';
import { checkOidc } from './ops/oidc-check.js';
import { listWorkspaceAgentKeys, revokeAgentKeyById } from './ops/agent-keys.js';
import { listAccountCliTokens, revokeAccountCliTokens } from './ops/cli-tokens.js';
import { pruneExpired } from './jobs/prune-expired.js';
import { rebuildStats } from './ops/stats-rebuild.js';
import { openSecretBox } from './secrets/encryption-key.js';
import { keyIdsInUse, prepareStoredSecrets, rotateStoredSecrets } from './secrets/stored-secrets.js';
import type { SecretBox } from './secrets/secret-box.js';

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

/** Where the demo key came from, and how to get another one. */
function demoKeyLine(demo: DemoResult): string {
  return demo.keyKept
    ? `  (the same key as the last run, kept in ${demo.keyFile}; add --rotate-demo-key for a new one)`
    : `  (a new key, saved in ${demo.keyFile} (mode 600) and reused on every restart; add --rotate-demo-key for a new one)`;
}

/** The server's secret box, opened before the database so that a missing or bad key stops first. */
function secretBox(): SecretBox {
  const { box, devKeyFile } = openSecretBox(loadConfig());
  if (devKeyFile) console.error(`reftrack-server: ENCRYPTION_KEY is not set; using the development key in ${devKeyFile}`);
  return box;
}

async function start(opts: { demo?: boolean; rotateDemoKey?: boolean }): Promise<void> {
  const config = loadConfig();
  if (opts.rotateDemoKey && !opts.demo) throw new ConfigError('--rotate-demo-key goes with --demo');
  // Seeded before the server starts, so that the server knows the demo program and serves its shop.
  const demo = opts.demo ? await withDb((db) => seedDemo(db, config.publicBaseUrl, { keyFile: demoKeyFile(config.database), rotateKey: opts.rotateDemoKey })) : undefined;
  // The shop records leads and sales with the demo key for whoever reaches it: a local server only.
  const shopOn = demo !== undefined && config.exposedBecause.length === 0;
  const logger = createLogger(config.logLevel);
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer(config, { logger, ...(shopOn ? { demo: { programId: demo.programId, apiKey: demo.apiKey } } : {}) });
  } catch (err) {
    // A configuration the operator must fix is one plain line and exit 2, like every command's (below).
    if (err instanceof ConfigError) throw err;
    // Otherwise a server's output is JSON lines, its last words included (a supervisor's log collector reads them).
    logger.fatal({ err }, 'reftrack-server could not start');
    logger.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.exit(1);
  }
  logger.info({ url: running.url, database: config.database.client }, 'reftrack-server listening');
  if (demo) {
    process.stdout.write(
      `\nReftrack is running at ${running.url}\n` +
        `Dashboard: ${config.publicBaseUrl}/ (sign in as ${DEMO.email})\n` +
        `Demo program id: ${demo.programId}\n` +
        `Demo program key: ${demo.apiKey}\n${demoKeyLine(demo)}\n` +
        (shopOn
          ? `Test affiliate link: ${demo.testLink}\n  (open it in a browser: the demo shop records the click, then Sign up and Buy record a lead and an attributed sale)\n\n`
          : `Demo shop: off, because this server is exposed (${config.exposedBecause.join(', ')}); the demo program's link is ?aff=demo on a site with the tracker\n\n`),
    );
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const began = performance.now();
    // SIGTERM drains (readyz 503 for SHUTDOWN_GRACE_MS, then close); SIGINT (Ctrl-C) stops at once.
    (signal === 'SIGTERM' ? running.drain(config.shutdownGraceMs) : running.close()).then(
      () => {
        // The last line a supervisor's log shows of a clean stop (pino writes it out at exit).
        logger.info({ signal, ms: Math.round(performance.now() - began) }, 'stopped');
        process.exit(0);
      },
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

program
  .command('start', { isDefault: true })
  .description('migrate, then serve')
  .option('--demo', 'seed the demo program, print its key (the same on every restart) and serve the demo shop')
  .option('--rotate-demo-key', 'with --demo: issue a new demo key instead of reusing the saved one')
  .action(start);
const migrate = program
  .command('migrate')
  .description('run migrations, encrypt plaintext secrets of earlier releases, and exit')
  .action(() => {
    const box = secretBox();
    const config = loadConfig();
    const db = createDb(config.database);
    return (async () => {
      try {
        const applied = await migrateLatestReport(db, schemaOf(config));
        console.log(applied.length === 0 ? 'migrations: up to date, none applied' : `applied ${applied.length} migration${applied.length === 1 ? '' : 's'}: ${applied.join(', ')}`);
        const { upgraded } = await prepareStoredSecrets(db, box, Date.now());
        if (upgraded > 0) console.log(`encrypted the Stripe signing secrets of ${upgraded} program(s) stored by an earlier release`);
      } finally {
        await db.destroy();
      }
    })();
  });
migrate
  .command('status')
  .description('list applied and pending migrations without running any (exit code 3 while some are pending)')
  .action(async () => {
    const config = loadConfig();
    const db = createDb(config.database);
    try {
      const { applied, pending, unknown } = await migrationStatus(db, schemaOf(config));
      for (const name of applied) console.log(`applied  ${name}`);
      for (const name of unknown) console.log(`newer    ${name} (applied by a newer release)`);
      for (const name of pending) console.log(`pending  ${name}`);
      console.log(`${applied.length} applied, ${pending.length} pending${unknown.length ? `, ${unknown.length} from a newer release` : ''}`);
      if (pending.length > 0) process.exitCode = 3;
    } finally {
      await db.destroy();
    }
  });
program
  .command('backup')
  .description('write a consistent copy of the SQLite database to FILE while the server runs (PostgreSQL: pg_dump, see docs/operator.md)')
  .requiredOption('--out <file>', 'the backup file to write (must not exist)')
  .action(async (opts: { out: string }) => {
    const config = loadConfig();
    if (config.database.client !== 'sqlite') throw new ConfigError('backup copies SQLite databases; for PostgreSQL use pg_dump (docs/operator.md, "Backups")');
    const report = await backupSqlite(config.database.filename, opts.out);
    console.log(`backed up ${config.database.filename} to ${opts.out}: ${report.pages} pages, ${report.bytes} bytes, in ${report.ms} ms`);
  });
program
  .command('secrets')
  .description('stored secret operations')
  .command('rotate')
  .description('encrypt every stored secret again with ENCRYPTION_KEY (the previous key in ENCRYPTION_KEY_PREVIOUS)')
  .action(() => {
    const box = secretBox();
    return withDb(async (db) => {
      await prepareStoredSecrets(db, box, Date.now());
      const { resealed, current } = await rotateStoredSecrets(db, box);
      const others = [...(await keyIdsInUse(db)).keys()].filter((id) => id !== box.keyId);
      console.log(`stored secrets: ${resealed} re-encrypted with key id ${box.keyId}, ${current} already current`);
      if (others.length > 0) throw new Error(`stored secrets still use key id ${others.join(', ')}; run the command again`);
      console.log('every stored secret uses ENCRYPTION_KEY: ENCRYPTION_KEY_PREVIOUS can be removed');
    });
  });
program
  .command('seed')
  .description('load a fixture file (idempotent) or the demo data')
  .option('--file <file>', 'fixture JSON file')
  .option('--demo', 'demo workspace, program, partner and link; prints the program key (kept across runs) and a test link')
  .option('--rotate-demo-key', 'with --demo: issue a new demo key instead of reusing the saved one')
  .action((opts: { file?: string; demo?: boolean; rotateDemoKey?: boolean }) =>
    withDb(async (db, config) => {
      if (!opts.file && !opts.demo) throw new FixtureError('seed needs --file F or --demo');
      if (opts.file) {
        await loadFixture(db, readFixtureFile(opts.file));
        console.log(`loaded ${opts.file}`);
      }
      if (opts.demo) {
        const demo = await seedDemo(db, config.publicBaseUrl, { keyFile: demoKeyFile(config.database), rotateKey: opts.rotateDemoKey });
        console.log(`Demo program id: ${demo.programId}\nDemo program key: ${demo.apiKey}\n${demoKeyLine(demo)}\nTest affiliate link (served by \`start --demo\`): ${demo.testLink}`);
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
      const refusal = devSignInRefusal(config);
      if (refusal) throw new ConfigError(`dev-token ${refusal.replace(/^refusing to start: /, 'is refused: ')}`);
      console.log(await signDevToken(db, opts.email, opts.name));
    }),
  );
program
  .command('oidc')
  .description('OpenID Connect sign-in')
  .command('check')
  .description("fetch OIDC_ISSUER's discovery document, print what is wrong and what to register at the provider")
  .action(async () => {
    const report = await checkOidc(loadConfig());
    for (const p of report.problems) console.log(`problem: ${p}`);
    for (const n of report.notes) console.log(`note: ${n}`);
    console.log(`register at the provider:\n${report.register.map((r) => `  ${r}`).join('\n')}`);
    if (report.problems.length > 0) process.exitCode = 1;
    else console.log('OIDC configuration: no problems found');
  });
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
const agentKeys = program.command('agent-keys').description('agent key operations');
agentKeys
  .command('create')
  .description('print a new agt_ key once')
  .requiredOption('--workspace <id>', 'workspace id', positiveInt)
  .requiredOption('--scopes <list>', `comma-separated scopes: ${AGENT_SCOPES.join(', ')}`)
  .option('--name <name>', 'what the key is for')
  .action((opts: { workspace: number; scopes: string; name?: string }) =>
    withDb(async (db) => {
      console.log(await createAgentKey(db, opts.workspace, opts.scopes.split(',').map((s) => s.trim()).filter(Boolean), opts.name ?? null));
    }),
  );
agentKeys
  .command('list')
  .description('list the agent keys of a workspace (masked), revoked ones included')
  .requiredOption('--workspace <id>', 'workspace id', positiveInt)
  .action((opts: { workspace: number }) =>
    withDb(async (db) => {
      const list = await listWorkspaceAgentKeys(db, opts.workspace);
      if (list.length === 0) console.log(`workspace ${opts.workspace} has no agent keys`);
      for (const k of list) {
        console.log([`id ${k.id}`, k.key_masked ?? '', k.name ? JSON.stringify(k.name) : '(no name)', k.scopes.join(','), `created ${k.created_at}`, `last used ${k.last_used_at ?? 'never'}`, k.revoked_at ? `REVOKED ${k.revoked_at}` : 'active'].join('  '));
      }
    }),
  );
agentKeys
  .command('revoke')
  .description('revoke an agent key: every server process refuses it from now on')
  .requiredOption('--id <id>', 'agent key id (from agent-keys list)', positiveInt)
  .action((opts: { id: number }) =>
    withDb(async (db) => {
      const key = await revokeAgentKeyById(db, opts.id, Date.now());
      console.log(`agent key ${key.id} (${key.key_masked}) of workspace ${key.workspace_id}: revoked at ${key.revoked_at}`);
    }),
  );
const cliTokens = program.command('cli-tokens').description('CLI login token operations');
cliTokens
  .command('list')
  .description("list an account's unexpired CLI login tokens, revoked ones included")
  .requiredOption('--email <email>', 'the account e-mail')
  .action((opts: { email: string }) =>
    withDb(async (db) => {
      const list = await listAccountCliTokens(db, opts.email, Date.now());
      if (list.length === 0) console.log(`${opts.email} has no unexpired CLI tokens`);
      for (const t of list) {
        console.log([`id ${t.id}`, t.label ? JSON.stringify(t.label) : '(no label)', `created ${t.created_at}`, `last used ${t.last_used_at ?? 'never'}`, `expires ${t.expires_at}`, t.revoked_at ? `REVOKED ${t.revoked_at}` : 'active'].join('  '));
      }
    }),
  );
cliTokens
  .command('revoke')
  .description("revoke every CLI login token of an account (a lost laptop); the account can sign in again")
  .requiredOption('--email <email>', 'the account e-mail')
  .action((opts: { email: string }) =>
    withDb(async (db) => {
      const n = await revokeAccountCliTokens(db, opts.email, Date.now());
      console.log(`${opts.email}: ${n} CLI token${n === 1 ? '' : 's'} revoked`);
    }),
  );
program
  .command('prune')
  .description('delete expired login sessions, used id_tokens, sessions, tokens, old outbox events, webhook deliveries and tracking log entries once (every server also does this on its own)')
  .action(() =>
    withDb(async (db) => {
      const report = await pruneExpired(db, Date.now(), { trackingLogRetentionDays: loadConfig().trackingLogRetentionDays });
      console.log(Object.entries(report).map(([table, n]) => `${table}: ${n} deleted`).join('\n'));
    }),
  );

const stats = program.command('stats').description('analytics rollups (docs/analytics.md)');
stats
  .command('rebuild')
  .description('recompute every rollup row from the raw events (once after upgrading; run with the servers stopped); re-checks each click against the bot list')
  .action(() =>
    withDb(async (db) => {
      const report = await rebuildStats(db, loadConfig().uniqueClickWindowMinutes * 60_000);
      console.log(Object.entries(report).map(([what, n]) => `${what}: ${n}`).join('\n'));
    }),
  );

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof FixtureError || err instanceof KeyOpError || err instanceof AccountOpError || err instanceof AgentKeyError || err instanceof BackupError) {
    console.error(`reftrack-server: ${err.message}`);
    process.exit(2);
  }
  console.error(`reftrack-server: ${(err as Error).message ?? err}`);
  process.exit(1);
});
