/** Everything a route needs, built once at start and handed to each handler factory. */
import type { Config } from './config.js';
import type { Db } from './db/knex.js';
import type { Logger } from './logger.js';
import type { RateLimiters } from './http/rate-limit.js';
import type { ClickBatcher } from './db/click-batcher.js';
import type { LinkCache } from './db/link-cache.js';
import type { GeoLookup } from './domain/geo.js';
import type { IdentityProvider } from './auth/id-token.js';
import type { OidcClient } from './auth/oidc-client.js';
import type { Atomic } from './db/atomic.js';
import type { DashboardOrigins } from './http/origins.js';
import type { Outbox } from './jobs/process-outbox.js';
import type { SecretBox } from './secrets/secret-box.js';
import type { WebhookWorker } from './jobs/webhook-worker.js';
import type { MailWorker } from './mail/worker.js';
import type { Metrics } from './ops/metrics.js';
import type { ServiceState } from './ops/service-state.js';

/** Test-only hooks that inject a failure at a named point; empty in production. */
export interface Faults {
  /** Runs inside the sale transaction after the sale insert, before the commission insert. */
  afterSaleInsert?: () => void | Promise<void>;
  /** Runs before a real click goes into its batch. */
  beforeClickSubmit?: () => void;
}

/** `start --demo` on a local server: the demo program and its key, for the demo shop (routes/demo/). */
export interface DemoMode {
  programId: number;
  apiKey: string;
}

export interface AppDeps {
  config: Config;
  db: Db;
  /** Runs one request's writes atomically (group-committed on SQLite). */
  atomic: Atomic;
  logger: Logger;
  now: () => number;
  limiters: RateLimiters;
  clicks: ClickBatcher;
  links: LinkCache;
  geo: GeoLookup;
  faults: Faults;
  identity: IdentityProvider;
  /** The relying party of OIDC_ISSUER (auth/oidc-client.ts); absent with the development identity provider. */
  oidc?: OidcClient;
  /** The dashboard's own origins, for the cross-site check of session writes. */
  origins: DashboardOrigins;
  /** The outbox's consumer loop: `poke()` after committing events; `drain()` in tests. */
  outbox: Outbox;
  /** Set only by `start --demo` on an unexposed server: the demo shop is served then, and never otherwise. */
  demo?: DemoMode;
  /** Seals and opens stored secrets that must be read back (secrets/secret-box.ts). */
  secrets: SecretBox;
  /** Outbound webhooks' delivery worker: `runDue()` in tests; routes wake it through webhooks/wakeup.ts. */
  webhooks: WebhookWorker;
  /** Outgoing mail (mail/worker.ts): `runDue()` in tests; woken by the outbox's mail consumer. */
  mail: MailWorker;
  /** Operations: the Prometheus metrics and the process's own health (draining, database, Redis). */
  ops: { metrics: Metrics; state: ServiceState };
}
