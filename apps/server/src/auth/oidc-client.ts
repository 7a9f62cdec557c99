/**
 * The server as an OpenID Connect relying party (docs/accounts.md), through `openid-client` (a
 * certified relying-party library) rather than hand-written OAuth: discovery of OIDC_ISSUER (its
 * `issuer` must equal OIDC_ISSUER, as OIDC Discovery 4.3 requires), the authorization URL of the
 * code flow with PKCE (S256), state and nonce, the code exchange, and the end-session URL.
 * Discovery is fetched on first use and kept for the life of the process; a failure is not kept,
 * so a provider that was down is tried again by the next sign-in.
 */
import * as oidc from 'openid-client';
import type { Config } from '../config.js';
import { isLoopbackHost } from '../config.js';
import { SIGN_IN_PATHS } from '@reftrack/contract';

export const OIDC_SCOPES = 'openid email profile';
const DISCOVERY_TIMEOUT_MS = 5000;

/** A refused step of the flow with the reason the log and the browser page name. */
export class OidcFlowError extends Error {
  constructor(
    readonly reason: 'provider_unreachable' | 'provider_error' | 'token_exchange' | 'state_mismatch',
    readonly detail: string,
  ) {
    super(detail);
  }
}

export interface OidcClient {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly postLogoutRedirectUri: string;
  configuration(): Promise<oidc.Configuration>;
}

/** Why discovery failed, in words an operator can act on. */
export function discoveryProblem(err: unknown, issuer: string): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string; body?: { issuer?: string } } & Record<string, unknown> };
  if (e?.code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') {
    const said = (e.cause as { body?: { issuer?: string } } | undefined)?.body?.issuer;
    return `the provider's discovery document names issuer "${said}", but OIDC_ISSUER is "${issuer}" (they must be equal, a trailing slash included)`;
  }
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `discovery of ${issuer} failed: ${e?.message ?? String(err)}${cause ? ` (${cause})` : ''}`;
}

export function createOidcClient(config: Config): OidcClient | undefined {
  const issuer = config.oidcIssuer;
  const clientId = config.oidcClientId;
  if (!issuer || !clientId) return undefined;
  let pending: Promise<oidc.Configuration> | undefined;
  // http is accepted only for a provider on this machine (config.ts refuses any other http issuer).
  const insecure = new URL(issuer).protocol === 'http:' && isLoopbackHost(new URL(issuer).hostname);
  const discover = async (): Promise<oidc.Configuration> => {
    // A confidential client authenticates with its secret (client_secret_basic, what every provider
    // accepts); a public client sends none and relies on PKCE.
    const auth = config.oidcClientSecret ? oidc.ClientSecretBasic(config.oidcClientSecret) : oidc.None();
    try {
      return await oidc.discovery(new URL(issuer), clientId, config.oidcClientSecret ? { client_secret: config.oidcClientSecret } : {}, auth, {
        timeout: DISCOVERY_TIMEOUT_MS / 1000,
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      });
    } catch (err) {
      throw new OidcFlowError('provider_unreachable', discoveryProblem(err, issuer));
    }
  };
  return {
    clientId,
    redirectUri: `${config.publicBaseUrl}${SIGN_IN_PATHS.callback}`,
    postLogoutRedirectUri: `${config.publicBaseUrl}${SIGN_IN_PATHS.signedOut}`,
    configuration() {
      pending ??= discover().catch((err: unknown) => {
        pending = undefined;
        throw err;
      });
      return pending;
    },
  };
}
