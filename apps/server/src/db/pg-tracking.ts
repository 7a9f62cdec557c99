/**
 * The PostgreSQL statements of the HTTP lead and sale routes: one read for everything the domain
 * decides on (and the ids its writes will use), then one statement that applies the decision
 * (docs/architecture.md, "Leads and sales on PostgreSQL"). Each is a single statement in
 * autocommit, so each is one transaction of its own: the write commits whole or not at all.
 *
 * The rules stay in domain/lead.ts and domain/sale.ts; this module only reads and writes. The
 * statements are sent as named prepared statements on one pooled connection per request, so
 * PostgreSQL parses and plans each text once per connection and the event loop builds no SQL.
 */
import pg from 'pg';
import type { Db } from './knex.js';
import { toRecord, type CustomerRecord } from './customers.js';
import type { EventRow } from './outbox.js';

/** A pooled connection, held by one request for its read and its write. */
export type PgUnit = pg.ClientBase;

interface KnexPool {
  acquireConnection(): Promise<PgUnit>;
  releaseConnection(conn: PgUnit): Promise<void>;
}

/** Runs `work` on one connection of `db`'s pool (the pool's own, so limits and schema apply). */
export async function onPgConnection<T>(db: Db, work: (conn: PgUnit) => Promise<T>): Promise<T> {
  const pool = db.client as unknown as KnexPool;
  const conn = await pool.acquireConnection();
  try {
    return await work(conn);
  } finally {
    await pool.releaseConnection(conn);
  }
}

/**
 * PostgreSQL answered the statement with an error: in autocommit that statement wrote nothing
 * (unlike a lost connection, after which its outcome is unknown).
 */
export const isRefusedStatement = (err: unknown): boolean => err instanceof pg.DatabaseError;

async function run(conn: PgUnit, name: string, text: string, values: unknown[]): Promise<Record<string, unknown>> {
  const result = await conn.query({ name, text, values });
  return result.rows[0] as Record<string, unknown>;
}

/**
 * The customer as findCustomer (db/customers.ts) finds it for a real (not test) flow: by click id,
 * else by customer key in the given program (oldest), else anywhere (newest); its program's
 * lead_auth and workspace; its provisional lead. The arguments are the SQL of the click id, the
 * customer key and the program id.
 * The key arms order by `c.id + 0`, which no index provides, for the reason given at BY_KEY in
 * db/customers.ts: a generic plan must reach the few customers with the key through its index.
 */
const customerBy = (clickId: string, customerKey: string, programId: string) => `
  select c.id, c.click_id, c.program_id, c.partner_id, c.customer_key, c.status, c.click_at, c.lead_at, c.converted_at, c.is_test, c.email,
    p.lead_auth, p.workspace_id,
    (select le.id from lead_events le where le.customer_id = c.id and le.provisional = true and le.is_test = c.is_test order by le.id + 0 limit 1) as provisional_lead_id
  from (
    (select c.*, 1 as rank from customers c where c.click_id = ${clickId} and not c.is_test)
    union all
    (select c.*, 2 from customers c where c.customer_key = ${customerKey} and c.program_id = ${programId} and not c.is_test order by c.id + 0 asc limit 1)
    union all
    (select c.*, 3 from customers c where c.customer_key = ${customerKey} and not c.is_test order by c.id + 0 desc limit 1)
    order by rank limit 1
  ) c join programs p on p.id = c.program_id`;
const CUSTOMER = customerBy('$1::text', '$2::text', '$3::int');

/** The lookup keys findCustomer would try: a key it would not look up (too long, empty) is null. */
function lookupKeys(ids: { clickId?: string; customerKey?: string }, programId: number | undefined): [string | null, string | null, number | null] {
  const clickId = ids.clickId && ids.clickId.length <= 64 ? ids.clickId : null;
  const customerKey = ids.customerKey && ids.customerKey.length <= 255 ? ids.customerKey : null;
  return [clickId, customerKey, programId ?? null];
}

// The leads of a group commit (domain/lead.ts, commitLeads), one row each in the order given. A lead id
// is taken only when the customer is in the key's program (or there is no key): a refused lead
// leaves no gap in the ids.
const LEADS_READ = `
  select x.n, c.*, case when c.id is not null and (c.program_id = x.program_id or x.program_id is null) then nextval('lead_events_id_seq')::int end as next_lead_id
  from unnest($1::text[], $2::text[], $3::int[]) with ordinality as x(click_id, customer_key, program_id, n)
  left join lateral (${customerBy('x.click_id', 'x.customer_key', 'x.program_id')}) c on true
  order by x.n`;

export interface LeadRead {
  customer: CustomerRecord | undefined;
  /** The id the new lead will have (null when the customer is not there to take it). */
  leadId: number | null;
}

/** One read for every lead of a group: each one's customer as findCustomer finds it, and its lead id. */
export async function readForLeads(conn: PgUnit, leads: Array<{ ids: { clickId?: string; customerKey?: string }; programId: number | undefined }>): Promise<LeadRead[]> {
  const keys = leads.map((l) => lookupKeys(l.ids, l.programId));
  const result = await conn.query({ name: 'reftrack_lead_read', text: LEADS_READ, values: [0, 1, 2].map((k) => keys.map((key) => key[k])) });
  const rows = result.rows as Record<string, unknown>[];
  if (rows.length !== leads.length) throw new Error(`the leads' read answered ${rows.length} rows for ${leads.length} leads`);
  return rows.map((row) => ({ customer: row.id == null ? undefined : toRecord(row, false), leadId: row.next_lead_id == null ? null : Number(row.next_lead_id) }));
}

/** The outbox columns of a unit's events, one array each, for `unnest`; every event names its workspace. */
function eventArrays(rows: EventRow[]): unknown[] {
  if (rows.some((r) => r[3] === null)) throw new Error('an event written by a tracking statement must name its workspace');
  return Array.from({ length: 8 }, (_, column) => rows.map((r) => r[column]));
}

// Every write hangs on the guarded customer update (`u`): when a concurrent lead moved the
// customer on first, nothing is written. Locks are taken in the order of the transactional path
// (customer, then the partner's counters).
//
// The events' workspace is given (the read found the customer's program, so eventArrays insists on
// it) rather than looked up per row: a subquery per row of `unnest` made PostgreSQL's generic plan
// of the write (it assumes 10 rows of an array parameter) cost more than a plan made for the
// values, so it planned the statement anew on every execution — half of the write's time in
// PostgreSQL (docs/performance.md, "Plans made once").
const OUTBOX_INSERT = (guard: string) => `
  insert into outbox_events (event_id, type, version, workspace_id, program_id, payload, actor, occurred_at)
  select e.event_id, e.type, e.version, e.workspace_id, e.program_id, e.payload, e.actor, e.occurred_at
  from unnest($EV1::text[], $EV2::text[], $EV3::smallint[], $EV4::int[], $EV5::int[], $EV6::text[], $EV7::text[], $EV8::bigint[])
    as e(event_id, type, version, workspace_id, program_id, payload, actor, occurred_at)
  where exists (select from ${guard})`;

const withEvents = (sql: string, first: number): string => sql.replace(/\$EV(\d)/g, (_, n: string) => `$${first + Number(n) - 1}`);

// A group's leads, one statement: each lead's writes hang on its own customer's guarded update
// (`u`), so a lead whose customer a concurrent lead moved on first writes nothing and the others
// are written. The group holds each customer once (domain/lead.ts, commitLeads). The partner counters
// are added per partner and program, after the customers (the transactional path's lock order).
// The events carry their lead's customer ($13) to hang on the same guard.
const LEADS_WRITE = `
  with x as (
    select * from unnest($1::int[], $2::bigint[], $3::text[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int[])
      as x(customer_id, lead_at, customer_key, customer_email, lead_id, program_id, click_id, email, session_id, page_url, source, count_for)
  ), u as (
    update customers c set status = 'lead', lead_at = x.lead_at, customer_key = x.customer_key, email = coalesce(x.customer_email, c.email)
    from x where c.id = x.customer_id and c.status = 'click' returning c.id
  ), l as (
    insert into lead_events (id, program_id, customer_id, click_id, customer_key, email, session_id, page_url, provisional, source, is_test, lead_timestamp, settled_at, created_at)
    select x.lead_id, x.program_id, x.customer_id, x.click_id, x.customer_key, x.email, x.session_id, x.page_url, false, x.source, false, x.lead_at, x.lead_at, x.lead_at
    from x join u on u.id = x.customer_id
  ), pp as (
    update partner_programs p set leads = p.leads + k.n
    from (select x.count_for, x.program_id, count(*)::int as n from x join u on u.id = x.customer_id where x.count_for is not null group by x.count_for, x.program_id) k
    where p.partner_id = k.count_for and p.program_id = k.program_id
  ), o as (
    insert into outbox_events (event_id, type, version, workspace_id, program_id, payload, actor, occurred_at)
    select e.event_id, e.type, e.version, e.workspace_id, e.program_id, e.payload, e.actor, e.occurred_at
    from unnest($13::int[], $14::text[], $15::text[], $16::smallint[], $17::int[], $18::int[], $19::text[], $20::text[], $21::bigint[])
      as e(customer_id, event_id, type, version, workspace_id, program_id, payload, actor, occurred_at)
    join u on u.id = e.customer_id
  )
  select coalesce(array_agg(u.id), '{}') as updated from u`;

/** A new settled lead for a customer in `click`, as the domain decided it. */
export interface LeadWrite {
  customerId: number;
  /** The lead_events row (its id taken by the read). */
  row: { id: number; program_id: number; click_id: string; customer_key: string | null; email: string | null; session_id: string | null; page_url: string | null; source: string; lead_timestamp: number };
  /** The customer's new e-mail, or null to keep it. */
  customerEmail: string | null;
  /** Whose lead counter goes up (null: none). */
  countFor: number | null;
  events: EventRow[];
}

/**
 * Applies a group's leads (each customer once) in one statement; answers the customers moved to
 * `lead`. A lead whose customer is not among them had left `click` (a concurrent lead won): nothing
 * of it was written.
 */
export async function writeLeads(conn: PgUnit, leads: LeadWrite[]): Promise<Set<number>> {
  const column = <T>(pick: (w: LeadWrite) => T): T[] => leads.map(pick);
  const events = leads.flatMap((w) => w.events.map((e) => [w.customerId, ...e] as const));
  if (events.some((e) => e[4] === null)) throw new Error('an event written by a tracking statement must name its workspace');
  const values = [
    column((w) => w.customerId), column((w) => w.row.lead_timestamp), column((w) => w.row.customer_key), column((w) => w.customerEmail),
    column((w) => w.row.id), column((w) => w.row.program_id), column((w) => w.row.click_id), column((w) => w.row.email),
    column((w) => w.row.session_id), column((w) => w.row.page_url), column((w) => w.row.source), column((w) => w.countFor),
    ...Array.from({ length: 9 }, (_, c) => events.map((e) => e[c])),
  ];
  const result = await conn.query({ name: 'reftrack_lead_write', text: LEADS_WRITE, values });
  const updated = (result.rows[0] as { updated: number[] }).updated;
  return new Set(updated.map(Number));
}

// The sale's read: the customer, the key program's terms, the partner's enrolment in it and the
// partner's e-mail (the self-referral check), and the ids of the sale and its commission, taken only
// when the customer is in the key's program.
const SALE_READ = `
  select c.*, pr.commission_type, pr.commission_rate, pr.attribution_window_days, pr.commission_hold_days, pp.id as enrollment_id, pa.email as partner_email,
    case when c.program_id = $3::int then nextval('sale_events_id_seq')::int end as next_sale_id,
    case when c.program_id = $3::int and c.partner_id is not null then nextval('commissions_id_seq')::int end as next_commission_id
  from (select 1) one left join lateral (${CUSTOMER}) c on true
  left join programs pr on pr.id = $3::int
  left join partner_programs pp on pp.program_id = $3::int and pp.partner_id = c.partner_id
  left join partners pa on pa.id = c.partner_id`;

export interface SaleRead {
  customer: CustomerRecord | undefined;
  program: { commission_type: unknown; commission_rate: unknown; attribution_window_days: unknown; commission_hold_days: unknown; enrollment_id: unknown };
  emails: { partner_email: string | null; customer_email: string | null };
  saleId: number | null;
  commissionId: number | null;
}

export async function readForSale(conn: PgUnit, ids: { clickId?: string; customerKey?: string }, programId: number): Promise<SaleRead> {
  const row = await run(conn, 'reftrack_sale_read', SALE_READ, lookupKeys(ids, programId));
  return {
    customer: row.id == null ? undefined : toRecord(row, false),
    program: row as SaleRead['program'],
    emails: { partner_email: (row.partner_email as string | null) ?? null, customer_email: (row.email as string | null) ?? null },
    saleId: row.next_sale_id == null ? null : Number(row.next_sale_id),
    commissionId: row.next_commission_id == null ? null : Number(row.next_commission_id),
  };
}

// `g` converts the customer only if still unconverted, when the decision rested on that; then
// every write hangs on `ok`, so a sale decided on a stale read writes nothing and is decided again.
// A duplicate transaction id fails the sale insert, and with it the whole statement.
const SALE_WRITE = withEvents(
  `with g as (
    update customers set converted_at = $2::bigint where id = $1::int and converted_at is null and $3::boolean returning id
  ), ok as (
    select 1 where not $3::boolean or exists (select from g)
  ), s as (
    insert into sale_events (id, program_id, customer_id, click_id, processor_event_id, amount_cents, currency, sale_type, payment_status, is_recurring, subscription_id, provider, provider_payment_id, livemode, is_test, sale_date, created_at, commission_reason)
    select $4::int, $5::int, $6::int, $7::text, $8::text, $9::bigint, $10::text, $11::text, $12::text, $13::boolean, $14::text, $15::text, $16::text, $17::boolean, $18::boolean, $19::bigint, $20::bigint, $21::text from ok
    returning id
  ), c as (
    insert into commissions (id, sale_id, program_id, partner_id, customer_id, amount_cents, currency, status, hold_until, review_reasons, created_at, updated_at)
    select $22::int, s.id, $5::int, $23::int, $6::int, $24::bigint, $10::text, $25::text, $26::bigint, $27::text, $20::bigint, $20::bigint from s where $22::int is not null
    returning id
  ), f as (
    insert into platform_fees (commission_id, sale_id, program_id, amount_cents, currency, rate_bps, status, created_at)
    select c.id, $4::int, $5::int, $28::bigint, $10::text, $29::int, $30::text, $20::bigint from c
  ), m as (
    update partner_programs set sales = sales + 1, revenue_cents = revenue_cents + $9::bigint
    where $31::boolean and partner_id = $23::int and program_id = $5::int and revenue_cents <= $32::bigint - $9::bigint and exists (select from s)
    returning 1
  ), o as (${OUTBOX_INSERT('s')})
  select (select count(*) from s)::int as stored, (select count(*) from m)::int as counted`,
  33,
);

/** A sale as the domain decided it. */
export interface SaleWrite {
  /** Set when the decision read the customer unconverted: the customer is converted, and only if still so. */
  convertCustomer: number | null;
  now: number;
  sale: { id: number; program_id: number; customer_id: number | null; click_id: string | null; processor_event_id: string; amount_cents: number; currency: string; sale_type: string | null; payment_status: string; is_recurring: boolean; subscription_id: string | null; provider: string | null; provider_payment_id: string | null; livemode: boolean | null; is_test: boolean; sale_date: number; created_at: number; commission_reason: string | null };
  /** The customer's partner: the commission's, and whose sales and revenue go up. */
  partnerId: number | null;
  commission: { id: number; amount_cents: number; status: string; hold_until: number | null; review_reasons: string | null } | null;
  fee: { amount_cents: number; rate_bps: number; status: string } | null;
  /** Whether the partner's sales and revenue go up (best effort: the write is retried without them if it fails). */
  countMetrics: boolean;
  events: EventRow[];
}

export type SaleWritten = 'stale' | { metricsCounted: boolean };

/** Applies a sale: 'stale' when the customer was converted since the read (nothing written). */
export async function writeSale(conn: PgUnit, w: SaleWrite): Promise<SaleWritten> {
  const s = w.sale;
  const c = w.commission;
  const values = [
    w.convertCustomer, w.now, w.convertCustomer !== null,
    s.id, s.program_id, s.customer_id, s.click_id, s.processor_event_id, s.amount_cents, s.currency, s.sale_type, s.payment_status, s.is_recurring, s.subscription_id, s.provider, s.provider_payment_id, s.livemode, s.is_test, s.sale_date, s.created_at, s.commission_reason,
    c?.id ?? null, w.partnerId, c?.amount_cents ?? null, c?.status ?? null, c?.hold_until ?? null, c?.review_reasons ?? null,
    w.fee?.amount_cents ?? null, w.fee?.rate_bps ?? null, w.fee?.status ?? null,
    w.countMetrics, Number.MAX_SAFE_INTEGER,
    ...eventArrays(w.events),
  ];
  const row = await run(conn, 'reftrack_sale_write', SALE_WRITE, values);
  return Number(row.stored) === 0 ? 'stale' : { metricsCounted: Number(row.counted) === 1 };
}
