/** Customer lookups shared by the lead and sale routes. */
import type { Knex } from 'knex';
import { bool } from './knex.js';
import { firstRow } from './statement.js';
import type { CustomerStatus, LeadAuth } from '@reftrack/contract';

export interface CustomerRecord {
  id: number;
  clickId: string;
  programId: number;
  partnerId: number | null;
  customerKey: string | null;
  status: CustomerStatus;
  clickAt: number;
  leadAt: number | null;
  convertedAt: number | null;
  /** The program's workspace, for the events the lead and sale write. */
  workspaceId: number;
  /** The program's lead_auth, read with the customer (the lead call needs both). */
  leadAuth: LeadAuth;
  /** The customer's provisional (unsettled) lead, if a browser lead under server_required left one. */
  provisionalLeadId: number | null;
}

/**
 * One statement reads the customer, its program's lead_auth and its provisional lead: every lead
 * and sale starts with it, so its texts are fixed (db/statement.ts), one per way of finding the
 * customer.
 */
const CUSTOMER_SELECT = `select c.id, c.click_id, c.program_id, c.partner_id, c.customer_key, c.status, c.click_at, c.lead_at, c.converted_at, c.is_test, p.lead_auth, p.workspace_id,
  (select le.id from lead_events le where le.customer_id = c.id and le.provisional = ? and le.is_test = c.is_test order by le.id + 0 limit 1) as provisional_lead_id
  from customers c join programs p on p.id = c.program_id`;
const BY_CLICK_ID = `${CUSTOMER_SELECT} where c.click_id = ? limit 1`;
// Ordered by `c.id + 0`, not `c.id`: on PostgreSQL these are prepared statements, and a generic
// plan (made without the key) could walk the primary key in id order testing every customer's
// key — all of them when none matches: 60 ms a lead once 570,000 clicks had made customers and the
// table had no statistics yet (docs/performance.md, "Lookups by customer key"). No index gives
// `id + 0`'s order, so the plan finds the few customers with the key through its index and sorts
// them. test/statement-plans.test.ts plans them generically on such a table. The provisional lead
// of CUSTOMER_SELECT is ordered the same way, so that a customer's few leads are found through
// lead_events' customer index rather than by walking every lead.
/** The oldest customer with the key in the program. */
const BY_KEY_IN_PROGRAM = `${CUSTOMER_SELECT} where c.customer_key = ? and c.program_id = ? and c.is_test = ? order by c.id + 0 asc limit 1`;
/** The newest customer with the key anywhere. */
const BY_KEY = `${CUSTOMER_SELECT} where c.customer_key = ? and c.is_test = ? order by c.id + 0 desc limit 1`;

/** Real flows see only real customers; synthetic chains (`test`) see only their test-flagged ones. */
export function toRecord(row: Record<string, unknown> | undefined, test: boolean): CustomerRecord | undefined {
  if (!row || bool(row.is_test) !== test) return undefined;
  return {
    id: row.id as number,
    clickId: row.click_id as string,
    programId: row.program_id as number,
    partnerId: (row.partner_id as number | null) ?? null,
    customerKey: (row.customer_key as string | null) ?? null,
    status: row.status as CustomerStatus,
    clickAt: Number(row.click_at),
    leadAt: row.lead_at == null ? null : Number(row.lead_at),
    convertedAt: row.converted_at == null ? null : Number(row.converted_at),
    workspaceId: Number(row.workspace_id),
    leadAuth: row.lead_auth as LeadAuth,
    provisionalLeadId: row.provisional_lead_id == null ? null : Number(row.provisional_lead_id),
  };
}

export async function customerByClickId(db: Knex, clickId: string, test = false): Promise<CustomerRecord | undefined> {
  if (clickId.length > 64) return undefined;
  return toRecord(await firstRow(db, BY_CLICK_ID, [true, clickId]), test);
}

/**
 * A customer key is the advertiser's user id, so it is only unique within a program: prefer the
 * given program, else report a match elsewhere (the caller decides what that means).
 */
export async function customerByKey(db: Knex, customerKey: string, programId?: number, test = false): Promise<CustomerRecord | undefined> {
  if (customerKey.length > 255) return undefined;
  if (programId !== undefined) {
    const own = toRecord(await firstRow(db, BY_KEY_IN_PROGRAM, [true, customerKey, programId, test]), test);
    if (own) return own;
  }
  return toRecord(await firstRow(db, BY_KEY, [true, customerKey, test]), test);
}

/** click_id first, then customer_key, as the lead and sale calls document. */
export async function findCustomer(db: Knex, ids: { clickId?: string; customerKey?: string }, programId?: number, test = false): Promise<CustomerRecord | undefined> {
  if (ids.clickId) {
    const byClick = await customerByClickId(db, ids.clickId, test);
    if (byClick) return byClick;
  }
  if (ids.customerKey) return customerByKey(db, ids.customerKey, programId, test);
  return undefined;
}
