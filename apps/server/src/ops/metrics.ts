/**
 * The Prometheus metrics of one server (docs/operator.md, "Metrics"), in a registry of its own:
 * tests start several servers in one process, and each must count only its own requests.
 * Gauges that read state (click queue, pool, outbox lag) are computed when scraped, not on the
 * request path.
 */
import client from 'prom-client';
import { Histogram } from './histogram.js';

/** 2xx, 4xx, 5xx: per status class, so that the label set stays small. */
export const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`;

/** What a scrape reads from the rest of the server (set by server.ts once everything exists). */
export interface MetricSources {
  clickQueue?: () => { queued: number; inFlight: number };
  pool?: () => { used: number; free: number; pending: number } | undefined;
  outboxLag?: () => Promise<Array<{ consumer: string; pending: number; oldestAgeSeconds: number }>>;
}

export class Metrics {
  readonly registry = new client.Registry();
  readonly sources: MetricSources = {};

  readonly requestSeconds = new Histogram({
    name: 'reftrack_http_request_duration_seconds',
    help: 'Time to answer a request, per route pattern, method and status class (its _count is the request rate).',
    labelNames: ['method', 'route', 'status_class'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly rateLimited = new client.Counter({
    name: 'reftrack_rate_limited_total',
    help: 'Requests refused with 429, per route pattern.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  readonly clickBatchSize = new Histogram({
    name: 'reftrack_click_batch_size',
    help: 'Clicks per committed click batch.',
    buckets: [1, 2, 5, 10, 30, 60, 120, 250, 500],
    registers: [this.registry],
  });
  readonly trackingGroupSize = new Histogram({
    name: 'reftrack_tracking_group_size',
    help: 'Leads or sales per PostgreSQL group commit of the lead and sale routes.',
    labelNames: ['route'] as const,
    buckets: [1, 2, 5, 10, 20, 50, 100, 200],
    registers: [this.registry],
  });
  readonly clickCommitSeconds = new Histogram({
    name: 'reftrack_click_batch_commit_seconds',
    help: 'Time to commit one click batch.',
    labelNames: ['outcome'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly poolAcquireSeconds = new Histogram({
    name: 'reftrack_db_pool_acquire_seconds',
    help: 'Time a query waited for a database connection from the pool (SQLite: its one connection).',
    labelNames: ['outcome'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly sqliteWriteLockSeconds = new Histogram({
    name: 'reftrack_sqlite_write_lock_wait_seconds',
    help: "SQLite only: time a write waited for the file's write lock, held by another transaction or the click writer thread.",
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly redisUp = new client.Gauge({
    name: 'reftrack_redis_up',
    help: '1 while the Redis rate-limit store answers, 0 while limits fall back to per-process memory (absent without REDIS_URL).',
    registers: [this.registry],
  });
  readonly rateLimitFallback = new client.Counter({
    name: 'reftrack_rate_limit_memory_fallback_total',
    help: 'Rate-limit points spent in per-process memory because Redis was unreachable.',
    registers: [this.registry],
  });
  readonly databaseUp = new client.Gauge({
    name: 'reftrack_database_up',
    help: '0 after a request failed because the database was unreachable, 1 again after one succeeded.',
    registers: [this.registry],
  });
  readonly databaseUnavailable = new client.Counter({
    name: 'reftrack_database_unavailable_total',
    help: 'Requests answered with the route failure and Retry-After because the database was unreachable.',
    registers: [this.registry],
  });
  readonly draining = new client.Gauge({
    name: 'reftrack_draining',
    help: '1 from SIGTERM until exit.',
    registers: [this.registry],
  });

  constructor() {
    client.collectDefaultMetrics({ register: this.registry, prefix: 'reftrack_' });
    const sources = this.sources;
    this.databaseUp.set(1);
    new client.Gauge({
      name: 'reftrack_click_queue_depth',
      help: 'Clicks waiting for a batch, and batches being committed.',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const q = sources.clickQueue?.();
        if (!q) return;
        this.set({ state: 'queued' }, q.queued);
        this.set({ state: 'committing' }, q.inFlight);
      },
    });
    new client.Gauge({
      name: 'reftrack_db_pool_connections',
      help: 'Database pool connections in use and free, and requests waiting for one.',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const p = sources.pool?.();
        if (!p) return;
        this.set({ state: 'used' }, p.used);
        this.set({ state: 'free' }, p.free);
        this.set({ state: 'waiting' }, p.pending);
      },
    });
    new client.Gauge({
      name: 'reftrack_outbox_pending_events',
      help: 'Domain events a consumer has not processed yet.',
      labelNames: ['consumer'] as const,
      registers: [this.registry],
      async collect() {
        for (const row of (await sources.outboxLag?.().catch(() => [])) ?? []) this.set({ consumer: row.consumer }, row.pending);
      },
    });
    new client.Gauge({
      name: 'reftrack_outbox_lag_seconds',
      help: 'Age of the oldest event a consumer has not processed yet (0: caught up).',
      labelNames: ['consumer'] as const,
      registers: [this.registry],
      async collect() {
        for (const row of (await sources.outboxLag?.().catch(() => [])) ?? []) this.set({ consumer: row.consumer }, row.oldestAgeSeconds);
      },
    });
  }

  /** PostgreSQL only (so absent on SQLite): whether the program key watch vouches for its cache (db/program-key-notices.ts). */
  watchKeyNotices(trusted: () => boolean): void {
    new client.Gauge({
      name: 'reftrack_program_key_notices_trusted',
      help: 'PostgreSQL: 1 while this process hears every change to program keys (and keeps keys it read for up to a minute), 0 while it keeps them half a second.',
      registers: [this.registry],
      collect() {
        this.set(trusted() ? 1 : 0);
      },
    });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requestSeconds.observe({ method, route, status_class: statusClass(status) }, seconds);
    if (status === 429) this.rateLimited.inc({ route });
  }

  /**
   * observeRequest for one method, route and status, with the series found once: the click lane
   * answers thousands of 200s a second, and finding a series by its labels builds a string key and
   * looks it up each time (histogram.ts), several times the cost of the observation itself.
   */
  requestObserver(method: string, route: string, status: number): (seconds: number) => void {
    // A 429 is counted per route as well: left to observeRequest.
    if (status === 429) return (seconds) => this.observeRequest(method, route, status, seconds);
    const bound = this.requestSeconds.labels({ method, route, status_class: statusClass(status) });
    return (seconds) => bound.observe(seconds);
  }
}
