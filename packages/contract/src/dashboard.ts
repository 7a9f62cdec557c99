/**
 * Response shapes of the dashboard's own routes (`/api/dashboard/*`, docs/dashboard-api.md), built
 * on the spec's types: the server's handlers are typed with them and the web app reads them, so
 * the two cannot drift apart unnoticed.
 */
import type { Role } from './limits.js';
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
  key_rotation: { marked_at: string; rotate_by: string } | null;
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
  revenue_cents: number;
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
  webhook_url: string;
}
