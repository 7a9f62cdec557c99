/**
 * The metrics listener (METRICS_PORT, docs/operator.md "Metrics"): GET /metrics without a token, on
 * an address of its own (METRICS_HOST, loopback by default) that the public never reaches — the
 * usual Prometheus set-up, where a scraper inside the network reads every process directly. It
 * serves nothing else: every other path is a 404, and other methods a 405, in the JSON envelope.
 *
 * Scrapers name the process by address, so a `Host` that is a name — other than `localhost`,
 * METRICS_HOST itself or one of ALLOWED_HOSTS — is refused with the main port's 421: otherwise a
 * page on a domain rebound to 127.0.0.1 could read the metrics through a browser on this machine
 * (docs/security.md, "DNS rebinding").
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ERRORS, type ErrorSpec } from '@reftrack/contract';
import { platformErrorJson } from '../http/error-renderer.js';
import { hostnameOf } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from './metrics.js';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

function refuse(res: http.ServerResponse, spec: ErrorSpec): void {
  res.writeHead(spec.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...(spec.status === 405 ? { allow: 'GET, HEAD' } : {}) });
  res.end(platformErrorJson(spec));
}

/** A `Host` a scraper sends: an address, `localhost`, or a name the operator configured. */
function scraperHost(header: string | undefined, names: ReadonlySet<string>): boolean {
  const name = header === undefined ? undefined : hostnameOf(header);
  if (name === undefined) return false;
  return net.isIP(name.replace(/^\[|\]$/g, '')) !== 0 || names.has(name);
}

export async function startMetricsListener(metrics: Metrics, host: string, port: number, logger: Logger, allowedHosts: readonly string[] = []): Promise<MetricsListener> {
  const names = new Set(['localhost', host.toLowerCase(), ...allowedHosts]);
  const server = http.createServer((req, res) => {
    if (!scraperHost(req.headers.host, names)) return refuse(res, ERRORS.hostNotAllowed);
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return refuse(res, ERRORS.routeNotFound);
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, ERRORS.methodNotAllowed);
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        logger.error({ err }, 'metrics scrape failed');
        refuse(res, ERRORS.internal);
      },
    );
  });
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A scraper's keep-alive connection would otherwise hold close() until it times out.
        server.closeAllConnections();
      }),
  };
}
