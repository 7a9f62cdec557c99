// @ts-check
/**
 * The PostgreSQL the server suite runs on: the first of these URLs that accepts a connection (trust
 * auth, database `test`). Shared by the runner (run-both.mjs, plain Node), the suite's helpers and
 * the benchmark (bench/db.mjs).
 */
import pg from 'pg';

const CANDIDATES = /** @type {string[]} */ ([process.env.TEST_POSTGRES_URL, 'postgres://postgres@127.0.0.1:5432/test', 'postgres://root@127.0.0.1:5432/test'].filter(Boolean));

/** @returns {Promise<string | undefined>} the first reachable URL, or undefined when none answers */
export async function findTestPostgres() {
  for (const url of CANDIDATES) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.end();
      return url;
    } catch {
      await client.end().catch(() => undefined);
    }
  }
  return undefined;
}
