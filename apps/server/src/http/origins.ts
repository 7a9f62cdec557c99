/**
 * The origins the dashboard is served from, for the cross-site check of its state-changing
 * requests (docs/security.md, "Cross-site requests"). The check compares a request's `Origin`
 * with these configured origins, never with the request's own `Host`: under DNS rebinding an
 * attacker's page sends a matching pair of both.
 *
 * PUBLIC_BASE_URL's origin always counts. A local set-up (bound to loopback, no PUBLIC_BASE_URL)
 * is reached as `http://localhost:PORT`, `http://127.0.0.1:PORT` or `http://[::1]:PORT`, so those
 * count too — with the port the server actually listens on, since another local site on another
 * port is "same-site" to the browser and would carry the session cookie.
 */
import { isLoopbackHost, LOOPBACK_HOSTS, type Config } from '../config.js';

export class DashboardOrigins {
  private readonly publicOrigin: string;
  private readonly local: boolean;
  private port: number | undefined;

  constructor(config: Pick<Config, 'publicBaseUrl' | 'publicBaseUrlSet' | 'host'>) {
    this.publicOrigin = new URL(config.publicBaseUrl).origin;
    this.local = !config.publicBaseUrlSet && isLoopbackHost(config.host);
  }

  /** Called once the server listens (PORT=0 picks the port then). */
  listeningOn(port: number): void {
    this.port = port;
  }

  allows(origin: string): boolean {
    if (origin === this.publicOrigin) return true;
    if (!this.local || this.port === undefined) return false;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    return url.protocol === 'http:' && (LOOPBACK_HOSTS as readonly string[]).includes(url.hostname) && url.port === String(this.port) && url.origin === origin;
  }
}
