/** Spec 4.5: a program's integration checklist, from what its key and its records show. */
import type { Knex } from 'knex';
import type { ReadinessItem, ReadinessResponse } from '@reftrack/contract';
import { keyState, type KeyContext } from '../auth/program-key.js';

async function seen(db: Knex, table: string, programId: number, isTest: boolean): Promise<boolean> {
  return Boolean(await db(table).where({ program_id: programId, is_test: isTest }).first('id'));
}

export async function computeReadiness(db: Knex, key: KeyContext, now: number): Promise<ReadinessResponse['data']> {
  const programId = key.programId;
  const [click, lead, sale, testClick, testLead, testSale, connection] = await Promise.all([
    seen(db, 'click_events', programId, false),
    seen(db, 'lead_events', programId, false),
    seen(db, 'sale_events', programId, false),
    seen(db, 'click_events', programId, true),
    seen(db, 'lead_events', programId, true),
    seen(db, 'sale_events', programId, true),
    db('processor_connections').where({ program_id: programId }).first('id'),
  ]);
  const state = keyState(key, now);
  const item = (k: ReadinessItem['key'], label: string, done: boolean, nextStep: string): ReadinessItem => ({ key: k, label, done, next_step: done ? null : nextStep });
  const checklist: ReadinessItem[] = [
    item('click_seen', 'A click was tracked', click, 'Add the tracker script to your site and open it through a referral link (?aff=...).'),
    item('lead_seen', 'A lead was tracked', lead, 'Call POST /api/v1/track/lead from your server when a referred visitor signs up (send the click id and your user id).'),
    item('sale_seen', 'A sale was tracked', sale, 'Report the first payment of a referred customer with POST /api/v1/track/sale, or connect Stripe.'),
    item('test_event_seen', 'A test event was sent', testClick || testLead || testSale, 'Run `reftrack test-event chain` or send a test sale ({"additional_data":{"test_mode":true}}).'),
    item('processor_connected', 'Payment processor connected', Boolean(connection), 'Connect Stripe in the dashboard: Program settings → Payments.'),
    item('key_status', 'Program key in good standing', state === 'active', 'This key is marked for rotation: a workspace owner must regenerate it and deploy the new key before the deadline.'),
  ];
  return {
    program_id: programId,
    ready: click && lead && sale && state === 'active',
    key_status: state === 'active' ? 'active' : 'marked',
    rotate_by: key.rotationDeadline === null ? null : new Date(key.rotationDeadline).toISOString(),
    checklist,
  };
}
