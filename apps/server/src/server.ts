/** Builds the dependencies, migrates, listens; and shuts down in order (stop accepting, finish, close pools). */
import http from 'node:http';
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
import type { AppDeps, Faults } from './deps.js';
import { createIdentityProvider } from './auth/id-token.js';

export interface StartOptions {
  logger?: Logger;
  now?: () => number;
  faults?: Faults;
  /** Use an existing Knex instance (tests share one with their fixtures). */
  db?: Db;
}

export interface RunningServer {
  url: string;
  deps: AppDeps;
  server: http.Server;
  close(): Promise<void>;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const db = options.db ?? createDb(config.database);
  await migrateLatest(db, config.database.client === 'postgres' ? config.database.schema : undefined);
  if (!config.oidcIssuer) logger.warn('OIDC_ISSUER is not set: the development identity provider is active (anyone can sign in with any e-mail)');
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false }) : undefined;
  redis?.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const deps: AppDeps = {
    config,
    db,
    atomic: createAtomic(db),
    logger,
    now: options.now ?? Date.now,
    limiters: createRateLimiters(redis),
    clicks: new ClickBatcher(clickWriterFor(config.database)),
    links: new LinkCache(db),
    geo: await createGeoLookup({ trustProxy: config.trustProxy !== false, maxmindFile: config.geoipDatabase }),
    faults: options.faults ?? {},
    identity: createIdentityProvider(config, db),
  };
  const app = createApp(deps);
  const server = http.createServer(withClickLane(deps, app.callback()));
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  let closing: Promise<void> | undefined;
  // While shutting down, every answer closes its connection, and idle keep-alive connections are
  // dropped as soon as their last request is answered, so close() does not wait for their timeout.
  server.on('request', (_req, res) => {
    if (closing) res.setHeader('Connection', 'close');
  });
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => {
        const sweep = setInterval(() => server.closeIdleConnections(), 25);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      });
      await deps.clicks.close();
      redis?.disconnect();
      if (!options.db) await db.destroy();
      logger.flush();
    })());
  return { url, deps, server, close };
}
