/**
 * Security headers of every HTML page the server sends (the dashboard, the development sign-in
 * page, the CLI login pages, the error reference) through helmet, a maintained header middleware,
 * rather than hand-set headers (docs/security.md, "Pages"): a content security policy that names
 * exactly what each page loads, `frame-ancestors 'none'` and `X-Frame-Options: DENY` (no page may
 * be framed: the key page has a destructive button, and sign-in pages invite clickjacking),
 * `nosniff`, no referrer, and HSTS when the public address is HTTPS.
 *
 * Pages with inline `<script>` or `<style>` blocks allow exactly those blocks by their SHA-256
 * (`inlineHash`), never `'unsafe-inline'`. The JSON API answers do not get these headers: they are
 * not rendered by browsers, and the tracking routes are the hot path.
 */
import { createHash } from 'node:crypto';
import type { Middleware } from 'koa';
import helmet from 'koa-helmet';

/** The CSP source that allows one inline block with exactly this text. */
export function inlineHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

export interface PagePolicy {
  /** script-src sources; none: no script runs. */
  scripts?: string[];
  /** style-src sources; none: no style sheet. */
  styles?: string[];
  /** img-src sources (default `'self' data:`). */
  images?: string[];
  /** HTTPS public address: send HSTS. */
  https: boolean;
}

export function pageHeaders(policy: PagePolicy): Middleware {
  const sources = (list: string[] | undefined) => (list && list.length > 0 ? list : ["'none'"]);
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: sources(policy.scripts),
        styleSrc: sources(policy.styles),
        imgSrc: policy.images ?? ["'self'", 'data:'],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        manifestSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: policy.https ? { maxAge: 31_536_000, includeSubDomains: false } : false,
  });
}
