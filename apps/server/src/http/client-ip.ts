/**
 * The client's address exactly as Koa's `ctx.ip` derives it (koa/lib/request.js, `ips` and `ip`),
 * for the click lane, which answers without a Koa context: with TRUST_PROXY on, the first of the
 * last `hops` X-Forwarded-For entries (all of them when hops is 0), else the socket's address.
 */
import type { IncomingMessage } from 'node:http';

export function clientIp(req: IncomingMessage, trustProxy: false | number): string {
  const forwarded = req.headers['x-forwarded-for'];
  if (trustProxy !== false && typeof forwarded === 'string' && forwarded) {
    let ips = forwarded.split(',').map((v) => v.trim());
    if (trustProxy > 0) ips = ips.slice(-trustProxy);
    if (ips[0]) return ips[0];
  }
  return req.socket.remoteAddress || '';
}
