/**
 * The dashboard's HTTP client: same-origin JSON calls with the session cookie. Error bodies are the
 * platform envelope `{data: null, error: {message, ...}}` or the typed one `{error: {code, message}}`;
 * either way the person sees `error.message`, as the server wrote it.
 */
import type {
  AuditLogResponse,
  BalancesResponse,
  DashboardApplication,
  LinkRequestView,
  ProgramPortalSettings,
  CommissionReviewResult,
  LedgerResponse,
  PayoutBatchResponse,
  PayoutDetailsView,
  PayoutObject,
  DashboardAgentKey,
  DashboardCliToken,
  DashboardLink,
  DashboardPartner,
  DashboardProgram,
  DashboardSession,
  EventListResponse,
  GeneratedKey,
  NormalizedEvent,
  PaymentsConnection,
  ReadinessResponse,
  WebhookDeliveriesResponse,
  WebhookDeliveryDetail,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  SignedOut,
  SignInOptions,
  StatsReport,
} from '@reftrack/contract';
import { SIGN_IN_PATHS } from '@reftrack/contract';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface ErrorBody {
  message?: string;
  error?: { message?: string; code?: string; details?: { code?: string } };
}

/** Called when a signed-in call answers 401 (the session ended): the app goes to sign-in. */
let onSessionLost: (() => void) | null = null;
export function setSessionLostHandler(handler: (() => void) | null): void {
  onSessionLost = handler;
}

export function errorFromBody(status: number, body: unknown): ApiError {
  const b = (body ?? {}) as ErrorBody;
  const message = b.error?.message ?? b.message ?? `The server answered HTTP ${status}.`;
  return new ApiError(status, message, b.error?.code ?? b.error?.details?.code);
}

export async function request<T>(method: string, path: string, body?: unknown, opts: { quiet401?: boolean } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The server could not be reached. Check your connection and try again.');
  }
  const json: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    if (res.status === 401 && !opts.quiet401) onSessionLost?.();
    throw errorFromBody(res.status, json);
  }
  return json as T;
}

interface Ok<T> {
  success: true;
  data: T;
}

const get = <T>(path: string) => request<Ok<T>>('GET', path).then((r) => r.data);
const send = <T>(method: string, path: string, body?: unknown) => request<Ok<T>>(method, path, body ?? {}).then((r) => r.data);

export interface ProgramInput {
  workspace_id?: number;
  name?: string;
  domain?: string;
  commission_type?: string;
  commission_rate?: number;
  attribution_window_days?: number;
  lead_auth?: string;
  commission_hold_days?: number;
  payout_minimum?: number;
}

export interface LedgerQuery {
  partner_id?: string;
  status?: string;
  currency?: string;
  cursor?: string;
  limit?: number;
}

export function commissionsPath(programId: number, q: LedgerQuery & { format?: 'csv' }): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return `/api/dashboard/programs/${programId}/commissions${qs ? `?${qs}` : ''}`;
}

export type Readiness = ReadinessResponse['data'];

export interface EventQuery {
  page?: number;
  pageSize?: number;
  eventType?: string;
  dateFrom?: string;
  dateTo?: string;
  /** Clicks of known bots: `include` (the listing's default), `exclude` or `only`. */
  bots?: string;
}

export function eventsPath(programId: number, q: EventQuery): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return `/api/tracking/events/${programId}${qs ? `?${qs}` : ''}`;
}

/** What the Webhooks page sends to create an endpoint. */
export interface WebhookInput {
  url: string;
  event_types: string[];
  program_id?: number | null;
  partner_id?: number | null;
  description?: string | null;
}

export const api = {
  session: () => request<Ok<DashboardSession>>('GET', '/api/dashboard/session', undefined, { quiet401: true }).then((r) => r.data),
  signIn: (idToken: string) => request<Ok<DashboardSession>>('POST', '/api/dashboard/session', { id_token: idToken }, { quiet401: true }).then((r) => r.data),
  signOut: () => request<Ok<SignedOut>>('DELETE', '/api/dashboard/session', {}, { quiet401: true }).then((r) => r.data),
  signInOptions: () => request<Ok<SignInOptions>>('GET', SIGN_IN_PATHS.options, undefined, { quiet401: true }).then((r) => r.data),
  devToken: (email: string) => request<Ok<{ id_token: string }>>('POST', '/dev-idp/token', { email }, { quiet401: true }).then((r) => r.data.id_token),

  programs: () => get<DashboardProgram[]>('/api/dashboard/programs'),
  program: (id: number) => get<DashboardProgram>(`/api/dashboard/programs/${id}`),
  createProgram: (input: ProgramInput) => send<DashboardProgram>('POST', '/api/dashboard/programs', input),
  updateProgram: (id: number, input: ProgramInput) => send<DashboardProgram>('PATCH', `/api/dashboard/programs/${id}`, input),
  generateKey: (id: number) => send<GeneratedKey>('POST', `/api/dashboard/programs/${id}/key`),
  readiness: (id: number) => get<Readiness>(`/api/dashboard/programs/${id}/readiness`),

  partners: (id: number) => get<DashboardPartner[]>(`/api/dashboard/programs/${id}/partners`),
  invitePartner: (partnerId: number, email?: string) => send<{ invitation_id: number; email: string; expires_at: string }>('POST', `/api/dashboard/partners/${partnerId}/invitations`, email ? { email } : {}),
  addPartner: (id: number, input: { name: string; code: string; email?: string }) => send<DashboardPartner>('POST', `/api/dashboard/programs/${id}/partners`, input),
  links: (id: number) => get<DashboardLink[]>(`/api/dashboard/programs/${id}/links`),
  createLink: (id: number, input: { short_link: string; partner_id: number }) => send<DashboardLink>('POST', `/api/dashboard/programs/${id}/links`, input),
  switchLink: (linkId: number, active: boolean) => send<DashboardLink>('PATCH', `/api/dashboard/links/${linkId}`, { active }),
  portalSettings: (id: number) => get<ProgramPortalSettings>(`/api/dashboard/programs/${id}/portal-settings`),
  savePortalSettings: (id: number, input: { applications_open: boolean; link_requests_open: boolean }) => send<ProgramPortalSettings>('PUT', `/api/dashboard/programs/${id}/portal-settings`, input),
  applications: (id: number) => get<DashboardApplication[]>(`/api/dashboard/programs/${id}/applications?status=pending`),
  approveApplication: (applicationId: number) => send<{ application: DashboardApplication; partner_id: number; link: DashboardLink }>('POST', `/api/dashboard/applications/${applicationId}/approve`, {}),
  declineApplication: (applicationId: number, input: { reason: string; notify: boolean }) => send<{ application: DashboardApplication }>('POST', `/api/dashboard/applications/${applicationId}/decline`, input),
  linkRequests: (id: number) => get<LinkRequestView[]>(`/api/dashboard/programs/${id}/link-requests?status=pending`),
  approveLinkRequest: (requestId: number, shortLink?: string) => send<{ request: LinkRequestView; link: DashboardLink }>('POST', `/api/dashboard/link-requests/${requestId}/approve`, shortLink ? { short_link: shortLink } : {}),
  declineLinkRequest: (requestId: number, input: { reason: string }) => send<{ request: LinkRequestView }>('POST', `/api/dashboard/link-requests/${requestId}/decline`, input),

  payments: (id: number) => get<PaymentsConnection>(`/api/dashboard/programs/${id}/payments`),
  connectPayments: (id: number, input: { stripe_account_id: string; webhook_secret: string }) => send<PaymentsConnection>('PUT', `/api/dashboard/programs/${id}/payments`, input),
  disconnectPayments: (id: number) => send<PaymentsConnection>('DELETE', `/api/dashboard/programs/${id}/payments`),

  events: (programId: number, q: EventQuery) => request<EventListResponse>('GET', eventsPath(programId, q)),
  /** `query`: the stats query string (lib/stats-view.ts statsQuery). */
  stats: (programId: number, query: string) => get<StatsReport>(`/api/dashboard/programs/${programId}/stats?${query}`),

  cliTokens: () => get<DashboardCliToken[]>('/api/dashboard/cli-tokens'),
  revokeCliToken: (id: number) => send<DashboardCliToken>('POST', `/api/dashboard/cli-tokens/${id}/revoke`),
  agentKeys: (workspaceId: number) => get<DashboardAgentKey[]>(`/api/dashboard/workspaces/${workspaceId}/agent-keys`),
  revokeAgentKey: (id: number) => send<DashboardAgentKey>('POST', `/api/dashboard/agent-keys/${id}/revoke`),

  commissions: (programId: number, q: LedgerQuery) => request<LedgerResponse>('GET', commissionsPath(programId, q)),
  reviewCommissions: (programId: number, action: 'approve' | 'decline', ids: number[], reason?: string) =>
    send<CommissionReviewResult[]>('POST', `/api/dashboard/programs/${programId}/commissions/${action}`, action === 'decline' ? { ids, reason } : { ids }),
  balances: (programId: number) => get<BalancesResponse['data']>(`/api/dashboard/programs/${programId}/balances`),
  payouts: (programId: number) => get<PayoutObject[]>(`/api/dashboard/programs/${programId}/payouts`),
  createPayout: (programId: number, input: { partner_id: number; currency: string; method: string; reference?: string }) => send<PayoutObject>('POST', `/api/dashboard/programs/${programId}/payouts`, input),
  createPayoutBatch: (programId: number, input: { method: string; currency?: string }) => send<PayoutBatchResponse['data']>('POST', `/api/dashboard/programs/${programId}/payout-batches`, input),
  updatePayout: (payoutId: number, status: 'sent' | 'failed') => send<PayoutObject>('PATCH', `/api/dashboard/payouts/${payoutId}`, { status }),
  payoutDetails: (partnerId: number) => get<PayoutDetailsView | null>(`/api/dashboard/partners/${partnerId}/payout-details`),
  webhooks: (workspaceId: number) => get<WebhookEndpoint[]>(`/api/dashboard/workspaces/${workspaceId}/webhooks`),
  createWebhook: (workspaceId: number, input: WebhookInput) => send<WebhookEndpointWithSecret>('POST', `/api/dashboard/workspaces/${workspaceId}/webhooks`, input),
  updateWebhook: (id: number, input: Partial<WebhookInput> & { enabled?: boolean }) => send<WebhookEndpoint>('PATCH', `/api/dashboard/webhooks/${id}`, input),
  deleteWebhook: (id: number) => send<null>('DELETE', `/api/dashboard/webhooks/${id}`),
  rotateWebhookSecret: (id: number) => send<WebhookEndpointWithSecret>('POST', `/api/dashboard/webhooks/${id}/rotate-secret`),
  testWebhook: (id: number) => send<WebhookDeliveryDetail>('POST', `/api/dashboard/webhooks/${id}/test`),
  webhookDeliveries: (id: number, q: { page: number; pageSize: number }) =>
    request<WebhookDeliveriesResponse>('GET', `/api/dashboard/webhooks/${id}/deliveries?page=${q.page}&pageSize=${q.pageSize}`),
  resendDelivery: (id: number) => send<WebhookDeliveryDetail>('POST', `/api/dashboard/webhook-deliveries/${id}/resend`),

  auditLog: (workspaceId: number, q: { page: number; pageSize: number }) =>
    request<AuditLogResponse>('GET', `/api/dashboard/workspaces/${workspaceId}/audit-log?page=${q.page}&pageSize=${q.pageSize}`),
};

export type { NormalizedEvent };
