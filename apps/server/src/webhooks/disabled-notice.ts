/**
 * Telling a workspace's owners that Reftrack disabled one of their webhook endpoints (docs/webhooks.md,
 * "Disabling"): one e-mail per owner, queued in the transaction that disables the endpoint, so it is
 * sent exactly when the endpoint was disabled, through the mail outbox (retried, never failing the
 * disabling). The dashboard's Webhooks page shows the same notice.
 */
import type { Knex } from 'knex';
import { escapeHtml, queueMail } from '../mail/queue.js';
import type { SecretBox } from '../secrets/secret-box.js';

export interface DisabledEndpoint {
  id: number;
  /** The endpoint's address as the audit log shows it (no credentials in it). */
  url: string;
  workspaceId: number;
  failingSince: number;
}

export async function queueDisabledNotice(trx: Knex.Transaction, box: SecretBox, endpoint: DisabledEndpoint, publicBaseUrl: string, now: number): Promise<number> {
  const owners = (await trx('memberships as m')
    .join('accounts as a', 'a.id', 'm.account_id')
    .where({ 'm.workspace_id': endpoint.workspaceId, 'm.role': 'owner' })
    .orderBy('a.id')
    .pluck('a.email')) as string[];
  const page = `${publicBaseUrl.replace(/\/$/, '')}/webhooks`;
  const since = new Date(endpoint.failingSince).toISOString();
  const text =
    `Reftrack disabled the webhook endpoint ${endpoint.url} (id ${endpoint.id}): every delivery to it failed since ${since}, for 3 days.\n\n` +
    `Deliveries to it have stopped; events from now on are not queued for it. Fix the receiver, then enable the endpoint again on the Webhooks page, where its delivery log shows the last answers:\n${page}\n`;
  const html =
    `<p>Reftrack disabled the webhook endpoint <code>${escapeHtml(endpoint.url)}</code> (id ${endpoint.id}): every delivery to it failed since ${escapeHtml(since)}, for 3 days.</p>` +
    `<p>Deliveries to it have stopped; events from now on are not queued for it. Fix the receiver, then enable the endpoint again on the <a href="${escapeHtml(page)}">Webhooks page</a>, where its delivery log shows the last answers.</p>`;
  for (const to of owners) {
    await queueMail(trx, box, { kind: 'webhook_endpoint_disabled', to, subject: `Webhook endpoint ${endpoint.id} disabled: deliveries failed for 3 days`, text, html }, now, endpoint.workspaceId);
  }
  return owners.length;
}
