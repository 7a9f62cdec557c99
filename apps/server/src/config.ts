/** Environment → typed configuration, checked once at start. */
import path from 'node:path';

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
  oidcAudience?: string;
  logLevel: string;
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
  if (env.OIDC_ISSUER && !env.OIDC_AUDIENCE) throw new ConfigError('OIDC_AUDIENCE is required when OIDC_ISSUER is set');
  return {
    port,
    host: env.HOST ?? '127.0.0.1',
    database: parseDatabaseUrl(env.DATABASE_URL),
    redisUrl: env.REDIS_URL || undefined,
    publicBaseUrl,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    geoipDatabase: env.GEOIP_DATABASE || undefined,
    sessionSecret: env.SESSION_SECRET || undefined,
    oidcIssuer: env.OIDC_ISSUER || undefined,
    oidcAudience: env.OIDC_AUDIENCE || undefined,
    logLevel: env.LOG_LEVEL ?? 'info',
  };
}
