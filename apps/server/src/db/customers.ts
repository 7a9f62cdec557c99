/** Customer lookups shared by the lead and sale routes. */
import type { Knex } from 'knex';
import { bool } from './knex.js';
import type { CustomerStatus } from '@reftrack/contract';

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
}

const COLUMNS = ['id', 'click_id', 'program_id', 'partner_id', 'customer_key', 'status', 'click_at', 'lead_at', 'converted_at', 'is_test'];

/** Real flows see only real customers; synthetic chains (`test`) see only their test-flagged ones. */
function toRecord(row: Record<string, unknown> | undefined, test: boolean): CustomerRecord | undefined {
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
  };
}

export async function customerByClickId(db: Knex, clickId: string, test = false): Promise<CustomerRecord | undefined> {
  if (clickId.length > 64) return undefined;
  return toRecord(await db('customers').where({ click_id: clickId }).first(COLUMNS), test);
}

/**
 * A customer key is the advertiser's user id, so it is only unique within a program: prefer the
 * given program, else report a match elsewhere (the caller decides what that means).
 */
export async function customerByKey(db: Knex, customerKey: string, programId?: number, test = false): Promise<CustomerRecord | undefined> {
  if (customerKey.length > 255) return undefined;
  if (programId !== undefined) {
    const own = toRecord(await db('customers').where({ customer_key: customerKey, program_id: programId, is_test: test }).orderBy('id', 'asc').first(COLUMNS), test);
    if (own) return own;
  }
  return toRecord(await db('customers').where({ customer_key: customerKey, is_test: test }).orderBy('id', 'desc').first(COLUMNS), test);
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
