/**
 * A program's portal settings (docs/partners.md): whether it takes applications on its public page
 * and link requests from its partners. Both are off until an owner switches them on.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { APPLY_PATH, type EventActor, type ProgramPortalSettings } from '@reftrack/contract';
import { appendEvents } from '../db/outbox.js';
import { bool } from '../db/knex.js';

export interface PortalSettingsRow {
  applicationsOpen: boolean;
  linkRequestsOpen: boolean;
  applySlug: string | null;
}

export async function readPortalSettings(db: Knex, programId: number): Promise<PortalSettingsRow> {
  const row = await db('program_portal_settings').where({ program_id: programId }).first('applications_open', 'link_requests_open', 'apply_slug');
  return { applicationsOpen: bool(row?.applications_open), linkRequestsOpen: bool(row?.link_requests_open), applySlug: row?.apply_slug ?? null };
}

export const settingsView = (publicBaseUrl: string, programId: number, s: PortalSettingsRow): ProgramPortalSettings => ({
  program_id: programId,
  applications_open: s.applicationsOpen,
  link_requests_open: s.linkRequestsOpen,
  apply_url: s.applySlug ? `${publicBaseUrl}${APPLY_PATH}/${s.applySlug}` : null,
});

/**
 * Saves the settings with their audit event. The application page's slug is made the first time the
 * program opens for applications and then kept, so a link already shared works again after a pause.
 */
export async function savePortalSettings(trx: Knex.Transaction, programId: number, next: { applicationsOpen: boolean; linkRequestsOpen: boolean }, actor: EventActor, now: number): Promise<PortalSettingsRow> {
  const current = await readPortalSettings(trx, programId);
  const applySlug = current.applySlug ?? (next.applicationsOpen ? randomBytes(12).toString('base64url') : null);
  const row = { applications_open: next.applicationsOpen, link_requests_open: next.linkRequestsOpen, apply_slug: applySlug, updated_at: now };
  await trx('program_portal_settings').insert({ program_id: programId, ...row }).onConflict('program_id').merge(row);
  if (current.applicationsOpen !== next.applicationsOpen || current.linkRequestsOpen !== next.linkRequestsOpen) {
    await appendEvents(trx, [{ type: 'portal_settings.updated', programId, data: { program_id: programId, applications_open: next.applicationsOpen, link_requests_open: next.linkRequestsOpen }, occurredAt: now, actor }]);
  }
  return { ...next, applySlug };
}
