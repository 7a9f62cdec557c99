/**
 * One delivery attempt over HTTP: a POST of the signed body, no redirect followed, a time limit on
 * the whole attempt, and the response body read only up to a cap (its first KiB is kept for the
 * delivery log). The agents keep connections alive between attempts to the same receiver.
 */
import http from 'node:http';
import https from 'node:https';
import { formatMessage, WEBHOOK_ATTEMPT_ERRORS, WEBHOOK_LIMITS } from '@reftrack/contract';
import { ForbiddenTargetError, guardedLookup, isForbiddenAddress, refusedLiteral } from './targets.js';

export interface SendOptions {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: the operator allows private and loopback targets. */
  allowPrivateTargets: boolean;
  timeoutMs: number;
}

export interface AttemptOutcome {
  statusCode: number | null;
  /** The start of the response body, as text. */
  responseBody: string | null;
  /** Why there was no HTTP answer (or why it was cut short). */
  error: string | null;
  durationMs: number;
  succeeded: boolean;
}

const USER_AGENT = 'Reftrack-Webhooks/1';

export class WebhookSender {
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly options: SendOptions) {
    const lookup = options.allowPrivateTargets ? undefined : guardedLookup;
    this.agents = {
      http: new http.Agent({ keepAlive: true, maxSockets: 64, lookup }),
      https: new https.Agent({ keepAlive: true, maxSockets: 64, lookup }),
    };
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  send(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const started = performance.now();
    const done = (o: Omit<AttemptOutcome, 'durationMs' | 'succeeded'>): AttemptOutcome => ({
      ...o,
      durationMs: Math.round(performance.now() - started),
      succeeded: o.error === null && o.statusCode !== null && o.statusCode >= 200 && o.statusCode < 300,
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.resolve(done({ statusCode: null, responseBody: null, error: WEBHOOK_ATTEMPT_ERRORS.invalidUrl }));
    }
    if (!this.options.allowPrivateTargets) {
      const literal = refusedLiteral(target);
      if (literal) return Promise.resolve(done({ statusCode: null, responseBody: null, error: new ForbiddenTargetError(literal).message }));
    }
    const secure = target.protocol === 'https:';
    return new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      const finish = (o: Omit<AttemptOutcome, 'durationMs' | 'succeeded'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(done(o));
      };
      const request = (secure ? https : http).request(target, {
        method: 'POST',
        agent: secure ? this.agents.https : this.agents.http,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': USER_AGENT },
      });
      // The whole attempt, from connect to the last byte read, gets one time limit.
      const timer = setTimeout(() => {
        request.destroy();
        finish({ statusCode: null, responseBody: null, error: formatMessage(WEBHOOK_ATTEMPT_ERRORS.timeout, { ms: this.options.timeoutMs }) });
      }, this.options.timeoutMs);
      request.on('socket', (socket) => {
        // Belt and braces: the address connected to is checked again (an agent's lookup already
        // refused forbidden ones; an address literal was checked above).
        const check = () => {
          const remote = socket.remoteAddress;
          if (!this.options.allowPrivateTargets && remote && isForbiddenAddress(remote)) {
            request.destroy();
            finish({ statusCode: null, responseBody: null, error: new ForbiddenTargetError(remote).message });
          }
        };
        if (socket.remoteAddress) check();
        else socket.once(secure ? 'secureConnect' : 'connect', check);
      });
      request.on('error', (err: NodeJS.ErrnoException) => {
        const message = err instanceof ForbiddenTargetError ? err.message : formatMessage(WEBHOOK_ATTEMPT_ERRORS.connection, { code: err.code ?? '', reason: err.message }).slice(0, 300);
        finish({ statusCode: null, responseBody: null, error: message });
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let capped = false;
        response.on('data', (chunk: Buffer) => {
          if (capped) return;
          chunks.push(chunk);
          size += chunk.length;
          // Nothing past the cap is read: a receiver cannot make the server hold a large answer.
          if (size >= WEBHOOK_LIMITS.maxResponseBytes) {
            capped = true;
            response.destroy();
            const text = Buffer.concat(chunks).subarray(0, WEBHOOK_LIMITS.loggedResponseBytes).toString('utf8');
            finish({ statusCode: response.statusCode ?? null, responseBody: text, error: null });
          }
        });
        response.on('end', () => {
          const text = Buffer.concat(chunks).subarray(0, WEBHOOK_LIMITS.loggedResponseBytes).toString('utf8');
          const status = response.statusCode ?? null;
          // A redirect is never followed: it counts as a failure, with a note saying why.
          const redirect = status !== null && status >= 300 && status < 400 ? formatMessage(WEBHOOK_ATTEMPT_ERRORS.redirect, { status }) : null;
          finish({ statusCode: status, responseBody: text || null, error: redirect });
        });
        response.on('error', (err) => finish({ statusCode: response.statusCode ?? null, responseBody: null, error: formatMessage(WEBHOOK_ATTEMPT_ERRORS.connection, { code: 'response', reason: err.message }).slice(0, 300) }));
      });
      request.end(body);
    });
  }
}
