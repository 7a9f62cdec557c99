/**
 * The Host allow-list (docs/security.md, "DNS rebinding"). A page on any domain that resolves to
 * 127.0.0.1 — or to the server's own address — can make a browser send requests to this server
 * with its own domain in `Host` and a matching `Origin`, so neither header proves the request
 * came from the dashboard. A request whose `Host` names none of the configured host names
 * (`config.allowedHosts`) is refused before any route runs: this wraps the whole request listener,
 * the click route's fast lane included.
 *
 * `GET /healthz` is exempt: load balancers and orchestrators probe it by address, and it answers
 * nothing but liveness.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { ERRORS, HEADERS, ROUTES } from '@reftrack/contract';
import { hostnameOf } from '../config.js';
import { platformErrorJson } from './error-renderer.js';
import { requestIdFor } from './request-id.js';

const REFUSAL = platformErrorJson(ERRORS.hostNotAllowed);

export function hostAllowed(req: IncomingMessage, allowed: ReadonlySet<string>): boolean {
  const host = req.headers.host;
  const name = typeof host === 'string' ? hostnameOf(host) : undefined;
  return name !== undefined && allowed.has(name);
}

const isHealthProbe = (req: IncomingMessage): boolean => req.method === 'GET' && (req.url === ROUTES.healthz.path || req.url?.startsWith(`${ROUTES.healthz.path}?`) === true);

export function withHostGate(allowedHosts: readonly string[], next: RequestListener): RequestListener {
  const allowed = new Set(allowedHosts);
  return function hostGate(req: IncomingMessage, res: ServerResponse): void {
    if (hostAllowed(req, allowed) || isHealthProbe(req)) {
      next(req, res);
      return;
    }
    res.writeHead(ERRORS.hostNotAllowed.status, {
      [HEADERS.requestId]: requestIdFor(req.headers),
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(REFUSAL)),
    });
    res.end(REFUSAL);
  };
}
