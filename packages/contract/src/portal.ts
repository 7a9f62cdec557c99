/** The partner portal (docs/partners.md): names, limits and shapes shared by the server and the web app. */
import type { CommissionStatus } from './limits.js';

/** The portal's session cookie: separate from the dashboard's, so neither session opens the other's API. */
export const PORTAL_SESSION_COOKIE = 'reftrack_portal';
export const PORTAL_LIMITS = {
  sessionDays: 30,
  /** A sign-in link works once, for this long. */
  signInLinkMinutes: 15,
  invitationDays: 7,
  /** Sign-in e-mails per address and per client address in `rateWindowMinutes`. */
  signInPerEmail: 5,
  signInPerIp: 20,
  rateWindowMinutes: 15,
  /** Delivery attempts of one e-mail before it is marked failed. */
  mailAttempts: 8,
} as const;

/** Paths of the web app's portal section and the links mailed to partners. */
export const PORTAL_PATHS = {
  home: '/portal',
  signIn: '/portal/sign-in',
  /** ?token=… from an e-mail: the page posts it to the API (a GET never spends a token: mail scanners follow links). */
  verify: '/portal/verify',
  invitation: '/portal/invitation',
  devMailbox: '/dev/mailbox',
} as const;

export interface PortalPartnerRecord {
  partner_id: number;
  partner_name: string;
  partner_code: string;
  workspace_name: string;
  programs: Array<{ program_id: number; program_name: string }>;
}

export interface PortalMe {
  email: string;
  partners: PortalPartnerRecord[];
}

export interface PortalTerms {
  program_id: number;
  program_name: string;
  domain: string | null;
  commission_type: string;
  commission_rate: number;
  cookie_window_days: number;
  hold_days: number;
  payout_minimum: number;
  /** The partner may ask for more links in this program (docs/partners.md, "Link requests"). */
  link_requests_open: boolean;
}

export interface PortalLink {
  id: number;
  program_id: number;
  short_link: string;
  url: string;
  active: boolean;
  clicks: number;
  leads: number;
  sales: number;
}

export interface PortalCommissionTotal {
  status: CommissionStatus;
  currency: string;
  count: number;
  amount_cents: number;
}

export interface PortalPayout {
  id: number;
  program_id: number;
  reference: string;
  currency: string;
  amount_cents: number;
  method: string;
  status: string;
  created_at: string;
  /** This payout's row of the PayPal or Wise payout file, with the partner's current payout details (null: manual, or no matching details). */
  csv_line: string | null;
}

export interface PortalOverview {
  partner: { id: number; name: string; code: string };
  terms: PortalTerms[];
  links: PortalLink[];
  commissions: PortalCommissionTotal[];
  payouts: PortalPayout[];
}
