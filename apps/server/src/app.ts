/** The Koa app: middleware order and routers, nothing else. */
import Koa from 'koa';
import Router from '@koa/router';
import { ERRORS, ROUTES, SIGN_IN_PATHS, type ErrorSpec } from '@reftrack/contract';
import type { AppDeps } from './deps.js';
import { requestEnvelope } from './http/request-envelope.js';
import { openCorsPreflight } from './http/cors.js';
import { routeEntry, type EntryOptions } from './http/route-entry.js';
import { trackClick } from './routes/track/click.js';
import { trackLead } from './routes/track/lead.js';
import { trackSale } from './routes/track/sale.js';
import { trackRefund } from './routes/track/refund.js';
import { intakeAddress, stripeWebhookAtAddress, stripeWebhookShared, STRIPE_WEBHOOK_BODY_LIMIT } from './routes/webhooks/stripe.js';
import { readiness } from './routes/programs/readiness.js';
import { errorsPage, ERRORS_PAGE_POLICY } from './routes/docs/errors-page.js';
import { health, readiness as readyz } from './routes/health.js';
import { metricsEndpoint } from './routes/metrics.js';
import { trackerScript } from './routes/tracker-script.js';
import { requireSession, sessionWriteGuard } from './auth/dashboard-session.js';
import { pageHeaders } from './http/page-headers.js';
import { requireAgentScope } from './auth/agent-key.js';
import { verifiedCredential } from './auth/rate-subject.js';
import { createDashboardSession, currentDashboardSession, deleteDashboardSession } from './routes/dashboard/session.js';
import { listOwnCliTokens, listWorkspaceAgentKeys, revokeOwnCliToken, revokeWorkspaceAgentKey } from './routes/dashboard/access.js';
import { createDashboardProgram, dashboardReadiness, getDashboardProgram, listPrograms, updateDashboardProgram } from './routes/dashboard/programs.js';
import { regenerateKey } from './routes/dashboard/keys.js';
import { addPartner, listPartners } from './routes/dashboard/partners.js';
import { createLink, listLinks, updateLink } from './routes/dashboard/links.js';
import { connectPayments, disconnectPayments, getPayments } from './routes/dashboard/payments.js';
import { trackingEvents } from './routes/tracking/events.js';
import { agentGetProgram, agentListPrograms, agentUpdateProgram } from './routes/agent/programs.js';
import { devSignInPage, devToken, DEV_SIGN_IN_PAGE_POLICY } from './routes/dev-idp/sign-in.js';
import { authCallback, authPoll, authStart } from './routes/cli/auth-session.js';
import { authLogout } from './routes/cli/logout.js';
import { cliInit, cliPrograms } from './routes/cli/programs.js';
import { cliStatus } from './routes/cli/status.js';
import { cliTestEvent } from './routes/cli/test-event.js';
import { cliProgramKey } from './routes/cli/program-key.js';
import { stripeConnectRetired } from './routes/cli/retired.js';
import { cliLoginContinue, cliLoginPage } from './routes/cli/login-page.js';
import { oidcCallback, oidcStart, signedOutPage, signInOptions } from './routes/auth/oidc.js';
import { SIGN_IN_PAGE_POLICY } from './http/sign-in-page.js';
import { webApp, WEB_APP_PATHS, WEB_APP_POLICY } from './routes/web-app.js';
import { workspaceAuditLog } from './routes/dashboard/audit-log.js';
import { listBalances, listCommissions, reviewCommissionsRoute } from './routes/dashboard/commissions.js';
import { createPayoutBatchRoute, createPayoutRoute, exportPayoutBatch, listPayouts, updatePayoutRoute } from './routes/dashboard/payouts.js';
import { getPayoutDetails, putPayoutDetails } from './routes/dashboard/payout-details.js';
import { agentListBalances, agentListCommissions, agentListPayouts } from './routes/agent/commissions.js';
import { agentStats } from './routes/agent/stats.js';
import { dashboardStats } from './routes/dashboard/stats.js';
import { dashboardWebhooks } from './routes/dashboard/webhooks.js';
import { agentWebhooks } from './routes/agent/webhooks.js';
import { cliLoginAccount } from './routes/cli/webhooks-auth.js';
import { demoShopPage, DEMO_SHOP_POLICY } from './routes/demo/shop-page.js';
import { demoShopBuy, demoShopSignup } from './routes/demo/shop-actions.js';
import { DEMO_SHOP_PATH } from './seed/demo.js';
import { API_REFERENCE_PATH, API_REFERENCE_POLICY, apiReferenceAsset, apiReferencePage, openApiDocument } from './routes/docs/api-reference.js';

/** The routers each app was built with, for registeredRoutes (the OpenAPI coverage test). */
const ROUTERS = new WeakMap<Koa, Router[]>();

/** Every method and path the app's routers register (HEAD, added by Koa's router for each GET, left out). */
export function registeredRoutes(app: Koa): Array<{ method: string; path: string | RegExp }> {
  return (ROUTERS.get(app) ?? []).flatMap((r) =>
    r.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: layer.path as string | RegExp }))),
  );
}
import { invitePartnerRoute } from './routes/dashboard/invitations.js';
import { portalAcceptInvitation, portalMe, portalRequestSignIn, portalSignOut, portalVerifySignIn } from './routes/portal/session.js';
import { portalGetPayoutDetails, portalLinkDaily, portalOverview, portalPutPayoutDetails, portalStats } from './routes/portal/partner.js';
import { portalListLinkRequests, portalRequestLink } from './routes/portal/link-requests.js';
import { getPortalSettings, putPortalSettings } from './routes/dashboard/portal-settings.js';
import { approveApplicationRoute, declineApplicationRoute, listApplicationsRoute } from './routes/dashboard/applications.js';
import { approveLinkRequestRoute, declineLinkRequestRoute, listLinkRequestsRoute } from './routes/dashboard/link-requests.js';
import { publicProgramTerms, submitApplicationRoute } from './routes/apply/public.js';
import { devMailbox, DEV_MAILBOX_POLICY } from './routes/dev/mailbox.js';
import { requirePortalSession } from './auth/portal-session.js';

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
  // Per-key buckets (part 8) count a credential only once it has verified (auth/rate-subject.ts).
  const byProgramKey = verifiedCredential(deps.db, 'programKey', deps.now);
  const byLoginToken = verifiedCredential(deps.db, 'loginToken', deps.now);
  const byAgentKey = verifiedCredential(deps.db, 'agentKey', deps.now);

  router.get(ROUTES.healthz.path, health(deps));
  // Operations (docs/operator.md): readiness for balancers, Prometheus metrics behind METRICS_TOKEN.
  router.get('/readyz', readyz(deps));
  router.get('/metrics', metricsEndpoint(deps));
  // Every HTML page gets its security headers (http/page-headers.ts).
  const https = deps.config.publicBaseUrl.startsWith('https://');
  const page = (policy: { scripts?: string[]; styles?: string[] } = {}) => pageHeaders({ ...policy, https });
  router.get(ROUTES.errorDocs.path, page(ERRORS_PAGE_POLICY), errorsPage);
  router.get('/tracker.js', trackerScript(false));
  // The OpenAPI document and its reference page (docs/api.md, "OpenAPI").
  router.get('/openapi.json', openApiDocument(deps.config.publicBaseUrl));
  router.get(API_REFERENCE_PATH, page(API_REFERENCE_POLICY), apiReferencePage);
  router.get(`${API_REFERENCE_PATH}/:file`, apiReferenceAsset());
  router.get('/tracker/v1.js', trackerScript(true));

  tracking.options(ROUTES.trackClick.path, openCorsPreflight);
  tracking.post(ROUTES.trackClick.path, entry({ failure: ERRORS.clickFailed, bucket: 'click', cors: true }), trackClick(deps));
  tracking.options(ROUTES.trackLead.path, openCorsPreflight);
  tracking.post(ROUTES.trackLead.path, entry({ failure: ERRORS.leadFailed, bucket: 'lead', cors: true }), trackLead(deps));
  tracking.post(ROUTES.trackSale.path, entry({ failure: ERRORS.saleFailed, codeFromStatus: true, bucket: 'saleRefund', rateSubject: byProgramKey }), trackSale(deps));
  tracking.post(ROUTES.trackRefund.path, entry({ failure: ERRORS.refundFailed, codeFromStatus: true, bucket: 'saleRefund', rateSubject: byProgramKey }), trackRefund(deps));
  // The Stripe intake: rate limited per intake address (the shared one per client address), the
  // body kept raw (parsed once by the route) and limited before any signature is computed.
  const intake = { failure: ERRORS.stripeWebhookFailed, bucket: 'stripeWebhook', bodyLimit: STRIPE_WEBHOOK_BODY_LIMIT, parseBody: false } as const;
  router.post(ROUTES.stripeWebhook.path, entry(intake), stripeWebhookShared(deps));
  router.post(ROUTES.stripeWebhookEndpoint.path, entry({ ...intake, rateSubject: intakeAddress(deps.db) }), stripeWebhookAtAddress(deps));
  tracking.get(ROUTES.readiness.path, entry({ failure: ERRORS.readinessFailed, failureExtra: { retry_after_seconds: 10 }, bucket: 'readiness', rateSubject: byProgramKey }), readiness(deps));

  // Dashboard (design: "Dashboard session"): a session cookie, never a program key.
  const session = requireSession(deps.db, deps.origins, deps.now);
  // Creating a session is a session write too (login CSRF): same-origin JSON only.
  const sessionWrite = sessionWriteGuard(deps.origins);
  const dash = [entry({ failure: ERRORS.internal, bucket: 'dashboard' })] as const;
  router.post('/api/dashboard/session', ...dash, sessionWrite, createDashboardSession(deps));
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
  // Commissions and payouts (docs/commissions.md).
  router.get('/api/dashboard/programs/:id/commissions', ...dash, session, listCommissions(deps));
  router.post('/api/dashboard/programs/:id/commissions/approve', ...dash, session, reviewCommissionsRoute(deps, 'approve'));
  router.post('/api/dashboard/programs/:id/commissions/decline', ...dash, session, reviewCommissionsRoute(deps, 'decline'));
  router.get('/api/dashboard/programs/:id/balances', ...dash, session, listBalances(deps));
  // Analytics (docs/analytics.md): stats from the rollups.
  router.get('/api/dashboard/programs/:id/stats', ...dash, session, dashboardStats(deps));
  router.get('/api/dashboard/programs/:id/payouts', ...dash, session, listPayouts(deps));
  router.post('/api/dashboard/programs/:id/payouts', ...dash, session, createPayoutRoute(deps));
  router.post('/api/dashboard/programs/:id/payout-batches', ...dash, session, createPayoutBatchRoute(deps));
  router.patch('/api/dashboard/payouts/:id', ...dash, session, updatePayoutRoute(deps));
  router.get('/api/dashboard/payout-batches/:id/export', ...dash, session, exportPayoutBatch(deps));
  router.get('/api/dashboard/partners/:id/payout-details', ...dash, session, getPayoutDetails(deps));
  router.put('/api/dashboard/partners/:id/payout-details', ...dash, session, putPayoutDetails(deps));
  // Access (docs/dashboard.md): the account's CLI tokens, a workspace's agent keys; revocation.
  router.get('/api/dashboard/cli-tokens', ...dash, session, listOwnCliTokens(deps));
  router.post('/api/dashboard/cli-tokens/:id/revoke', ...dash, session, revokeOwnCliToken(deps));
  router.get('/api/dashboard/workspaces/:id/agent-keys', ...dash, session, listWorkspaceAgentKeys(deps));
  router.get('/api/dashboard/workspaces/:id/audit-log', ...dash, session, workspaceAuditLog(deps));
  router.post('/api/dashboard/agent-keys/:id/revoke', ...dash, session, revokeWorkspaceAgentKey(deps));
  // Outbound webhooks (docs/webhooks.md): endpoints, their delivery log, resend and test events.
  const hooks = dashboardWebhooks(deps);
  router.get('/api/dashboard/workspaces/:id/webhooks', ...dash, session, hooks.list);
  router.post('/api/dashboard/workspaces/:id/webhooks', ...dash, session, hooks.create);
  router.get('/api/dashboard/webhooks/:id', ...dash, session, hooks.get);
  router.patch('/api/dashboard/webhooks/:id', ...dash, session, hooks.update);
  router.delete('/api/dashboard/webhooks/:id', ...dash, session, hooks.remove);
  router.post('/api/dashboard/webhooks/:id/rotate-secret', ...dash, session, hooks.rotate);
  router.post('/api/dashboard/webhooks/:id/test', ...dash, session, hooks.test);
  router.get('/api/dashboard/webhooks/:id/deliveries', ...dash, session, hooks.deliveries);
  router.get('/api/dashboard/webhook-deliveries/:id', ...dash, session, hooks.delivery);
  router.post('/api/dashboard/webhook-deliveries/:id/resend', ...dash, session, hooks.resend);
  // The partner portal (docs/partners.md): invitations from the dashboard; partners' own sign-in and session.
  router.post('/api/dashboard/partners/:id/invitations', ...dash, session, invitePartnerRoute(deps));
  const portalSession = requirePortalSession(deps.db, deps.origins, deps.now);
  const portalSignIn = [entry({ failure: ERRORS.internal, bucket: 'portalSignIn' }), sessionWrite] as const;
  router.post('/api/portal/sign-in', ...portalSignIn, portalRequestSignIn(deps));
  router.post('/api/portal/sign-in/verify', ...portalSignIn, portalVerifySignIn(deps));
  router.post('/api/portal/invitations/accept', ...portalSignIn, portalAcceptInvitation(deps));
  router.get('/api/portal/session', ...dash, portalSession, portalMe(deps));
  router.delete('/api/portal/session', ...dash, portalSession, portalSignOut(deps));
  router.get('/api/portal/partners/:id', ...dash, portalSession, portalOverview(deps));
  router.get('/api/portal/partners/:id/payout-details', ...dash, portalSession, portalGetPayoutDetails(deps));
  router.get('/api/portal/partners/:id/stats', ...dash, portalSession, portalStats(deps));
  router.put('/api/portal/partners/:id/payout-details', ...dash, portalSession, portalPutPayoutDetails(deps));
  // Applications and link requests (docs/partners.md): program settings, the public application
  // form (no session; same-origin JSON; its own bucket per client address), the owner's decisions.
  router.get('/api/dashboard/programs/:id/portal-settings', ...dash, session, getPortalSettings(deps));
  router.put('/api/dashboard/programs/:id/portal-settings', ...dash, session, putPortalSettings(deps));
  router.get('/api/dashboard/programs/:id/applications', ...dash, session, listApplicationsRoute(deps));
  router.post('/api/dashboard/applications/:id/approve', ...dash, session, approveApplicationRoute(deps));
  router.post('/api/dashboard/applications/:id/decline', ...dash, session, declineApplicationRoute(deps));
  router.get('/api/dashboard/programs/:id/link-requests', ...dash, session, listLinkRequestsRoute(deps));
  router.post('/api/dashboard/link-requests/:id/approve', ...dash, session, approveLinkRequestRoute(deps));
  router.post('/api/dashboard/link-requests/:id/decline', ...dash, session, declineLinkRequestRoute(deps));
  router.get('/api/apply/:slug', ...dash, publicProgramTerms(deps));
  router.post('/api/apply/:slug', entry({ failure: ERRORS.internal, bucket: 'portalApply' }), sessionWrite, submitApplicationRoute(deps));
  router.get('/api/portal/partners/:id/link-requests', ...dash, portalSession, portalListLinkRequests(deps));
  router.post('/api/portal/partners/:id/link-requests', ...dash, portalSession, portalRequestLink(deps));
  router.get('/api/portal/partners/:id/links/:linkId/daily', ...dash, portalSession, portalLinkDaily(deps));
  router.get('/dev/mailbox', page(DEV_MAILBOX_POLICY), devMailbox(deps));
  router.get(ROUTES.trackingEvents.path, entry({ failure: ERRORS.eventsFailed, bucket: 'dashboard' }), session, trackingEvents(deps));
  router.get('/dev-idp/sign-in', page(DEV_SIGN_IN_PAGE_POLICY), devSignInPage(deps));
  router.post('/dev-idp/token', ...dash, sessionWrite, devToken(deps));

  // CLI (4.7, 7.6): 500s carry the request id in the message and in details.request_id.
  const cli = (failure: ErrorSpec, extra: Partial<EntryOptions> = {}) => [entry({ failure, requestIdInDetails: true, bucket: 'cli', ...extra })] as const;
  router.post(ROUTES.cliAuthStart.path, ...cli(ERRORS.cliAuthStartFailed), authStart(deps));
  router.post(ROUTES.cliAuthCallback.path, ...cli(ERRORS.cliCallbackFailed), authCallback(deps));
  router.get(ROUTES.cliAuthPoll.path, ...cli(ERRORS.cliPollFailed), authPoll(deps));
  router.post(ROUTES.cliAuthLogout.path, ...cli(ERRORS.cliLogoutFailed, { rateSubject: byLoginToken }), authLogout(deps));
  router.post(ROUTES.cliInit.path, ...cli(ERRORS.cliInitFailed, { rateSubject: byLoginToken }), cliInit(deps));
  router.get(ROUTES.cliPrograms.path, ...cli(ERRORS.cliProgramsFailed, { rateSubject: byLoginToken }), cliPrograms(deps));
  // 4: GET /status answers 200, 401 and 429 without X-Request-ID.
  router.get(ROUTES.cliStatus.path, ...cli(ERRORS.cliStatusFailed, { omitRequestIdOn: [200, 401, 429], rateSubject: byProgramKey }), cliStatus(deps));
  router.post(ROUTES.cliTestEvent.path, ...cli(ERRORS.cliTestEventFailed, { rateSubject: byProgramKey }), cliTestEvent(deps));
  router.post(ROUTES.cliStripeConnect.path, ...cli(ERRORS.internal), stripeConnectRetired);
  router.post(ROUTES.cliProgramKey.path, ...cli(ERRORS.cliProgramKeyFailed, { rateSubject: byLoginToken }), cliProgramKey(deps));
  // `reftrack webhooks`: the dashboard's handlers behind the login token.
  const cliHooks = [...cli(ERRORS.internal, { rateSubject: byLoginToken }), cliLoginAccount(deps)] as const;
  router.get(ROUTES.cliWebhooks.path, ...cliHooks, hooks.list);
  router.post(ROUTES.cliWebhookCreate.path, ...cliHooks, hooks.create);
  router.patch(ROUTES.cliWebhookUpdate.path, ...cliHooks, hooks.update);
  router.delete(ROUTES.cliWebhookDelete.path, ...cliHooks, hooks.remove);
  router.post(ROUTES.cliWebhookRotate.path, ...cliHooks, hooks.rotate);
  router.post(ROUTES.cliWebhookTest.path, ...cliHooks, hooks.test);
  router.get(ROUTES.cliWebhookDeliveries.path, ...cliHooks, hooks.deliveries);
  router.post(ROUTES.cliWebhookResend.path, ...cliHooks, hooks.resend);
  // The browser legs of sign-in (routes/auth/oidc.ts, routes/cli/login-page.ts): plain pages, never JSON.
  const signInPages = [entry({ failure: ERRORS.internal, bucket: 'dashboard' }), page(SIGN_IN_PAGE_POLICY)] as const;
  router.get(SIGN_IN_PATHS.cliLogin, ...signInPages, cliLoginPage(deps));
  router.get(`${SIGN_IN_PATHS.cliLogin}/continue`, ...signInPages, cliLoginContinue(deps));
  router.get(SIGN_IN_PATHS.start, ...signInPages, oidcStart(deps));
  router.get(SIGN_IN_PATHS.callback, ...signInPages, oidcCallback(deps));
  router.get(SIGN_IN_PATHS.signedOut, page(SIGN_IN_PAGE_POLICY), signedOutPage);
  router.get(SIGN_IN_PATHS.options, ...dash, signInOptions(deps));

  // Agent API (5.6): agent keys with scopes.
  const agent = [entry({ failure: ERRORS.internal, bucket: 'agent', rateSubject: byAgentKey })] as const;
  router.get(ROUTES.agentPrograms.path, ...agent, requireAgentScope(deps.db, 'programs:read', deps.now), agentListPrograms(deps));
  router.get(ROUTES.agentProgram.path, ...agent, requireAgentScope(deps.db, 'programs:read', deps.now), agentGetProgram(deps));
  router.patch(ROUTES.agentProgramUpdate.path, ...agent, requireAgentScope(deps.db, 'programs:write', deps.now), agentUpdateProgram(deps));
  const commissionsRead = requireAgentScope(deps.db, 'commissions:read', deps.now);
  router.get('/api/agent/v1/programs/:id/commissions', ...agent, commissionsRead, agentListCommissions(deps));
  router.get('/api/agent/v1/programs/:id/balances', ...agent, commissionsRead, agentListBalances(deps));
  router.get('/api/agent/v1/programs/:id/payouts', ...agent, commissionsRead, agentListPayouts(deps));
  router.get('/api/agent/v1/programs/:id/stats', ...agent, requireAgentScope(deps.db, 'programs:read', deps.now), agentStats(deps));
  const agentHooks = agentWebhooks(deps);
  const hooksScope = requireAgentScope(deps.db, 'webhooks:manage', deps.now);
  router.get(ROUTES.agentWebhooks.path, ...agent, hooksScope, agentHooks.list);
  router.post(ROUTES.agentWebhookCreate.path, ...agent, hooksScope, agentHooks.create);
  router.get(ROUTES.agentWebhook.path, ...agent, hooksScope, agentHooks.get);
  router.patch(ROUTES.agentWebhookUpdate.path, ...agent, hooksScope, agentHooks.update);
  router.delete(ROUTES.agentWebhookDelete.path, ...agent, hooksScope, agentHooks.remove);
  router.post(ROUTES.agentWebhookRotate.path, ...agent, hooksScope, agentHooks.rotate);
  router.post(ROUTES.agentWebhookTest.path, ...agent, hooksScope, agentHooks.test);
  router.get(ROUTES.agentWebhookDeliveries.path, ...agent, hooksScope, agentHooks.deliveries);
  router.get(ROUTES.agentWebhookDelivery.path, ...agent, hooksScope, agentHooks.delivery);
  router.post(ROUTES.agentWebhookResend.path, ...agent, hooksScope, agentHooks.resend);

  // The demo shop exists only while `start --demo` runs on an unexposed server (main.ts); its writes
  // are same-origin JSON only, like the dashboard's, so another site cannot post to it.
  if (deps.demo) {
    router.get(DEMO_SHOP_PATH, page(DEMO_SHOP_POLICY), demoShopPage(deps));
    router.post(`${DEMO_SHOP_PATH}/signup`, ...dash, sessionWrite, demoShopSignup(deps));
    router.post(`${DEMO_SHOP_PATH}/buy`, ...dash, sessionWrite, demoShopBuy(deps));
  }

  router.get(WEB_APP_PATHS, page(WEB_APP_POLICY), webApp()); // the dashboard web app: last route, every remaining GET
  app.use(requestEnvelope({ logger: deps.logger, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now, ops: deps.ops }));
  app.use(tracking.routes());
  app.use(tracking.allowedMethods());
  app.use(router.routes());
  app.use(router.allowedMethods());
  ROUTERS.set(app, [tracking, router]);
  return app;
}
