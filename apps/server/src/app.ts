/** The Koa app: middleware order and routers, nothing else. */
import Koa, { type Context, type Middleware } from 'koa';
import Router from '@koa/router';
import { ERRORS, ROUTES, type ErrorSpec } from '@reftrack/contract';
import type { AppDeps } from './deps.js';
import { requestId } from './http/request-id.js';
import { errorRenderer } from './http/error-renderer.js';
import { jsonBody } from './http/json-body.js';
import { rateLimit } from './http/rate-limit.js';
import { openCors } from './http/cors.js';
import type { RequestState } from './http/state.js';
import { rotationWarnings } from './auth/program-key.js';
import { trackClick } from './routes/track/click.js';
import { trackLead } from './routes/track/lead.js';
import { trackSale } from './routes/track/sale.js';
import { trackRefund } from './routes/track/refund.js';
import { readiness } from './routes/programs/readiness.js';
import { errorsPage } from './routes/docs/errors-page.js';
import { health } from './routes/health.js';
import { trackerScript } from './routes/tracker-script.js';

/** Route-level facts the error renderer needs, set before anything can fail. */
function routeMeta(meta: Partial<RequestState> & { failure: ErrorSpec }): Middleware {
  return async (ctx: Context, next) => {
    Object.assign(ctx.state as RequestState, meta);
    await next();
  };
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  if (deps.config.trustProxy !== false) {
    app.proxy = true;
    app.maxIpsCount = deps.config.trustProxy;
  }
  // Errors are rendered by errorRenderer; Koa's own handler only sees what escapes it (nothing).
  app.silent = true;

  const router = new Router();
  const body = jsonBody();
  const { limiters } = deps;

  router.get(ROUTES.healthz.path, health(deps));
  router.get(ROUTES.errorDocs.path, errorsPage);
  router.get('/tracker.js', trackerScript(false));
  router.get('/tracker/v1.js', trackerScript(true));

  router.all(ROUTES.trackClick.path, openCors);
  router.post(ROUTES.trackClick.path, routeMeta({ failure: ERRORS.clickFailed }), rateLimit(limiters, 'click'), body, trackClick(deps));
  router.all(ROUTES.trackLead.path, openCors);
  router.post(ROUTES.trackLead.path, routeMeta({ failure: ERRORS.leadFailed }), rateLimit(limiters, 'lead'), body, trackLead(deps));
  router.post(ROUTES.trackSale.path, routeMeta({ failure: ERRORS.saleFailed, codeFromStatus: true }), rateLimit(limiters, 'saleRefund'), body, trackSale(deps));
  router.post(ROUTES.trackRefund.path, routeMeta({ failure: ERRORS.refundFailed, codeFromStatus: true }), rateLimit(limiters, 'saleRefund'), body, trackRefund(deps));
  router.get(
    ROUTES.readiness.path,
    routeMeta({ failure: ERRORS.readinessFailed, failureExtra: { retry_after_seconds: 10 } }),
    rateLimit(limiters, 'readiness'),
    readiness(deps),
  );

  app.use(requestId);
  app.use(rotationWarnings(deps.config.publicBaseUrl, deps.now));
  app.use(errorRenderer(deps.logger));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
