/** The partner portal's HTTP client: same-origin JSON with the portal's own session cookie (docs/partners.md). */
import type { PayoutDetailsView, PortalMe, PortalOverview } from '@reftrack/contract';
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
};
