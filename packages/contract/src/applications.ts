/**
 * Applications to a program and partners' link requests (docs/partners.md, "Applications" and
 * "Link requests"): names, limits and shapes shared by the server and the web app.
 */
import type { PortalTerms } from './portal.js';

export const APPLICATION_LIMITS = {
  nameMax: 200,
  websiteMax: 2048,
  promotionMax: 2000,
  /** An owner's reason to decline an application or a link request. */
  reasonMax: 500,
  /** A partner's note on a link request ("where I will use it"). */
  noteMax: 500,
  /** Link requests of one partner record waiting for an answer at once. */
  linkRequestsPendingMax: 3,
  /** Days of the portal's per-link chart (today included, UTC days). */
  dailyDays: 30,
} as const;

/**
 * The public application page is `/apply/<slug>`: the slug is random (16 base64url characters,
 * 96 bits), made when an owner first opens the program for applications, so program ids stay
 * private and a closed program cannot be found by counting; the owner shares the link.
 */
export const APPLY_PATH = '/apply';
export const APPLY_SLUG_PATTERN = /^[A-Za-z0-9_-]{16}$/;

/** What the application form answers, whatever happened (a duplicate, an existing partner). */
export const APPLICATION_RECEIVED_MESSAGE = 'Thank you. The program will review your application; if it is approved, an invitation to the partner portal arrives at your e-mail address.';

/** GET/PUT /api/dashboard/programs/:id/portal-settings */
export interface ProgramPortalSettings {
  program_id: number;
  applications_open: boolean;
  link_requests_open: boolean;
  /** The public application page, once the program was opened for applications (also while closed again). */
  apply_url: string | null;
}

/** GET /api/apply/:slug — a program's terms as the public application page shows them (the portal's terms, less ids and settings). */
export type PublicProgramTerms = Omit<PortalTerms, 'program_id' | 'link_requests_open'>;

export type DecisionStatus = 'pending' | 'approved' | 'declined';
export const DECISION_STATUSES: readonly DecisionStatus[] = ['pending', 'approved', 'declined'];

/** GET /api/dashboard/programs/:id/applications — one application. */
export interface DashboardApplication {
  id: number;
  program_id: number;
  name: string;
  email: string;
  website: string | null;
  promotion: string;
  status: DecisionStatus;
  decline_reason: string | null;
  /** The partner record an approval created or reused. */
  partner_id: number | null;
  /** A partner of this workspace has this e-mail address already (shown to the owner only). */
  existing_partner_id: number | null;
  created_at: string;
  decided_at: string | null;
}

/** A partner's request for another referral link, as the portal and the dashboard show it. */
export interface LinkRequestView {
  id: number;
  partner_id: number;
  partner_code: string;
  partner_name: string;
  program_id: number;
  program_name: string;
  /** The code the partner asked for (null: the owner picks). */
  short_link: string | null;
  note: string | null;
  status: DecisionStatus;
  decline_reason: string | null;
  /** The link an approval created. */
  link_id: number | null;
  created_at: string;
  decided_at: string | null;
}

/** GET /api/portal/partners/:id/links/:linkId/daily — one link's clicks, leads and sales per UTC day. */
export interface PortalLinkDaily {
  link_id: number;
  days: string[];
  clicks: number[];
  leads: number[];
  sales: number[];
}
