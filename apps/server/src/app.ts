/** The Koa app: middleware order and routers, nothing else. */
import Koa from 'koa';
import Router from '@koa/router';
import { ERRORS, ROUTES, type ErrorSpec } from '@reftrack/contract';
import type { AppDeps } from './deps.js';
import { requestEnvelope } from './http/request-envelope.js';
import { openCorsPreflight } from './http/cors.js';
import { routeEntry, type EntryOptions } from './http/route-entry.js';
import { trackClick } from './routes/track/click.js';
import { trackLead } from './routes/track/lead.js';
import { trackSale } from './routes/track/sale.js';
import { trackRefund } from './routes/track/refund.js';
import { stripeWebhook, STRIPE_WEBHOOK_BODY_LIMIT } from './routes/webhooks/stripe.js';
import { readiness } from './routes/programs/readiness.js';
import { errorsPage } from './routes/docs/errors-page.js';
import { health } from './routes/health.js';
import { trackerScript } from './routes/tracker-script.js';
import { requireSession } from './auth/dashboard-session.js';
import { requireAgentScope } from './auth/agent-key.js';
import { createDashboardSession, currentDashboardSession, deleteDashboardSession } from './routes/dashboard/session.js';
import { createDashboardProgram, dashboardReadiness, getDashboardProgram, listPrograms, updateDashboardProgram } from './routes/dashboard/programs.js';
import { regenerateKey } from './routes/dashboard/keys.js';
import { addPartner, listPartners } from './routes/dashboard/partners.js';
import { createLink, listLinks, updateLink } from './routes/dashboard/links.js';
import { connectPayments, disconnectPayments, getPayments } from './routes/dashboard/payments.js';
import { trackingEvents } from './routes/tracking/events.js';
import { agentGetProgram, agentListPrograms, agentUpdateProgram } from './routes/agent/programs.js';
import { devSignInPage, devToken } from './routes/dev-idp/sign-in.js';
import { authCallback, authPoll, authStart } from './routes/cli/auth-session.js';
import { cliInit, cliPrograms } from './routes/cli/programs.js';
import { cliStatus } from './routes/cli/status.js';
import { cliTestEvent } from './routes/cli/test-event.js';
import { stripeConnectRetired } from './routes/cli/retired.js';
import { cliLoginPage, cliLoginReturnPage } from './routes/cli/login-page.js';
import { webApp, WEB_APP_PATHS } from './routes/web-app.js';

export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  if (deps.config.trustProxy !== false) {
    app.proxy = true;
    app.maxIpsCount = deps.config.trustProxy;
  }
  // Errors are rendered by errorRenderer; Koa's own handler only sees what escapes it (nothing).
  app.silent = true;

  // The tracking routes have a router of their own, matched first: a router tests every one of
  // its routes on each request, and these are the routes that carry the traffic.
  const tracking = new Router();
  const router = new Router();
  const entry = (options: EntryOptions) => routeEntry(deps.limiters, options);

  router.get(ROUTES.healthz.path, health(deps));
  router.get(ROUTES.errorDocs.path, errorsPage);
  router.get('/tracker.js', trackerScript(false));
  router.get('/tracker/v1.js', trackerScript(true));

  tracking.options(ROUTES.trackClick.path, openCorsPreflight);
  tracking.post(ROUTES.trackClick.path, entry({ failure: ERRORS.clickFailed, bucket: 'click', cors: true }), trackClick(deps));
  tracking.options(ROUTES.trackLead.path, openCorsPreflight);
  tracking.post(ROUTES.trackLead.path, entry({ failure: ERRORS.leadFailed, bucket: 'lead', cors: true }), trackLead(deps));
  tracking.post(ROUTES.trackSale.path, entry({ failure: ERRORS.saleFailed, codeFromStatus: true, bucket: 'saleRefund' }), trackSale(deps));
  tracking.post(ROUTES.trackRefund.path, entry({ failure: ERRORS.refundFailed, codeFromStatus: true, bucket: 'saleRefund' }), trackRefund(deps));
  router.post(ROUTES.stripeWebhook.path, entry({ failure: ERRORS.stripeWebhookFailed, bodyLimit: STRIPE_WEBHOOK_BODY_LIMIT }), stripeWebhook(deps));
  tracking.get(ROUTES.readiness.path, entry({ failure: ERRORS.readinessFailed, failureExtra: { retry_after_seconds: 10 }, bucket: 'readiness' }), readiness(deps));

  // Dashboard (design: "Dashboard session"): a session cookie, never a program key.
  const session = requireSession(deps.db, deps.config.publicBaseUrl, deps.now);
  const dash = [entry({ failure: ERRORS.internal, bucket: 'dashboard' })] as const;
  router.post('/api/dashboard/session', ...dash, createDashboardSession(deps));
  router.get('/api/dashboard/session', ...dash, session, currentDashboardSession(deps));
  router.delete('/api/dashboard/session', ...dash, session, deleteDashboardSession(deps));
  router.get('/api/dashboard/programs', ...dash, session, listPrograms(deps));
  router.post('/api/dashboard/programs', ...dash, session, createDashboardProgram(deps));
  router.get('/api/dashboard/programs/:id', ...dash, session, getDashboardProgram(deps));
  router.patch('/api/dashboard/programs/:id', ...dash, session, updateDashboardProgram(deps));
  router.post('/api/dashboard/programs/:id/key', ...dash, session, regenerateKey(deps));
  router.get('/api/dashboard/programs/:id/readiness', ...dash, session, dashboardReadiness(deps));
  router.get('/api/dashboard/programs/:id/partners', ...dash, session, listPartners(deps));
  router.post('/api/dashboard/programs/:id/partners', ...dash, session, addPartner(deps));
  router.get('/api/dashboard/programs/:id/links', ...dash, session, listLinks(deps));
  router.post('/api/dashboard/programs/:id/links', ...dash, session, createLink(deps));
  router.patch('/api/dashboard/links/:id', ...dash, session, updateLink(deps));
  router.get('/api/dashboard/programs/:id/payments', ...dash, session, getPayments(deps));
  router.put('/api/dashboard/programs/:id/payments', ...dash, session, connectPayments(deps));
  router.delete('/api/dashboard/programs/:id/payments', ...dash, session, disconnectPayments(deps));
  router.get(ROUTES.trackingEvents.path, entry({ failure: ERRORS.eventsFailed, bucket: 'dashboard' }), session, trackingEvents(deps));
  router.get('/dev-idp/sign-in', devSignInPage(deps));
  router.post('/dev-idp/token', ...dash, devToken(deps));

  // CLI (4.7, 7.6): 500s carry the request id in the message and in details.request_id.
  const cli = (failure: ErrorSpec, extra: Partial<EntryOptions> = {}) => [entry({ failure, requestIdInDetails: true, bucket: 'cli', ...extra })] as const;
  router.post(ROUTES.cliAuthStart.path, ...cli(ERRORS.cliAuthStartFailed), authStart(deps));
  router.post(ROUTES.cliAuthCallback.path, ...cli(ERRORS.cliCallbackFailed), authCallback(deps));
  router.get(ROUTES.cliAuthPoll.path, ...cli(ERRORS.cliPollFailed), authPoll(deps));
  router.post(ROUTES.cliInit.path, ...cli(ERRORS.cliInitFailed), cliInit(deps));
  router.get(ROUTES.cliPrograms.path, ...cli(ERRORS.cliProgramsFailed), cliPrograms(deps));
  // 4: GET /status answers 200, 401 and 429 without X-Request-ID.
  router.get(ROUTES.cliStatus.path, ...cli(ERRORS.cliStatusFailed, { omitRequestIdOn: [200, 401, 429] }), cliStatus(deps));
  router.post(ROUTES.cliTestEvent.path, ...cli(ERRORS.cliTestEventFailed), cliTestEvent(deps));
  router.post(ROUTES.cliStripeConnect.path, ...cli(ERRORS.internal), stripeConnectRetired);
  router.get('/cli/login', cliLoginPage(deps));
  router.get('/cli/login/return', cliLoginReturnPage);

  // Agent API (5.6): agent keys with scopes.
  const agent = [entry({ failure: ERRORS.internal, bucket: 'agent' })] as const;
  router.get(ROUTES.agentPrograms.path, ...agent, requireAgentScope(deps.db, 'programs:read'), agentListPrograms(deps));
  router.get(ROUTES.agentProgram.path, ...agent, requireAgentScope(deps.db, 'programs:read'), agentGetProgram(deps));
  router.patch(ROUTES.agentProgramUpdate.path, ...agent, requireAgentScope(deps.db, 'programs:write'), agentUpdateProgram(deps));

  router.get(WEB_APP_PATHS, webApp()); // the dashboard web app: last route, every remaining GET
  app.use(requestEnvelope({ logger: deps.logger, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }));
  app.use(tracking.routes());
  app.use(tracking.allowedMethods());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
