/**
 * The PostgreSQL statements of the HTTP lead and sale routes, for a group commit: one read for
 * everything the domain decides on (and the ids its writes will use) for every lead or sale of the
 * group, then one statement that applies the decisions (docs/architecture.md, "Leads and sales on
 * PostgreSQL"). Each is a single statement in autocommit, so each is one transaction of its own:
 * the write commits whole or not at all. Within it each lead or sale hangs on its own guard, so
 * one whose customer moved on since the read writes nothing while the rest are written.
 *
 * The rules stay in domain/lead.ts and domain/sale.ts; this module only reads and writes. The
 * statements are sent as named prepared statements on one pooled connection per group, with one
 * array per column, so PostgreSQL parses each text once per connection and the event loop builds
 * no SQL.
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
 * PostgreSQL answered the statement with an error that ended the statement alone: in autocommit
 * it wrote nothing. Not a lost connection, and not an error that ends the session (FATAL: an
 * administrator's termination, a shutdown), which can come after the commit — while a committed
 * transaction waits for a synchronous standby — so after either the outcome is unknown.
 */
export const isRefusedStatement = (err: unknown): boolean => err instanceof pg.DatabaseError && err.severity !== 'FATAL' && err.severity !== 'PANIC';

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

/** The lookup keys findCustomer would try: a key it would not look up (too long, empty) is null. */
function lookupKeys(ids: { clickId?: string; customerKey?: string }, programId: number | undefined): [string | null, string | null, number | null] {
  const clickId = ids.clickId && ids.clickId.length <= 64 ? ids.clickId : null;
  const customerKey = ids.customerKey && ids.customerKey.length <= 255 ? ids.customerKey : null;
  return [clickId, customerKey, programId ?? null];
}

/** A group's read: one array per column of `rows` (one row per request), and one answer row per request, in order. */
async function readGroup(conn: PgUnit, name: string, text: string, rows: unknown[][]): Promise<Record<string, unknown>[]> {
  const columns = rows[0]!.map((_, c) => rows.map((row) => row[c]));
  const result = await conn.query({ name, text, values: columns });
  if (result.rows.length !== rows.length) throw new Error(`${name} answered ${result.rows.length} rows for ${rows.length} requests`);
  return result.rows as Record<string, unknown>[];
}

// The leads of a group commit (domain/lead.ts, commitLeads), one row each in the order given. A lead id
// is taken only when the customer is in the key's program (or there is no key): a refused lead
// leaves no gap in the ids (a lead sent round to the next group takes a new one there).
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
  const rows = await readGroup(conn, 'reftrack_lead_read', LEADS_READ, leads.map((l) => lookupKeys(l.ids, l.programId)));
  return rows.map((row) => ({ customer: row.id == null ? undefined : toRecord(row, false), leadId: row.next_lead_id == null ? null : Number(row.next_lead_id) }));
}

// A group's partner counters (`k`: partner_id, program_id) are locked in one order, by id, before
// they are updated (the update waits on the count, a one-time filter), whatever order the update
// would meet them in: two groups that share partners (the leads' and the sales', or two processes')
// then cannot deadlock on them. The customers are locked in the order of the group, but two groups
// sharing two customers at once is rare, and a deadlock costs only a second pass (domain/lead.ts).
const LOCK_COUNTERS = `
    select p.id from partner_programs p join k on p.partner_id = k.partner_id and p.program_id = k.program_id order by p.id for update of p`;

// A group's leads, one statement: each lead's writes hang on its own customer's guarded update
// (`u`), so a lead whose customer a concurrent lead moved on first writes nothing and the others
// are written. The group holds each customer once (domain/lead.ts, commitLeads). The partner counters
// are added per partner and program, after the customers (the transactional path's lock order).
// The events carry their lead's customer ($13) to hang on the same guard, and their workspace
// (the read found the customer's program) rather than a subquery per row: that made PostgreSQL's
// generic plan (it assumes 10 rows of an array parameter) cost more than one made for the values,
// so it planned the statement anew on every execution (docs/performance.md, "Plans made once").
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
  ), k as (
    select x.count_for as partner_id, x.program_id, count(*)::int as n from x join u on u.id = x.customer_id where x.count_for is not null group by x.count_for, x.program_id
  ), lk as (${LOCK_COUNTERS})
  , pp as (
    update partner_programs p set leads = p.leads + k.n
    from k where p.partner_id = k.partner_id and p.program_id = k.program_id and (select count(*) from lk) >= 0
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

// The sales of a group commit (domain/sale.ts, commitSales), one row each in the order given: the
// customer, the key program's terms, the partner's enrolment in it and the partner's e-mail (the
// self-referral check), and the ids of the sale and its commission, taken only when the customer
// is in the key's program; and the sale already stored under its transaction id, if any, so that a
// resent sale is refused alone instead of failing the group's write (which would send every sale
// of the group to the transactional path).
const SALES_READ = `
  select x.n, c.*, pr.commission_type, pr.commission_rate, pr.attribution_window_days, pr.commission_hold_days, pp.id as enrollment_id, pa.email as partner_email,
    case when c.program_id = x.program_id then nextval('sale_events_id_seq')::int end as next_sale_id,
    case when c.program_id = x.program_id and c.partner_id is not null then nextval('commissions_id_seq')::int end as next_commission_id,
    (select se.id from sale_events se where se.processor_event_id = x.transaction_id) as stored_sale_id
  from unnest($1::text[], $2::text[], $3::int[], $4::text[]) with ordinality as x(click_id, customer_key, program_id, transaction_id, n)
  left join lateral (${customerBy('x.click_id', 'x.customer_key', 'x.program_id')}) c on true
  left join programs pr on pr.id = x.program_id
  left join partner_programs pp on pp.program_id = x.program_id and pp.partner_id = c.partner_id
  left join partners pa on pa.id = c.partner_id
  order by x.n`;

export interface SaleRead {
  /** The sale stored before under this transaction id (null: none when read). */
  storedSaleId: number | null;
  customer: CustomerRecord | undefined;
  program: { commission_type: unknown; commission_rate: unknown; attribution_window_days: unknown; commission_hold_days: unknown; enrollment_id: unknown };
  emails: { partner_email: string | null; customer_email: string | null };
  saleId: number | null;
  commissionId: number | null;
}

/** One read for every sale of a group. */
export async function readForSales(conn: PgUnit, sales: Array<{ ids: { clickId?: string; customerKey?: string }; programId: number; transactionId: string }>): Promise<SaleRead[]> {
  const rows = await readGroup(conn, 'reftrack_sale_read', SALES_READ, sales.map((l) => [...lookupKeys(l.ids, l.programId), l.transactionId]));
  return rows.map((row) => ({
    storedSaleId: row.stored_sale_id == null ? null : Number(row.stored_sale_id),
    customer: row.id == null ? undefined : toRecord(row, false),
    program: row as SaleRead['program'],
    emails: { partner_email: (row.partner_email as string | null) ?? null, customer_email: (row.email as string | null) ?? null },
    saleId: row.next_sale_id == null ? null : Number(row.next_sale_id),
    commissionId: row.next_commission_id == null ? null : Number(row.next_commission_id),
  }));
}

// A group's sales, one statement. `g` converts each customer whose sale's decision rested on it
// being unconverted, only if it still is; a sale hangs on its customer's conversion when it needed
// one (`ok`), so a sale decided on a stale read writes nothing and is decided again. The group holds
// each transaction id once, and a customer it converts once (domain/sale.ts); a transaction id stored
// since the read fails the sale insert and with it the whole statement. The partner counters are added per partner and
// program, and only while the revenue total stays an exact integer ($32).
const SALES_WRITE = `
  with x as (
    select * from unnest($1::int[], $2::bigint[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::text[], $12::boolean[], $13::text[],
      $14::text[], $15::text[], $16::boolean[], $17::boolean[], $18::bigint[], $19::bigint[], $20::text[], $21::int[], $22::int[], $23::bigint[], $24::text[], $25::bigint[], $26::text[],
      $27::bigint[], $28::int[], $29::text[], $30::boolean[])
      as x(convert_customer, now, sale_id, program_id, customer_id, click_id, processor_event_id, amount_cents, currency, sale_type, payment_status, is_recurring, subscription_id,
        provider, provider_payment_id, livemode, is_test, sale_date, created_at, commission_reason, commission_id, partner_id, commission_amount, commission_status, hold_until, review_reasons,
        fee_amount, fee_rate_bps, fee_status, count_metrics)
  ), g as (
    update customers c set converted_at = x.now from x where c.id = x.convert_customer and c.converted_at is null returning c.id
  ), ok as (
    select x.* from x where x.convert_customer is null or x.convert_customer in (select id from g)
  ), s as (
    insert into sale_events (id, program_id, customer_id, click_id, processor_event_id, amount_cents, currency, sale_type, payment_status, is_recurring, subscription_id, provider, provider_payment_id, livemode, is_test, sale_date, created_at, commission_reason)
    select ok.sale_id, ok.program_id, ok.customer_id, ok.click_id, ok.processor_event_id, ok.amount_cents, ok.currency, ok.sale_type, ok.payment_status, ok.is_recurring, ok.subscription_id, ok.provider, ok.provider_payment_id, ok.livemode, ok.is_test, ok.sale_date, ok.created_at, ok.commission_reason
    from ok returning id
  ), c as (
    insert into commissions (id, sale_id, program_id, partner_id, customer_id, amount_cents, currency, status, hold_until, review_reasons, created_at, updated_at)
    select ok.commission_id, s.id, ok.program_id, ok.partner_id, ok.customer_id, ok.commission_amount, ok.currency, ok.commission_status, ok.hold_until, ok.review_reasons, ok.created_at, ok.created_at
    from ok join s on s.id = ok.sale_id where ok.commission_id is not null
    returning id
  ), f as (
    insert into platform_fees (commission_id, sale_id, program_id, amount_cents, currency, rate_bps, status, created_at)
    select c.id, ok.sale_id, ok.program_id, ok.fee_amount, ok.currency, ok.fee_rate_bps, ok.fee_status, ok.created_at from ok join c on c.id = ok.commission_id
  ), k as (
    select ok.partner_id, ok.program_id, count(*)::int as n, sum(ok.amount_cents)::bigint as amount from ok join s on s.id = ok.sale_id where ok.count_metrics group by ok.partner_id, ok.program_id
  ), lk as (${LOCK_COUNTERS})
  , m as (
    update partner_programs p set sales = p.sales + k.n, revenue_cents = p.revenue_cents + k.amount
    from k where p.partner_id = k.partner_id and p.program_id = k.program_id and p.revenue_cents <= $32::bigint - k.amount and (select count(*) from lk) >= 0
    returning p.partner_id, p.program_id
  ), o as (
    insert into outbox_events (event_id, type, version, workspace_id, program_id, payload, actor, occurred_at)
    select e.event_id, e.type, e.version, e.workspace_id, e.program_id, e.payload, e.actor, e.occurred_at
    from unnest($31::int[], $33::text[], $34::text[], $35::smallint[], $36::int[], $37::int[], $38::text[], $39::text[], $40::bigint[])
      as e(sale_id, event_id, type, version, workspace_id, program_id, payload, actor, occurred_at)
    join s on s.id = e.sale_id
  )
  select coalesce((select array_agg(id) from s), '{}') as stored, coalesce((select array_agg(partner_id || ':' || program_id) from m), '{}') as counted`;

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
  /** Whether the partner's sales and revenue go up (best effort). */
  countMetrics: boolean;
  events: EventRow[];
}

export interface SalesWritten {
  /** The sales stored; one not among them was decided on a customer converted since the read (nothing of it written). */
  stored: Set<number>;
  /** `partner:program` of each counter updated (missing: the revenue total would have passed the exact range). */
  counted: Set<string>;
}

/** Applies a group's sales (each customer and transaction id once) in one statement. */
export async function writeSales(conn: PgUnit, sales: SaleWrite[]): Promise<SalesWritten> {
  const column = <T>(pick: (w: SaleWrite) => T): T[] => sales.map(pick);
  const events = sales.flatMap((w) => w.events.map((e) => [w.sale.id, ...e] as const));
  if (events.some((e) => e[4] === null)) throw new Error('an event written by a tracking statement must name its workspace');
  const eventColumns = Array.from({ length: 9 }, (_, c) => events.map((e) => e[c]));
  const values = [
    column((w) => w.convertCustomer), column((w) => w.now),
    column((w) => w.sale.id), column((w) => w.sale.program_id), column((w) => w.sale.customer_id), column((w) => w.sale.click_id), column((w) => w.sale.processor_event_id),
    column((w) => w.sale.amount_cents), column((w) => w.sale.currency), column((w) => w.sale.sale_type), column((w) => w.sale.payment_status), column((w) => w.sale.is_recurring),
    column((w) => w.sale.subscription_id), column((w) => w.sale.provider), column((w) => w.sale.provider_payment_id), column((w) => w.sale.livemode), column((w) => w.sale.is_test),
    column((w) => w.sale.sale_date), column((w) => w.sale.created_at), column((w) => w.sale.commission_reason),
    column((w) => w.commission?.id ?? null), column((w) => w.partnerId), column((w) => w.commission?.amount_cents ?? null), column((w) => w.commission?.status ?? null),
    column((w) => w.commission?.hold_until ?? null), column((w) => w.commission?.review_reasons ?? null),
    column((w) => w.fee?.amount_cents ?? null), column((w) => w.fee?.rate_bps ?? null), column((w) => w.fee?.status ?? null), column((w) => w.countMetrics),
    eventColumns[0], Number.MAX_SAFE_INTEGER, ...eventColumns.slice(1),
  ];
  const result = await conn.query({ name: 'reftrack_sale_write', text: SALES_WRITE, values });
  const row = result.rows[0] as { stored: number[]; counted: string[] };
  return { stored: new Set(row.stored.map(Number)), counted: new Set(row.counted) };
}
