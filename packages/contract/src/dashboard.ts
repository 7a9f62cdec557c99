/**
 * Response shapes of the dashboard's own routes (`/api/dashboard/*`, docs/dashboard-api.md), built
 * on the spec's types: the server's handlers are typed with them and the web app reads them, so
 * the two cannot drift apart unnoticed.
 */
import type { AgentScope, Currency, Role } from './limits.js';
import type { Program, ReferralLink } from './types.js';

export interface DashboardAccount {
  id: number;
  email: string;
  name: string | null;
}

export interface DashboardWorkspace {
  id: number;
  name: string;
  role: Role;
}

/** GET /api/dashboard/session; the sign-in (POST) adds `expires_at`. */
export interface DashboardSession {
  account: DashboardAccount;
  workspaces: DashboardWorkspace[];
}

/** A program with what every authenticated reader of it sees besides 2.1's fields. */
export interface ProgramView extends Program {
  advertiser_id: number | null;
  /**
   * When the current key was shown in full (generated and returned), or null: the key made with the
   * program was never shown (5.1), so generating one replaces nothing anybody has deployed.
   */
  api_key_revealed_at: string | null;
  key_rotation: { marked_at: string; rotate_by: string } | null;
  /** Days a new commission stays pending before the approval job approves it (docs/commissions.md). */
  commission_hold_days: number;
  /** The smallest payout of a batch, in major units of each currency. */
  payout_minimum: number;
  created_at: string;
  updated_at: string;
}

/** A program in the dashboard: with the signed-in member's role where the route knows it. */
export interface DashboardProgram extends ProgramView {
  role?: Role;
}

/** POST /api/dashboard/programs/:id/key: the only answer that carries a whole key. */
export interface GeneratedKey {
  program_id: number;
  api_key: string;
  /** As in Program (2.1). */
  api_token_masked: string | null;
  note: string;
}

/** A partner enrolled in a program, with its metrics there. */
export interface DashboardPartner {
  id: number;
  name: string;
  email: string | null;
  code: string;
  clicks: number;
  leads: number;
  sales: number;
  /** The running total kept since the first sale: every currency's minor units added together, refunds not deducted. Read `earnings` instead. */
  revenue_cents: number;
  /** Additive (docs/commissions.md): per currency, net of refunds; never summed across currencies. */
  earnings: PartnerEarnings[];
  last_clicked: string | null;
}

/** A referral link with its partner's code and the affiliate URL on the program's domain. */
export interface DashboardLink extends ReferralLink {
  partner_code: string | null;
  url: string | null;
}

/** /api/dashboard/programs/:id/payments: the processor connection; the secret is never shown. */
export interface PaymentsConnection {
  provider: 'stripe';
  connected: boolean;
  stripe_account_id: string | null;
  webhook_secret_set: boolean;
  /** The shared intake address (kept for earlier clients); prefer `intake_url`. */
  webhook_url: string;
  /**
   * This connection's own intake address (`…/api/v1/webhooks/stripe/whe_…`), the one to give Stripe;
   * null while not connected. Kept when the secret or account changes; a new one after disconnect
   * and connect.
   */
  intake_url: string | null;
}

/**
 * /api/dashboard/cli-tokens: a login token of the signed-in account (`reftrack login`), never the
 * token or its hash. `label` is the User-Agent of the CLI that received it.
 */
export interface DashboardCliToken {
  id: number;
  label: string | null;
  created_at: string;
  last_used_at: string | null;
  expires_at: string;
  revoked_at: string | null;
}

/** /api/dashboard/workspaces/:id/agent-keys: an agent key of the workspace (owners), masked. */
export interface DashboardAgentKey {
  id: number;
  workspace_id: number;
  name: string | null;
  scopes: AgentScope[];
  key_masked: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A partner's results in one currency of one program. */
export interface PartnerEarnings {
  currency: Currency;
  /** Real sales attributed to the partner. */
  sales: number;
  /** Sales net of refunds and chargebacks. */
  revenue_cents: number;
  /** Commissions owed or paid (pending, approved, paid), net of claw-backs; declined and reversed ones are not. */
  commissions_cents: number;
}
