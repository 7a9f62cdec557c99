/**
 * Is monthly partitioning of click_events worth it (docs/scaling.md)? Builds, in a fresh
 * PostgreSQL schema migrated by this release, `click_events` with N rows (default 10 million) spread
 * over 12 months and 20 programs (one program holds half of them), and a copy of it partitioned by
 * month on click_timestamp with the same listing index; then measures on both:
 *   - table and index sizes;
 *   - the event listing's click read (spec 4.6: newest 3 x pageSize non-test clicks of a program),
 *     page 1 and a one-month dateFrom/dateTo window, median of 25 runs each, warm;
 *   - inserting 100,000 clicks as 200 statements of 500 rows (the shape of a click batch's insert),
 *     into the full tables and into an empty unpartitioned one;
 *   - removing the oldest month: DELETE on the plain table, DROP of the partition on the other.
 * The schema is dropped at the end (--keep keeps it).
 *
 *   node bench/click-table-scale.mjs [--rows 10000000] [--keep]
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import knexFactory from 'knex';
import { findPostgres } from './db.mjs';
import { SERVER_DIR } from './processes.mjs';

const argAt = process.argv.indexOf('--rows');
const ROWS = argAt > 0 ? Number(process.argv[argAt + 1]) : 10_000_000;
const KEEP = process.argv.includes('--keep');
const MONTHS = 12;
const START = Date.UTC(2025, 11, 1); // 2025-12-01: twelve whole months up to 2026-12-01
const monthStart = (i) => Date.UTC(2025, 11 + i, 1);
const END = monthStart(MONTHS);

const baseUrl = await findPostgres();
if (!baseUrl) throw new Error('no PostgreSQL reachable (TEST_POSTGRES_URL, or 127.0.0.1:5432 database test)');
const schema = `bench_scale_${crypto.randomBytes(4).toString('hex')}`;
const admin = knexFactory({ client: 'pg', connection: { connectionString: baseUrl }, pool: { min: 0, max: 1 } });
await admin.raw('create schema ??', [schema]);
await admin.destroy();
execFileSync(process.execPath, [path.join(SERVER_DIR, 'dist', 'main.js'), 'migrate'], {
  env: { ...process.env, DATABASE_URL: `${baseUrl}?schema=${schema}`, LOG_LEVEL: 'warn', ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64') },
  stdio: 'ignore',
});
const knex = knexFactory({ client: 'pg', connection: { connectionString: baseUrl }, searchPath: [schema], pool: { min: 1, max: 1 } });
const sql = async (text, bindings = []) => (await knex.raw(text, bindings)).rows;
const seconds = async (work) => {
  const t = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - t) / 1e9;
};
const log = (...a) => console.log(...a);
const mb = (bytes) => `${(Number(bytes) / 1024 / 1024).toFixed(0)} MB`;

// A row like a real click: URLs, a user agent, geo and device fields (~330 bytes on disk).
const SPREAD = `${START}::bigint + (g::bigint * ${END - START}::bigint / ${ROWS})`;
const ROW_SELECT = (from, to, time = SPREAD) => `
  select case when g % 2 = 0 then 1 else 2 + (g % 19) end as program_id, 1 as link_id, 1 as partner_id,
         'clk_' || md5(g::text) as click_id, md5((g / 3)::text) as session_id,
         'https://shop.example.com/products/item-' || (g % 5000) || chr(63) || 'utm_source=partner&aff=pat' as page_url,
         'Item ' || (g % 5000) || ' – Example Shop' as page_title,
         'https://www.google.com/' as referrer_url, '1920x1080' as screen_resolution, '1280x720' as viewport_size,
         'en-US' as language, 'Europe/Berlin' as timezone,
         'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' as user_agent,
         'DE' as geo_country, 'Berlin' as geo_region, 'Berlin' as geo_city, 'desktop' as device_type, 'Windows' as device_os, 'Chrome' as browser_name,
         (g % 50 = 0) as is_test,
         ${time} as click_timestamp, ${time} as created_at
    from generate_series(${from}, ${to}) g`;
const COLUMNS = 'program_id, link_id, partner_id, click_id, session_id, page_url, page_title, referrer_url, screen_resolution, viewport_size, language, timezone, user_agent, geo_country, geo_region, geo_city, device_type, device_os, browser_name, is_test, click_timestamp, created_at';

async function fill(table) {
  const chunk = 1_000_000;
  for (let from = 1; from <= ROWS; from += chunk) await sql(`insert into ${table} (${COLUMNS}) ${ROW_SELECT(from, Math.min(ROWS, from + chunk - 1))}`);
  await sql(`vacuum analyze ${table}`);
}

try {
  log(`PostgreSQL: ${(await sql('select version() as v'))[0].v.split(' on ')[0]}; shared_buffers ${(await sql('show shared_buffers'))[0].shared_buffers}`);
  log(`rows: ${ROWS.toLocaleString('en')} over ${MONTHS} months, 20 programs (program 1 holds half), 2% test clicks`);

  // The partitioned copy: same columns and defaults, primary key (id, click_timestamp) as
  // partitioning requires, the listing index on the parent (inherited by each month).
  await sql(`create table click_events_part (like click_events including defaults) partition by range (click_timestamp)`);
  await sql(`alter table click_events_part add primary key (id, click_timestamp)`);
  await sql(`create index click_events_part_listing_idx on click_events_part (program_id, is_test, click_timestamp, id)`);
  for (let i = 0; i < MONTHS + 1; i++) await sql(`create table click_events_part_${i} partition of click_events_part for values from (${monthStart(i)}) to (${monthStart(i + 1)})`);
  await sql(`create table click_events_empty (like click_events including all)`);

  log(`fill click_events: ${(await seconds(() => fill('click_events'))).toFixed(0)} s`);
  log(`fill click_events_part: ${(await seconds(() => fill('click_events_part'))).toFixed(0)} s`);

  for (const table of ['click_events', 'click_events_part']) {
    const [size] = await sql(
      table === 'click_events'
        ? `select pg_table_size('click_events') as heap, pg_indexes_size('click_events') as indexes, pg_relation_size('click_events_listing_idx') as listing`
        : `select sum(pg_table_size(c.oid)) as heap, sum(pg_indexes_size(c.oid)) as indexes, (select sum(pg_relation_size(i.indexrelid)) from pg_inherits h join pg_index i on i.indrelid = h.inhrelid join pg_class x on x.oid = i.indexrelid where h.inhparent = 'click_events_part'::regclass and x.relname like '%program_id%') as listing
             from pg_inherits h join pg_class c on c.oid = h.inhrelid where h.inhparent = 'click_events_part'::regclass`,
    );
    log(`${table}: heap ${mb(size.heap)}, indexes ${mb(size.indexes)} (listing index ${mb(size.listing)})`);
  }

  // The listing's click read (routes/tracking/events.ts): newest 30 (3 x pageSize 10) non-test clicks of a program.
  const listing = (table, program, window) =>
    `select id, click_id, click_timestamp from ${table} where program_id = ${program} and is_test = false${window ? ` and click_timestamp between ${window[0]} and ${window[1]}` : ''} order by click_timestamp desc, id desc limit 30`;
  const median = async (text) => {
    const times = [];
    for (let i = 0; i < 25; i++) {
      const [plan] = await sql(`explain (analyze, format json) ${text}`);
      times.push(plan['QUERY PLAN'][0]['Planning Time'] + plan['QUERY PLAN'][0]['Execution Time']);
    }
    times.sort((a, b) => a - b);
    return times[12];
  };
  const month = [monthStart(5), monthStart(6) - 1];
  for (const [label, program, window] of [['page 1, busiest program', 1, undefined], ['page 1, small program', 7, undefined], ['one month window, busiest', 1, month], ['one month window, small', 7, month]]) {
    log(`listing ${label}: plain ${(await median(listing('click_events', program, window))).toFixed(3)} ms, partitioned ${(await median(listing('click_events_part', program, window))).toFixed(3)} ms (planning + execution, median of 25)`);
  }

  // 100,000 clicks as 200 statements of 500 rows, each in its own transaction (one click batch's insert).
  const batches = async (table) =>
    seconds(async () => {
      for (let b = 0; b < 200; b++) {
        const from = ROWS + 1 + b * 500;
        // New clicks: the last day of the range, in the newest month's partition.
        await sql(`insert into ${table} (${COLUMNS}) ${ROW_SELECT(from, from + 499, `${END - 86_400_000}::bigint + g - ${ROWS}`)}`);
      }
    });
  for (const table of ['click_events_empty', 'click_events', 'click_events_part']) log(`insert 100,000 clicks in 500-row statements into ${table}: ${(await batches(table)).toFixed(2)} s`);

  const oldest = [monthStart(0), monthStart(1)];
  log(`remove the oldest month, plain (DELETE): ${(await seconds(() => sql(`delete from click_events where click_timestamp >= ${oldest[0]} and click_timestamp < ${oldest[1]}`))).toFixed(2)} s`);
  log(`remove the oldest month, partitioned (DROP TABLE): ${(await seconds(() => sql('drop table click_events_part_0'))).toFixed(2)} s`);
} finally {
  if (!KEEP) await sql('drop schema ?? cascade', [schema]);
  else log(`kept schema ${schema}`);
  await knex.destroy();
}
