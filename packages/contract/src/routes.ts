/** Every route of spec part 4 (and the design's additions), with its credential and rate bucket. */
import type { RateBucket } from './limits.js';

export type Credential = 'none' | 'program_key' | 'optional_program_key' | 'login_token' | 'dashboard_session' | 'agent_key' | 'portal_session';

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  path: string;
  credential: Credential;
  rateBucket?: RateBucket;
  section: string;
}

const r = (method: RouteSpec['method'], path: string, credential: Credential, section: string, rateBucket?: RateBucket): RouteSpec => ({
  method,
  path,
  credential,
  section,
  rateBucket,
});

export const ROUTES = {
  trackClick: r('POST', '/api/v1/track/click', 'none', '4.1', 'click'),
  trackLead: r('POST', '/api/v1/track/lead', 'optional_program_key', '4.2', 'lead'),
  trackSale: r('POST', '/api/v1/track/sale', 'program_key', '4.3', 'saleRefund'),
  trackRefund: r('POST', '/api/v1/track/refund', 'program_key', '4.4', 'saleRefund'),
  readiness: r('GET', '/api/v1/programs/me/readiness', 'program_key', '4.5', 'readiness'),
  trackingEvents: r('GET', '/api/tracking/events/:programId', 'dashboard_session', '4.6', 'dashboard'),
  cliAuthStart: r('POST', '/api/v1/cli/auth/start', 'none', '4.7', 'cli'),
  cliAuthCallback: r('POST', '/api/v1/cli/auth/callback', 'none', '4.7', 'cli'),
  cliAuthPoll: r('GET', '/api/v1/cli/auth/poll', 'none', '4.7', 'cli'),
  /** Ours (additive): `reftrack logout` revokes its login token on the server. */
  cliAuthLogout: r('POST', '/api/v1/cli/auth/logout', 'login_token', '4.7', 'cli'),
  cliInit: r('POST', '/api/v1/cli/init', 'login_token', '4.7', 'cli'),
  cliPrograms: r('GET', '/api/v1/cli/programs', 'login_token', '4.7', 'cli'),
  cliStatus: r('GET', '/api/v1/cli/status', 'program_key', '4.7', 'cli'),
  cliTestEvent: r('POST', '/api/v1/cli/test-event', 'program_key', '4.7', 'cli'),
  cliStripeConnect: r('POST', '/api/v1/cli/stripe-connect', 'none', '4.7', 'cli'),
  /** Design (4.8 leaves the key route open): generate or replace a program key with the login token, owner only. */
  cliProgramKey: r('POST', '/api/v1/cli/programs/:id/key', 'login_token', 'design', 'cli'),
  /** `reftrack webhooks` (docs/webhooks.md): the dashboard's webhook routes for the login token. */
  cliWebhooks: r('GET', '/api/v1/cli/workspaces/:id/webhooks', 'login_token', 'design', 'cli'),
  cliWebhookCreate: r('POST', '/api/v1/cli/workspaces/:id/webhooks', 'login_token', 'design', 'cli'),
  cliWebhookUpdate: r('PATCH', '/api/v1/cli/webhooks/:id', 'login_token', 'design', 'cli'),
  cliWebhookDelete: r('DELETE', '/api/v1/cli/webhooks/:id', 'login_token', 'design', 'cli'),
  cliWebhookRotate: r('POST', '/api/v1/cli/webhooks/:id/rotate-secret', 'login_token', 'design', 'cli'),
  cliWebhookTest: r('POST', '/api/v1/cli/webhooks/:id/test', 'login_token', 'design', 'cli'),
  cliWebhookDeliveries: r('GET', '/api/v1/cli/webhooks/:id/deliveries', 'login_token', 'design', 'cli'),
  cliWebhookResend: r('POST', '/api/v1/cli/webhook-deliveries/:id/resend', 'login_token', 'design', 'cli'),
  agentPrograms: r('GET', '/api/agent/v1/programs', 'agent_key', '4.8', 'agent'),
  agentProgram: r('GET', '/api/agent/v1/programs/:id', 'agent_key', '4.8', 'agent'),
  agentProgramUpdate: r('PATCH', '/api/agent/v1/programs/:id', 'agent_key', '4.8', 'agent'),
  /** Outbound webhook endpoints (docs/webhooks.md), scope webhooks:manage. */
  agentWebhooks: r('GET', '/api/agent/v1/webhooks', 'agent_key', 'design', 'agent'),
  agentWebhookCreate: r('POST', '/api/agent/v1/webhooks', 'agent_key', 'design', 'agent'),
  agentWebhook: r('GET', '/api/agent/v1/webhooks/:id', 'agent_key', 'design', 'agent'),
  agentWebhookUpdate: r('PATCH', '/api/agent/v1/webhooks/:id', 'agent_key', 'design', 'agent'),
  agentWebhookDelete: r('DELETE', '/api/agent/v1/webhooks/:id', 'agent_key', 'design', 'agent'),
  agentWebhookRotate: r('POST', '/api/agent/v1/webhooks/:id/rotate-secret', 'agent_key', 'design', 'agent'),
  agentWebhookTest: r('POST', '/api/agent/v1/webhooks/:id/test', 'agent_key', 'design', 'agent'),
  agentWebhookDeliveries: r('GET', '/api/agent/v1/webhooks/:id/deliveries', 'agent_key', 'design', 'agent'),
  agentWebhookDelivery: r('GET', '/api/agent/v1/webhook-deliveries/:id', 'agent_key', 'design', 'agent'),
  agentWebhookResend: r('POST', '/api/agent/v1/webhook-deliveries/:id/resend', 'agent_key', 'design', 'agent'),
  /** The shared intake: checks at most one connection's secret (docs/stripe.md). */
  stripeWebhook: r('POST', '/api/v1/webhooks/stripe', 'none', '6.1', 'stripeWebhook'),
  /** A connection's own intake address (recommended): checks exactly that connection's secret. */
  stripeWebhookEndpoint: r('POST', '/api/v1/webhooks/stripe/:endpointId', 'none', '6.1', 'stripeWebhook'),
  healthz: r('GET', '/healthz', 'none', 'design'),
  errorDocs: r('GET', '/docs/errors', 'none', '7'),
} as const satisfies Record<string, RouteSpec>;

export type RouteName = keyof typeof ROUTES;

/** Response headers fixed by the spec. */
export const HEADERS = {
  requestId: 'X-Request-ID',
  rateLimitLimit: 'X-RateLimit-Limit',
  rateLimitRemaining: 'X-RateLimit-Remaining',
  rateLimitReset: 'X-RateLimit-Reset',
  retryAfter: 'Retry-After',
  deprecation: 'Deprecation',
  sunset: 'Sunset',
  link: 'Link',
} as const;
