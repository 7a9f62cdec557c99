/** Builds the dependencies, migrates, listens; and shuts down in order (stop accepting, finish, close pools). */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { Config } from './config.js';
import { createDb, type Db } from './db/knex.js';
import { migrateLatest } from './db/migrate.js';
import { createLogger, type Logger } from './logger.js';
import { createRateLimiters } from './http/rate-limit.js';
import { ClickBatcher, clickWriterFor } from './db/click-batcher.js';
import { createAtomic } from './db/atomic.js';
import { LinkCache } from './db/link-cache.js';
import { createGeoLookup } from './domain/geo.js';
import { createApp } from './app.js';
import { withClickLane } from './routes/track/click-lane.js';
import { answerClientError } from './http/client-error.js';
import { stopLingering } from './http/lingering-close.js';
import type { AppDeps, DemoMode, Faults } from './deps.js';
import { createIdentityProvider } from './auth/id-token.js';
import { createOidcClient } from './auth/oidc-client.js';
import { checkSignInPolicy } from './auth/sign-in-policy.js';
import { DashboardOrigins } from './http/origins.js';
import { withHostGate } from './http/host-gate.js';
import { schedulePruning } from './jobs/prune-expired.js';
import { scheduleCommissionApproval, type ApprovalSchedule } from './jobs/commission-approval.js';
import { OutboxRunner } from './jobs/outbox-runner.js';
import { MailWorker } from './mail/worker.js';
import { createMailTransport } from './mail/transport.js';
import { OUTBOX_CONSUMERS } from './jobs/consumers.js';
import { ProcessOutbox } from './jobs/process-outbox.js';
import { StatsThread } from './jobs/stats-thread.js';
import { WebhookWorker } from './jobs/webhook-worker.js';
import { openSecretBox } from './secrets/encryption-key.js';
import { prepareStoredSecrets } from './secrets/stored-secrets.js';
import { Metrics } from './ops/metrics.js';
import { ServiceState } from './ops/service-state.js';
import { waitForDatabase } from './ops/wait-for-database.js';
import { outboxLag } from './ops/outbox-lag.js';
import { watchPoolWaits } from './ops/pool-wait.js';
import { startMetricsListener, type MetricsListener } from './ops/metrics-listener.js';
import { keepTickObjectShape } from './ops/tick-shape.js';
import { ProgramKeyNotices } from './db/program-key-notices.js';
import { watchProgramKeys } from './auth/program-key.js';

export interface StartOptions {
  logger?: Logger;
  now?: () => number;
  faults?: Faults;
  /** Use an existing Knex instance (tests share one with their fixtures). */
  db?: Db;
  /** Serve the demo shop for this demo program (`start --demo`, local servers only). */
  demo?: DemoMode;
}

export interface RunningServer {
  url: string;
  /** The metrics listener's address (METRICS_PORT), when there is one. */
  metricsUrl?: string;
  deps: AppDeps;
  server: http.Server;
  /** The commission approval job (tests run a pass with `approval.runNow()`). */
  approval: ApprovalSchedule;
  close(): Promise<void>;
  /**
   * SIGTERM (docs/operator.md, "Drain"): /readyz answers 503 at once and every answer closes its
   * connection, so a balancer stops sending here while nothing in flight fails; after `graceMs`,
   * close() stops accepting, finishes what is in flight and flushes the click batch.
   */
  drain(graceMs: number): Promise<void>;
}

/**
 * How long after a drain's grace period the listener stays open. The promise is about requests
 * sent before the grace period ended; one sent in its last milliseconds may still be on its way
 * (through nginx, on a busy host), and a listener closed under it resets its connection — a 502
 * nginx cannot retry for a click. Measured (reliability/drain.test.ts): without this margin such
 * a request met the closed listener in about one run in three on a 2-core host.
 */
const LATE_ARRIVAL_MS = 250;
/** After a server stops accepting: how long connections just accepted get to have their request read (see close()). */
const CLOSE_SETTLE_MS = 250;
/** PostgreSQL connections of the background jobs' pool: an outbox pass, a delivery claim, an outcome batch, a mail send. */
const JOBS_POOL_MAX = 4;

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config.logLevel);
  checkSignInPolicy(config, logger);
  // Node's nextTick objects keep one shape for the life of the process (ops/tick-shape.ts).
  keepTickObjectShape();
  // A missing or malformed key stops the start before anything is opened (ConfigError).
  const { box: secrets, devKeyFile } = openSecretBox(config);
  const now = options.now ?? Date.now;
  const db = options.db ?? createDb(config.database, logger);
  try {
    // A database that is still starting (or restarting) is waited for, with back-off, up to DATABASE_WAIT_MS.
    await waitForDatabase(db, config.databaseWaitMs, logger);
    await migrateLatest(db, config.database.client === 'postgres' ? config.database.schema : undefined);
    const { upgraded } = await prepareStoredSecrets(db, secrets, now());
    if (upgraded > 0) logger.info({ programs: upgraded }, 'Stripe signing secrets of an earlier release are now encrypted; their plaintext column is cleared');
  } catch (err) {
    if (!options.db) await db.destroy();
    throw err;
  }
  if (devKeyFile) logger.warn({ keyFile: devKeyFile }, 'ENCRYPTION_KEY is not set: stored secrets are encrypted with a development key kept in this file; set ENCRYPTION_KEY before exposing this server');
  const metrics = new Metrics();
  const service = new ServiceState(logger, metrics, () => db.raw('select 1'));
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false }) : undefined;
  // One log line per change of Redis's state (service-state.ts), not one per reconnection attempt.
  redis?.on('ready', () => service.redisChanged(true));
  redis?.on('error', (err) => service.redisChanged(false, err.message));
  redis?.on('close', () => service.redisChanged(false, 'connection closed'));
  // PostgreSQL: the outbox passes and the delivery and mail workers take connections from a pool of
  // their own. On the requests' pool each of their transactions queued behind every request waiting
  // for a connection, and under load a sale's webhook waited over a second for its claim alone
  // (docs/performance.md, "Webhooks"). SQLite has one writer either way: the same connection.
  const jobsDb = config.database.client === 'postgres' && !options.db ? createDb({ ...config.database, poolMax: JOBS_POOL_MAX }, logger) : db;
  // PostgreSQL: keys are cached for longer while this process hears every change to them (5.4).
  const keyNotices = config.database.client === 'postgres' ? new ProgramKeyNotices(config.database.connectionString, jobsDb, logger) : undefined;
  const unwatchKeys = keyNotices ? watchProgramKeys(db, keyNotices) : undefined;
  await keyNotices?.start();
  const outbox = new ProcessOutbox(new OutboxRunner({ db: jobsDb, now, logger }, OUTBOX_CONSUMERS), new StatsThread(config.database, logger));
  const webhooks = new WebhookWorker({ db: jobsDb, secrets, now, logger, allowPrivateTargets: config.webhooks.allowPrivateTargets, timeoutMs: config.webhooks.timeoutMs, publicBaseUrl: config.publicBaseUrl });
  const mail = new MailWorker({ db: jobsDb, secrets, now, logger, transport: createMailTransport(config, logger), from: config.mail.from });
  const oidc = createOidcClient(config);
  const deps: AppDeps = {
    config,
    db,
    atomic: createAtomic(db, () => outbox.poke()),
    logger,
    now,
    limiters: createRateLimiters(redis, () => metrics.rateLimitFallback.inc()),
    clicks: new ClickBatcher(clickWriterFor(config.database), (size, seconds, ok) => {
      metrics.clickBatchSize.observe(size);
      metrics.clickCommitSeconds.observe({ outcome: ok ? 'committed' : 'failed' }, seconds);
      if (ok) outbox.clicksCommitted();
    }, config.uniqueClickWindowMinutes * 60_000),
    links: new LinkCache(db),
    geo: await createGeoLookup({ trustProxy: config.trustProxy !== false, maxmindFile: config.geoipDatabase }),
    faults: options.faults ?? {},
    identity: createIdentityProvider(config, db, oidc),
    ...(oidc ? { oidc } : {}),
    origins: new DashboardOrigins(config),
    outbox,
    ...(options.demo ? { demo: options.demo } : {}),
    secrets,
    webhooks,
    mail,
    ops: { metrics, state: service },
  };
  metrics.sources.clickQueue = () => deps.clicks.depth();
  metrics.sources.pool = () => {
    const pool = (db.client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number } }).pool;
    return pool ? { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() } : undefined;
  };
  metrics.sources.outboxLag = () => outboxLag(db, now());
  if (keyNotices) metrics.watchKeyNotices(() => keyNotices.trusted(Date.now()));
  const stopPoolWatch = watchPoolWaits(db, metrics);
  const app = createApp(deps);
  // The Host allow-list comes first: nothing, not even the click lane, runs for a foreign Host.
  // Node checks the two timeouts below every `connectionsCheckingInterval` (30 s by default, which
  // let a slow sender keep its socket 15–45 s instead of 15): once a second, they hold to the second.
  const handle = withHostGate(config.allowedHosts, withClickLane(deps, app.callback()));
  let closing: Promise<void> | undefined;
  const server = http.createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
    // While shutting down, every answer closes its connection, and idle keep-alive connections are
    // dropped as soon as their last request is answered, so close() does not wait for their timeout.
    // Set before the request is handled: the Host gate answers a foreign Host at once, and a
    // header set after that answer threw out of the request event and stopped the process mid-drain.
    if (closing || service.draining) res.setHeader('Connection', 'close');
    handle(req, res);
  });
  server.keepAliveTimeout = 65_000;
  // A client gets 15 s for its headers and 30 s for its whole request (the largest body is the
  // Stripe intake's 512 KiB): a slow sender cannot hold a socket for Node's 60 s / 300 s defaults.
  // Headers that are late are answered 408 (client-error.ts).
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  let metricsListener: MetricsListener | undefined;
  // Expired login sessions, used id_tokens, sessions and tokens: deleted now and every few minutes.
  const pruning = schedulePruning({ ...deps, options: { trackingLogRetentionDays: config.trackingLogRetentionDays } });
  // Pending commissions whose hold has passed become approved: now and every minute.
  const approval = scheduleCommissionApproval(deps);
  outbox.start();
  webhooks.start();
  mail.start();
  const { port } = server.address() as AddressInfo;
  deps.origins.listeningOn(port);
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => {
        let sweep: NodeJS.Timeout | undefined;
        // Stop accepting, but without http.Server.close()'s immediate closing of idle connections: a
        // connection accepted a moment ago whose request is not read yet counts as idle, and closing
        // it resets a request the client (nginx) already sent — a 502 nginx cannot retry for a click.
        // Such requests are read within a few milliseconds; then idle connections are closed.
        net.Server.prototype.close.call(server, () => {
          clearTimeout(settle);
          clearInterval(sweep);
          resolve();
        });
        // Connections closing with a lingering close have had their answers: they go too.
        const closeFinished = () => {
          server.closeIdleConnections();
          stopLingering(server);
        };
        const settle = setTimeout(() => {
          closeFinished();
          sweep = setInterval(closeFinished, 25);
        }, CLOSE_SETTLE_MS);
      });
      await deps.clicks.close();
      await pruning.stop();
      await approval.stop();
      await outbox.stop();
      await webhooks.stop();
      await mail.stop();
      unwatchKeys?.();
      await keyNotices?.stop();
      redis?.disconnect();
      service.stop();
      stopPoolWatch();
      // Last to go: a scrape during the drain still sees reftrack_draining 1.
      await metricsListener?.close();
      if (jobsDb !== db) await jobsDb.destroy();
      if (!options.db) await db.destroy();
      logger.flush();
    })());
  const drain = async (graceMs: number): Promise<void> => {
    service.startDraining(graceMs);
    await new Promise((resolve) => setTimeout(resolve, graceMs > 0 ? graceMs + LATE_ARRIVAL_MS : 0));
    logger.info('grace period over: no longer accepting connections; finishing requests in flight');
    await close();
  };
  if (config.metricsPort !== undefined) {
    try {
      metricsListener = await startMetricsListener(metrics, config.metricsHost, config.metricsPort, logger, config.allowedHosts);
    } catch (err) {
      // Not serving without the metrics the operator asked for: a port in use is a start failure.
      await close();
      throw err;
    }
    logger.info({ url: `${metricsListener.url}/metrics` }, 'metrics listening');
  }
  return { url, ...(metricsListener ? { metricsUrl: metricsListener.url } : {}), deps, server, approval, close, drain };
}
