/** The partner portal's HTTP client: same-origin JSON with the portal's own session cookie (docs/partners.md). */
import type { LinkRequestView, StatsReport, PayoutDetailsView, PortalLinkDaily, PortalMe, PortalOverview, PublicProgramTerms } from '@reftrack/contract';
import { request } from '../lib/api.js';

type Ok<T> = { success: true; data: T };
const data = <T,>(p: Promise<Ok<T>>): Promise<T> => p.then((r) => r.data);
// quiet401: a 401 here means "not signed in to the portal", never the dashboard's session.
const q = { quiet401: true };

export const portalApi = {
  me: () => data(request<Ok<PortalMe>>('GET', '/api/portal/session', undefined, q)),
  requestLink: (email: string) => data(request<Ok<{ sent: boolean; message: string }>>('POST', '/api/portal/sign-in', { email }, q)),
  verify: (token: string) => data(request<Ok<{ signed_in: boolean }>>('POST', '/api/portal/sign-in/verify', { token }, q)),
  accept: (token: string) => data(request<Ok<{ signed_in: boolean }>>('POST', '/api/portal/invitations/accept', { token }, q)),
  signOut: () => data(request<Ok<{ signed_out: boolean }>>('DELETE', '/api/portal/session', {}, q)),
  overview: (partnerId: number) => data(request<Ok<PortalOverview>>('GET', `/api/portal/partners/${partnerId}`, undefined, q)),
  payoutDetails: (partnerId: number) => data(request<Ok<PayoutDetailsView | null>>('GET', `/api/portal/partners/${partnerId}/payout-details`, undefined, q)),
  savePayoutDetails: (partnerId: number, input: Record<string, string>) => data(request<Ok<PayoutDetailsView>>('PUT', `/api/portal/partners/${partnerId}/payout-details`, input, q)),
  linkRequests: (partnerId: number) => data(request<Ok<LinkRequestView[]>>('GET', `/api/portal/partners/${partnerId}/link-requests`, undefined, q)),
  askForLink: (partnerId: number, input: { program_id: number; short_link?: string; note?: string }) => data(request<Ok<LinkRequestView>>('POST', `/api/portal/partners/${partnerId}/link-requests`, input, q)),
  linkDaily: (partnerId: number, linkId: number) => data(request<Ok<PortalLinkDaily>>('GET', `/api/portal/partners/${partnerId}/links/${linkId}/daily`, undefined, q)),
  stats: (partnerId: number, query: string) => data(request<Ok<StatsReport>>('GET', `/api/portal/partners/${partnerId}/stats?${query}`, undefined, q)),
  // The public application page (no session).
  applyTerms: (slug: string) => data(request<Ok<PublicProgramTerms>>('GET', `/api/apply/${encodeURIComponent(slug)}`, undefined, q)),
  apply: (slug: string, input: { name: string; email: string; website: string; promotion: string }) => data(request<Ok<{ received: boolean; message: string }>>('POST', `/api/apply/${encodeURIComponent(slug)}`, input, q)),
};
