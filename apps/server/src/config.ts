/** Environment → typed configuration, checked once at start. */
import path from 'node:path';
import { STATS_LIMITS, WEBHOOK_LIMITS } from '@reftrack/contract';

export type DatabaseConfig =
  | { client: 'sqlite'; filename: string }
  | { client: 'postgres'; connectionString: string; schema?: string; poolMax: number };

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  redisUrl?: string;
  publicBaseUrl: string;
  /** false, or the number of trusted proxy hops in X-Forwarded-For */
  trustProxy: false | number;
  geoipDatabase?: string;
  sessionSecret?: string;
  oidcIssuer?: string;
  /** The `aud` an id_token must carry: OIDC_AUDIENCE, else the client id (they are the same at almost every provider). */
  oidcAudience?: string;
  /** OIDC_CLIENT_ID, else OIDC_AUDIENCE (which served as the client id before OIDC_CLIENT_ID existed). */
  oidcClientId?: string;
  /** OIDC_CLIENT_SECRET: a confidential client; without it the server is a public client (PKCE only). */
  oidcClientSecret?: string;
  /** OIDC_PROVIDER_NAME: what "Sign in with …" names; else the issuer's host name. */
  oidcProviderName?: string;
  logLevel: string;
  /**
   * Host names (without port, lower-case) a request's `Host` may carry (DNS-rebinding defence):
   * PUBLIC_BASE_URL's host and ALLOWED_HOSTS; the loopback names too when the server is bound to a
   * loopback address and PUBLIC_BASE_URL is not set.
   */
  allowedHosts: string[];
  /** Whether PUBLIC_BASE_URL was set (else it defaults to http://localhost:PORT). */
  publicBaseUrlSet: boolean;
  /**
   * Why this configuration counts as exposed (NODE_ENV=production, a non-loopback HOST, an https
   * PUBLIC_BASE_URL); empty for a local development set-up. Exposed servers refuse the development
   * identity provider unless `allowDevSignIn`, and need ENCRYPTION_KEY.
   */
  exposedBecause: string[];
  /** ALLOW_DEV_SIGN_IN=true: the operator's explicit opt-in to the development sign-in on an exposed server. */
  allowDevSignIn: boolean;
  /** ENCRYPTION_KEY: encrypts stored secrets that must be read back (docs/security.md). */
  encryptionKey?: string;
  /** ENCRYPTION_KEY_PREVIOUS: comma-separated keys still accepted for decryption during a rotation. */
  encryptionKeyPrevious: string[];
  /** Outbound webhooks (docs/webhooks.md). */
  webhooks: {
    /** WEBHOOKS_ALLOW_PRIVATE_TARGETS=true: deliveries may go to private and loopback addresses (self-hosted networks, tests). */
    allowPrivateTargets: boolean;
    /** WEBHOOKS_TIMEOUT_MS: the time limit of one attempt (default 10 s). */
    timeoutMs: number;
  };
  /** Outgoing e-mail (docs/partners.md, "E-mail"): SMTP_URL (smtp:// or smtps://) and MAIL_FROM; without SMTP_URL, mail goes to the log and the development mailbox. */
  mail: { smtpUrl?: string; from: string };
  /** METRICS_TOKEN: the bearer token of GET /metrics; without it /metrics answers 404. */
  metricsToken?: string;
  /** METRICS_PORT: a listener of its own serving GET /metrics without a token (unset: none; 0: any free port). */
  metricsPort?: number;
  /** METRICS_HOST: the address of that listener (default 127.0.0.1). */
  metricsHost: string;
  /** SHUTDOWN_GRACE_MS: how long a draining process keeps serving after SIGTERM (/readyz already 503). */
  shutdownGraceMs: number;
  /** DATABASE_WAIT_MS: how long `start` waits for an unreachable database, with back-off, before giving up. */
  databaseWaitMs: number;
  /** TRACKING_LOG_RETENTION_DAYS: tracking log entries older than this are pruned (default 90; 0 keeps them). */
  trackingLogRetentionDays: number;
  /** UNIQUE_CLICK_WINDOW_MINUTES: a visitor's clicks on a link within this window count as one unique click (default a day; 0 counts every click; docs/analytics.md). */
  uniqueClickWindowMinutes: number;
}

export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '::1', '[::1]'] as const;

/** True for a loopback address or name (the whole 127/8 block counts). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return (LOOPBACK_HOSTS as readonly string[]).includes(h) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h.endsWith('.localhost');
}

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const truthy = (value: string | undefined): boolean => ['1', 'true', 'on', 'yes'].includes((value ?? '').trim().toLowerCase());

/** `example.com` from `example.com`, `Example.COM:8080`, `[::1]:8787`; undefined when it is not a plain host name or address. */
export function hostnameOf(hostHeader: string): string | undefined {
  const h = hostHeader.trim().toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/.exec(h);
  return m ? m[1] : undefined;
}

export class ConfigError extends Error {}

export function parseDatabaseUrl(url: string | undefined, cwd = process.cwd()): DatabaseConfig {
  if (!url) return { client: 'sqlite', filename: path.join(cwd, '.reftrack', 'reftrack.db') };
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!file) throw new ConfigError('DATABASE_URL=sqlite:PATH needs a file path');
    return { client: 'sqlite', filename: path.resolve(cwd, file) };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const parsed = new URL(url);
    const schema = parsed.searchParams.get('schema') ?? undefined;
    parsed.searchParams.delete('schema');
    const poolMax = Number(process.env.DATABASE_POOL_MAX ?? 10);
    if (!Number.isInteger(poolMax) || poolMax < 1) throw new ConfigError('DATABASE_POOL_MAX must be a positive integer');
    return { client: 'postgres', connectionString: parsed.toString(), schema, poolMax };
  }
  throw new ConfigError(`DATABASE_URL must start with sqlite: or postgres:// (got "${url.split(':')[0]}:")`);
}

function parseTrustProxy(value: string | undefined): false | number {
  if (!value || ['0', 'false', 'off', 'no'].includes(value.toLowerCase())) return false;
  if (['1', 'true', 'on', 'yes'].includes(value.toLowerCase())) return 1;
  const hops = Number(value);
  if (!Number.isInteger(hops) || hops < 1) throw new ConfigError('TRUST_PROXY must be off, on, or the number of proxy hops');
  return hops;
}

function parseTimeout(value: string | undefined): number {
  if (!value) return WEBHOOK_LIMITS.timeoutMs;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 100 || ms > 60_000) throw new ConfigError('WEBHOOKS_TIMEOUT_MS must be an integer from 100 to 60000');
  return ms;
}

/** A whole number from 0 (to `max`, when given) in the unit the setting's message names; unset: `fallback`. */
function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, unit: string, max?: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (Number.isInteger(n) && n >= 0 && (max === undefined || n <= max)) return n;
  const range = max === undefined ? '' : ` from 0 to ${max}`;
  throw new ConfigError(`${name} must be a whole number of ${unit}${range} (got "${value}")`);
}

const days = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => wholeNumber(env, name, fallback, 'days', 36_500);
const minutes = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => wholeNumber(env, name, fallback, 'minutes', 525_600);
const millis = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => wholeNumber(env, name, fallback, 'milliseconds');

function metricsListener(env: NodeJS.ProcessEnv): { metricsPort?: number; metricsHost: string } {
  const metricsHost = env.METRICS_HOST || '127.0.0.1';
  if (env.METRICS_PORT === undefined || env.METRICS_PORT === '') return { metricsHost };
  const metricsPort = Number(env.METRICS_PORT);
  if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) throw new ConfigError(`METRICS_PORT must be an integer 0-65535 (got "${env.METRICS_PORT}")`);
  return { metricsPort, metricsHost };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT must be an integer 0-65535 (got "${env.PORT}")`);
  const publicBaseUrl = (env.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicBaseUrl);
  } catch {
    throw new ConfigError(`PUBLIC_BASE_URL must be an absolute URL (got "${publicBaseUrl}")`);
  }
  if (env.REDIS_URL && !/^rediss?:\/\//.test(env.REDIS_URL)) throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  if (env.OIDC_ISSUER && !env.OIDC_CLIENT_ID && !env.OIDC_AUDIENCE) throw new ConfigError('OIDC_CLIENT_ID (or OIDC_AUDIENCE) is required when OIDC_ISSUER is set');
  if (env.OIDC_ISSUER) {
    try {
      const u = new URL(env.OIDC_ISSUER);
      if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname))) throw new Error();
    } catch {
      throw new ConfigError(`OIDC_ISSUER must be an https URL (http only on a loopback address) (got "${env.OIDC_ISSUER}")`);
    }
  }
  const host = env.HOST ?? '127.0.0.1';
  const publicBaseUrlSet = Boolean(env.PUBLIC_BASE_URL);
  const publicUrl = new URL(publicBaseUrl);
  const extraHosts = list(env.ALLOWED_HOSTS).map((h) => {
    const name = hostnameOf(h);
    if (!name) throw new ConfigError(`ALLOWED_HOSTS must be a comma-separated list of host names (got "${h}")`);
    return name;
  });
  const allowedHosts = new Set([publicUrl.hostname.toLowerCase(), ...extraHosts]);
  if (!publicBaseUrlSet && isLoopbackHost(host)) for (const name of LOOPBACK_HOSTS) allowedHosts.add(name);
  const exposedBecause: string[] = [];
  if (env.NODE_ENV === 'production') exposedBecause.push('NODE_ENV=production');
  if (!isLoopbackHost(host)) exposedBecause.push(`HOST=${host} is not a loopback address`);
  if (publicUrl.protocol === 'https:') exposedBecause.push(`PUBLIC_BASE_URL is https`);
  return {
    port,
    host,
    database: parseDatabaseUrl(env.DATABASE_URL),
    redisUrl: env.REDIS_URL || undefined,
    publicBaseUrl,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    geoipDatabase: env.GEOIP_DATABASE || undefined,
    sessionSecret: env.SESSION_SECRET || undefined,
    oidcIssuer: env.OIDC_ISSUER || undefined,
    oidcAudience: env.OIDC_AUDIENCE || env.OIDC_CLIENT_ID || undefined,
    oidcClientId: env.OIDC_CLIENT_ID || env.OIDC_AUDIENCE || undefined,
    oidcClientSecret: env.OIDC_CLIENT_SECRET || undefined,
    oidcProviderName: env.OIDC_PROVIDER_NAME || undefined,
    logLevel: env.LOG_LEVEL ?? 'info',
    allowedHosts: [...allowedHosts],
    publicBaseUrlSet,
    exposedBecause,
    allowDevSignIn: truthy(env.ALLOW_DEV_SIGN_IN),
    encryptionKey: env.ENCRYPTION_KEY || undefined,
    encryptionKeyPrevious: list(env.ENCRYPTION_KEY_PREVIOUS),
    webhooks: { allowPrivateTargets: truthy(env.WEBHOOKS_ALLOW_PRIVATE_TARGETS), timeoutMs: parseTimeout(env.WEBHOOKS_TIMEOUT_MS) },
    mail: { ...(env.SMTP_URL ? { smtpUrl: env.SMTP_URL } : {}), from: env.MAIL_FROM || `Reftrack <no-reply@${publicUrl.hostname}>` },
    metricsToken: env.METRICS_TOKEN || undefined,
    ...metricsListener(env),
    shutdownGraceMs: millis(env, 'SHUTDOWN_GRACE_MS', 5_000),
    databaseWaitMs: millis(env, 'DATABASE_WAIT_MS', 60_000),
    trackingLogRetentionDays: days(env, 'TRACKING_LOG_RETENTION_DAYS', 90),
    uniqueClickWindowMinutes: minutes(env, 'UNIQUE_CLICK_WINDOW_MINUTES', STATS_LIMITS.uniqueClickWindowMinutesDefault),
  };
}
