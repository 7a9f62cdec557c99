/**
 * Domain events: what happened, written by the server's domain core to its outbox in the same
 * transaction as the change itself (docs/architecture.md, "The outbox"). Each has a stable id
 * (`evt_…`), a type, a version and a payload typed here. The same envelope is what outbound
 * webhooks deliver (`docs/webhooks.md`), so a payload carries its objects as the dashboard API
 * shows them — and never a secret, a key or a customer's e-mail address.
 *
 * A version changes only when a payload changes incompatibly; fields are only ever added within
 * one version.
 */
import type { CommissionStatus, Currency, RefundReason } from './limits.js';
import type { PayoutObject, PayoutStatus } from './commissions.js';
import type { DashboardLink } from './dashboard.js';

/** A lead (4.2, 3.1) as events show it. */
export interface LeadObject {
  id: number;
  program_id: number;
  click_id: string | null;
  customer_key: string | null;
  partner_id: number | null;
  /** True while a browser lead under `server_required` waits for its server-side settlement. */
  provisional: boolean;
  /** `server` (program key), `browser`, or `processor` (a payment settled it). */
  source: string;
  created_at: string;
  settled_at: string | null;
}

/** A real sale (4.3) as events show it. */
export interface SaleObject {
  id: number;
  program_id: number;
  transaction_id: string;
  amount_cents: number;
  currency: Currency;
  click_id: string | null;
  customer_key: string | null;
  partner_id: number | null;
  is_recurring: boolean;
  sale_type: string | null;
  subscription_id: string | null;
  provider: string | null;
  occurred_at: string;
  created_at: string;
}

/** A commission (design: `pending` → `approved` → `paid`, or `reversed`). */
export interface CommissionObject {
  id: number;
  sale_id: number;
  program_id: number;
  partner_id: number;
  amount_cents: number;
  currency: Currency;
  status: CommissionStatus;
  /** Additive (docs/commissions.md): when the hold ends, why it was declined, which payout paid it. */
  hold_until: string | null;
  status_reason: string | null;
  payout_id: number | null;
  created_at: string;
  updated_at: string;
}

/** A refund or chargeback (4.4, 6.1) of a sale. */
export interface RefundObject {
  id: number;
  sale_id: number;
  transaction_id: string;
  reason: RefundReason;
  amount_cents: number;
  currency: Currency;
  created_at: string;
}

/** A partner as events show it: no e-mail address. */
export interface PartnerObject {
  id: number;
  name: string;
  code: string;
}

/** The payload of each event type, by type. */
/**
 * The clicks of one click batch with the same link, UTC hour and dimensions (`clicks.recorded`
 * version 2). `dims` holds the click's value of each of STATS_DIMENSIONS in that order ('' where
 * unknown), null for bot clicks (counted on the link and program rows only).
 */
export interface ClickRollup {
  link_id: number;
  partner_id: number;
  /** The hour's start, ISO 8601 UTC. */
  hour: string;
  dims: string[] | null;
  clicks: number;
  unique_clicks: number;
  bot_clicks: number;
}

export interface EventPayloads {
  'lead.created': { lead: LeadObject };
  'lead.settled': { lead: LeadObject };
  'sale.created': { sale: SaleObject };
  'sale.refunded': { sale: SaleObject; refund: RefundObject; commission: CommissionObject | null };
  'commission.created': { commission: CommissionObject };
  'commission.updated': { commission: CommissionObject; previous_status: CommissionStatus };
  'payout.created': { payout: PayoutObject };
  'payout.updated': { payout: PayoutObject; previous_status: PayoutStatus };
  'partner.enrolled': { partner: PartnerObject; program_id: number };
  'link.created': { link: DashboardLink };
  'link.updated': { link: DashboardLink; changed: string[] };
  'program_key.regenerated': { program_id: number; api_token_masked: string | null };
  /**
   * One per click batch and program: what the batch added (clicks themselves are not events).
   * Version 2 adds `rollups`, the batch's clicks summed per link, UTC hour and dimensions, which the
   * stats consumer adds to the rollups (docs/analytics.md "Rollups"); bot clicks are counted there
   * only, so a batch of bots alone writes an event with `clicks` 0 and no `links`.
   */
  'clicks.recorded': { program_id: number; clicks: number; links: Array<{ link_id: number; partner_id: number; clicks: number }>; first_at: string; last_at: string; rollups: ClickRollup[] };
  // Actions on the workspace's set-up, for the audit log (not offered to webhooks).
  'program.created': { program_id: number; name: string };
  'program.updated': { program_id: number; changed: string[] };
  'program_key.rotation_marked': { program_id: number; rotate_by: string };
  'payments.connected': { program_id: number; provider: 'stripe'; account_id: string | null };
  'payments.disconnected': { program_id: number; provider: 'stripe' };
  'agent_key.created': { agent_key_id: number; name: string | null; scopes: string[] };
  'agent_key.revoked': { agent_key_id: number; name: string | null };
  'cli_token.revoked': { cli_token_id: number; account_id: number };
  'account.suspended': { account_id: number; email: string };
  'account.restored': { account_id: number; email: string };
  // Webhook endpoints (docs/webhooks.md): the audit log's, and the owner's notice when Reftrack disables one.
  'webhook_endpoint.created': { endpoint_id: number; url: string; event_types: string[]; program_id: number | null; partner_id: number | null };
  'webhook_endpoint.updated': { endpoint_id: number; url: string; changed: string[]; enabled: boolean };
  'webhook_endpoint.deleted': { endpoint_id: number; url: string };
  'webhook_endpoint.secret_rotated': { endpoint_id: number; url: string; previous_secret_expires_at: string };
  'webhook_endpoint.disabled': { endpoint_id: number; url: string; failing_since: string };
  // The partner portal (docs/partners.md): an owner's invitation, and mail waiting to be sent (never its body).
  'partner.invited': { partner_id: number; invitation_id: number; email: string };
  'mail.queued': { mail_id: number; kind: string };
  // Applications and link requests (docs/partners.md): the owner's decisions and the program's portal settings, for the audit log.
  'partner_application.decided': { application_id: number; program_id: number; email: string; status: 'approved' | 'declined'; partner_id: number | null; reason: string | null };
  'link_request.decided': { link_request_id: number; partner_id: number; program_id: number; status: 'approved' | 'declined'; link_id: number | null; reason: string | null };
  'portal_settings.updated': { program_id: number; applications_open: boolean; link_requests_open: boolean };
}

export type DomainEventType = keyof EventPayloads;

/** The version of each type's payload. */
export const DOMAIN_EVENT_VERSIONS: { readonly [T in DomainEventType]: number } = {
  'lead.created': 1,
  'lead.settled': 1,
  'sale.created': 1,
  'sale.refunded': 1,
  'commission.created': 1,
  'commission.updated': 1,
  'payout.created': 1,
  'payout.updated': 1,
  'partner.enrolled': 1,
  'link.created': 1,
  'link.updated': 1,
  'program_key.regenerated': 1,
  'clicks.recorded': 2,
  'program.created': 1,
  'program.updated': 1,
  'program_key.rotation_marked': 1,
  'payments.connected': 1,
  'payments.disconnected': 1,
  'agent_key.created': 1,
  'agent_key.revoked': 1,
  'cli_token.revoked': 1,
  'account.suspended': 1,
  'account.restored': 1,
  'webhook_endpoint.created': 1,
  'webhook_endpoint.updated': 1,
  'webhook_endpoint.deleted': 1,
  'webhook_endpoint.secret_rotated': 1,
  'webhook_endpoint.disabled': 1,
  'partner.invited': 1,
  'mail.queued': 1,
  'partner_application.decided': 1,
  'link_request.decided': 1,
  'portal_settings.updated': 1,
};

export const DOMAIN_EVENT_TYPES = Object.keys(DOMAIN_EVENT_VERSIONS) as DomainEventType[];

/**
 * One event as stored and delivered. `data` is the payload; `program_id` and `workspace_id` say
 * whose it is (null for an account-level action such as a suspension).
 */
export interface DomainEvent<T extends DomainEventType = DomainEventType> {
  id: string;
  type: T;
  version: number;
  occurred_at: string;
  workspace_id: number | null;
  program_id: number | null;
  data: EventPayloads[T];
}

/** Who did it, for the audit log (never part of a webhook payload). */
export interface EventActor {
  type: 'account' | 'agent_key' | 'operator' | 'system';
  /** Account id or agent-key id; null for the operator and the system. */
  id: number | null;
  /** E-mail, key name, or the operator's login. */
  label: string | null;
  /** The client address of the request, when there was one. */
  ip: string | null;
}

/** GET /api/dashboard/workspaces/:id/audit-log: one entry. */
export interface AuditEntry {
  id: number;
  event_id: string;
  action: DomainEventType;
  program_id: number | null;
  actor: EventActor;
  summary: string;
  occurred_at: string;
}

/** GET /api/dashboard/workspaces/:id/audit-log: a page of entries, newest first. */
export interface AuditLogResponse {
  success: true;
  data: AuditEntry[];
  meta: { pagination: { page: number; pageSize: number; pageCount: number; total: number } };
}

/**
 * Who did it, in words: the `{actor}` of an audit sentence, and what the dashboard's audit log
 * shows as "who" (the same words, so the column and the sentence agree).
 */
export function auditActorName(actor: EventActor): string {
  if (actor.type === 'operator') return actor.label ? `The operator (${actor.label})` : 'The operator';
  if (actor.type === 'agent_key') return `Agent key ${actor.id}${actor.label ? ` (${actor.label})` : ''}`;
  if (actor.type === 'system') return 'Reftrack';
  return actor.label ?? `Account ${actor.id}`;
}

/**
 * The audit log's sentence for each audited action; `{name}` and `{object.name}` are filled from
 * the event's payload, `{actor}` with who did it.
 */
export const AUDIT_SUMMARIES: Partial<Record<DomainEventType, string>> = {
  'program.created': '{actor} created program {program_id} ({name})',
  'program.updated': '{actor} changed {changed} of program {program_id}',
  'program_key.regenerated': '{actor} generated a new key for program {program_id} (the previous key stopped working)',
  'program_key.rotation_marked': '{actor} marked the key of program {program_id} for rotation by {rotate_by}',
  'payments.connected': '{actor} connected Stripe account {account_id} to program {program_id} (signing secret set)',
  'payments.disconnected': '{actor} disconnected the payment processor of program {program_id}',
  'commission.updated': '{actor} moved commission {commission.id} from {previous_status} to {commission.status}',
  'payout.created': '{actor} created payout {payout.reference} of {payout.amount_cents} {payout.currency} minor units to partner {payout.partner.code}',
  'payout.updated': '{actor} marked payout {payout.reference} {payout.status} (was {previous_status})',
  'partner.enrolled': '{actor} enrolled partner {partner.code} in program {program_id}',
  'link.created': '{actor} created referral link {link.short_link} in program {link.program_id}',
  'link.updated': '{actor} changed {changed} of referral link {link.short_link} (active: {link.active})',
  'agent_key.created': '{actor} created agent key {agent_key_id} ({name}) with scopes {scopes}',
  'agent_key.revoked': '{actor} revoked agent key {agent_key_id} ({name})',
  'cli_token.revoked': '{actor} revoked CLI token {cli_token_id}',
  'account.suspended': '{actor} suspended the account {email}',
  'account.restored': '{actor} restored the account {email}',
  'webhook_endpoint.created': '{actor} created webhook endpoint {endpoint_id} ({url}) for {event_types}',
  'webhook_endpoint.updated': '{actor} changed {changed} of webhook endpoint {endpoint_id} ({url}; enabled: {enabled})',
  'webhook_endpoint.deleted': '{actor} deleted webhook endpoint {endpoint_id} ({url})',
  'webhook_endpoint.secret_rotated': '{actor} rotated the signing secret of webhook endpoint {endpoint_id} ({url}); the previous secret signs until {previous_secret_expires_at}',
  'partner.invited': '{actor} invited {email} to the partner portal as partner {partner_id}',
  'partner_application.decided': '{actor} {status} the application of {email} to program {program_id} (partner {partner_id})',
  'link_request.decided': '{actor} {status} link request {link_request_id} of partner {partner_id} in program {program_id} (link {link_id})',
  'portal_settings.updated': '{actor} set program {program_id} open for applications: {applications_open}, for link requests: {link_requests_open}',
  'webhook_endpoint.disabled': '{actor} disabled webhook endpoint {endpoint_id} ({url}): every delivery failed since {failing_since}',
};
