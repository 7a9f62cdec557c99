/**
 * `reftrack-server oidc check`: fetches OIDC_ISSUER's discovery document and says what is wrong
 * with the configuration, and what to register at the provider. Problems make the command fail.
 */
import { SIGN_IN_PATHS } from '@reftrack/contract';
import type { Config } from '../config.js';
import { OIDC_SCOPES } from '../auth/oidc-client.js';

export interface OidcCheckReport {
  problems: string[];
  notes: string[];
  register: string[];
}

export async function checkOidc(config: Config, fetchImpl: typeof fetch = fetch): Promise<OidcCheckReport> {
  const problems: string[] = [];
  const notes: string[] = [];
  const register = [
    `redirect URI (sign-in callback): ${config.publicBaseUrl}${SIGN_IN_PATHS.callback}`,
    `post-logout redirect URI: ${config.publicBaseUrl}${SIGN_IN_PATHS.signedOut}`,
    'grant type: authorization_code (response type "code"), PKCE with S256',
    `scopes: ${OIDC_SCOPES}; claims in the id_token: sub, email, email_verified, name`,
    config.oidcClientSecret ? 'client authentication: client_secret_basic (a confidential client)' : 'client authentication: none (a public client: PKCE only)',
  ];
  if (!config.oidcIssuer) return { problems: ['OIDC_ISSUER is not set: the development identity provider is active'], notes, register };
  if (!config.oidcClientId) problems.push('OIDC_CLIENT_ID (or OIDC_AUDIENCE) is not set');
  if (!process.env.OIDC_CLIENT_ID && process.env.OIDC_AUDIENCE) notes.push('OIDC_AUDIENCE is used as the client id; set OIDC_CLIENT_ID to say so explicitly');
  const url = `${config.oidcIssuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let doc: Record<string, unknown>;
  try {
    const res = await fetchImpl(url, { signal: AbortSignal.timeout(5000), headers: { accept: 'application/json' } });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    doc = (await res.json()) as Record<string, unknown>;
  } catch (err) {
    problems.push(`cannot fetch ${url}: ${(err as Error).message}${(err as { cause?: { code?: string } }).cause?.code ? ` (${(err as { cause: { code: string } }).cause.code})` : ''}`);
    return { problems, notes, register };
  }
  if (doc.issuer !== config.oidcIssuer) problems.push(`issuer mismatch: the provider says "${String(doc.issuer)}", OIDC_ISSUER is "${config.oidcIssuer}" (they must be equal, a trailing slash included)`);
  for (const key of ['authorization_endpoint', 'token_endpoint', 'jwks_uri']) if (typeof doc[key] !== 'string') problems.push(`the discovery document has no ${key}`);
  const list = (key: string) => (Array.isArray(doc[key]) ? (doc[key] as unknown[]).map(String) : undefined);
  if (list('response_types_supported') && !list('response_types_supported')!.includes('code')) problems.push('the provider does not offer response type "code"');
  const pkce = list('code_challenge_methods_supported');
  if (!pkce) notes.push('the provider does not list code_challenge_methods_supported; PKCE (S256) is sent anyway');
  else if (!pkce.includes('S256')) problems.push('the provider does not support PKCE with S256');
  const scopes = list('scopes_supported');
  if (scopes && !scopes.includes('email')) problems.push('the provider does not list the "email" scope: first sign-ins need the email and email_verified claims');
  const auth = list('token_endpoint_auth_methods_supported') ?? ['client_secret_basic'];
  if (config.oidcClientSecret && !auth.includes('client_secret_basic')) problems.push(`the provider does not accept client_secret_basic (it lists ${auth.join(', ')})`);
  if (!config.oidcClientSecret && !auth.includes('none')) notes.push('the provider does not list "none" for token_endpoint_auth_methods_supported: a public client may be refused; set OIDC_CLIENT_SECRET');
  if (typeof doc.end_session_endpoint !== 'string') notes.push('no end_session_endpoint: signing out of the dashboard does not sign out of the provider');
  return { problems, notes, register };
}
