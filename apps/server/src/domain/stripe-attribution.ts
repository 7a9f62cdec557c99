/**
 * The attribution order of spec 6.1 rule 3, within the program whose signing secret verified the
 * event: (1) `reftrack_click_id` from the metadata; (2) the payer's e-mail matched to a lead
 * (customers.email, saved by leads that sent `email`); (3) the processor customer id (`cus_…`)
 * remembered from an earlier attributed session; (4) `reftrack_customer_key` alone.
 *
 * Each step only accepts a real (not test-flagged) customer of that program; a click id or key of
 * another program does not match, and the next step is tried.
 */
import type { Knex } from 'knex';
import { customerByClickId, customerByKey, type CustomerRecord } from '../db/customers.js';

export type AttributedBy = 'click_id' | 'email' | 'processor_customer_id' | 'customer_key';

export interface StripeIdentity {
  clickId?: string;
  email?: string;
  /** `cus_…` */
  processorCustomerId?: string;
  customerKey?: string;
}

export interface ResolvedCustomer {
  customer: CustomerRecord;
  by: AttributedBy;
}

async function byColumn(db: Knex, programId: number, column: 'email' | 'processor_customer_id', value: string): Promise<CustomerRecord | undefined> {
  if (value.length > 320) return undefined;
  // The newest matching customer: the most recent signup with that address or processor customer.
  const row = await db('customers').where({ program_id: programId, [column]: value, is_test: false }).orderBy('id', 'desc').first('click_id');
  return row ? customerByClickId(db, String(row.click_id)) : undefined;
}

export async function resolveStripeCustomer(db: Knex, programId: number, identity: StripeIdentity): Promise<ResolvedCustomer | undefined> {
  const mine = (c: CustomerRecord | undefined): c is CustomerRecord => c !== undefined && c.programId === programId;
  if (identity.clickId) {
    const c = await customerByClickId(db, identity.clickId);
    if (mine(c)) return { customer: c, by: 'click_id' };
  }
  if (identity.email) {
    const c = await byColumn(db, programId, 'email', identity.email);
    if (mine(c)) return { customer: c, by: 'email' };
  }
  if (identity.processorCustomerId) {
    const c = await byColumn(db, programId, 'processor_customer_id', identity.processorCustomerId);
    if (mine(c)) return { customer: c, by: 'processor_customer_id' };
  }
  if (identity.customerKey) {
    const c = await customerByKey(db, identity.customerKey, programId);
    if (mine(c)) return { customer: c, by: 'customer_key' };
  }
  return undefined;
}

/**
 * Step 3's memory: the first processor customer id seen on an attributed session is kept on the
 * customer (never overwritten), so later payments without metadata still find it.
 */
export async function rememberProcessorCustomer(db: Knex, customerId: number, processorCustomerId: string | undefined): Promise<boolean> {
  if (!processorCustomerId || processorCustomerId.length > 255) return false;
  const updated = await db('customers').where({ id: customerId }).whereNull('processor_customer_id').update({ processor_customer_id: processorCustomerId });
  return updated > 0;
}
