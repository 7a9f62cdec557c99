/**
 * Sign-in with an OpenID provider (docs/accounts.md): the server's browser paths, the sign-in
 * options the dashboard reads, and the texts of the plain HTML pages a browser sees when a sign-in
 * is refused or a CLI login is confirmed. Each refusal names what to try; the page adds the request
 * id that the operator finds in the server log next to the reason.
 */
import { BRAND } from './brand.js';

export const SIGN_IN_PATHS = {
  /** GET, `?return_to=` a dashboard path: starts the authorization code flow (the development sign-in page without OIDC). */
  start: '/auth/oidc/start',
  /** GET: the redirect URI to register at the provider. */
  callback: '/auth/oidc/callback',
  /** GET: where the provider's end-session endpoint sends the browser back (register as post-logout redirect URI). */
  signedOut: '/signed-out',
  /** GET `?state=`: the CLI login's confirmation page; POST (form, `state`): continue to the provider. */
  cliLogin: '/cli/login',
  /** GET: what the dashboard's sign-in page offers. */
  options: '/api/dashboard/sign-in-options',
} as const;

/** GET /api/dashboard/sign-in-options */
export interface SignInOptions {
  mode: 'oidc' | 'development';
  /** What the button says after "Sign in with": OIDC_PROVIDER_NAME, else the issuer's host name. */
  provider_name: string | null;
  /** The address the "Sign in with …" button opens (add `?return_to=`). */
  start_url: string;
}

/** DELETE /api/dashboard/session: `end_session_url` is set when the provider offers an end-session endpoint. */
export interface SignedOut {
  signed_out: true;
  end_session_url?: string;
}

/** Why a browser sign-in was refused: logged as `reason`, and the page the browser sees. */
export type SignInRefusalReason =
  | 'state_mismatch'
  | 'flow_expired'
  | 'provider_error'
  | 'provider_unreachable'
  | 'token_exchange'
  | 'id_token_invalid'
  | 'issuer'
  | 'audience'
  | 'expired'
  | 'nonce'
  | 'replayed'
  | 'email_unverified'
  | 'no_email'
  | 'identity_conflict'
  | 'account_blocked'
  | 'cli_session'
  | 'cross_site'
  | 'internal';

export interface SignInPageText {
  title: string;
  message: string;
  /** What the person can try. */
  tryThis: string;
}

const again = 'Start the sign-in again from the beginning.';

export const SIGN_IN_REFUSALS: Record<SignInRefusalReason, SignInPageText> = {
  state_mismatch: { title: 'This sign-in could not be matched to your browser', message: 'The answer from the identity provider belongs to a sign-in this browser did not start (its state does not match), or the sign-in was already finished.', tryThis: `${again} Use one browser tab, and do not open sign-in links that someone else sent you.` },
  flow_expired: { title: 'This sign-in took too long', message: 'The sign-in started more than 10 minutes ago, or this browser does not keep cookies for this site.', tryThis: `${again} Allow cookies for this site if your browser blocks them.` },
  provider_error: { title: 'The identity provider refused the sign-in', message: 'The identity provider answered with an error instead of signing you in.', tryThis: 'Check that your account at the identity provider may use this application, then start again. The operator can find the provider\'s error in the server log.' },
  provider_unreachable: { title: 'The identity provider cannot be reached', message: `${BRAND.name} could not reach your identity provider, or its configuration does not match the server's.`, tryThis: 'Try again in a few minutes. If it keeps failing, send the request id below to the operator: `reftrack-server oidc check` shows what is wrong.' },
  token_exchange: { title: 'The sign-in could not be completed', message: 'The identity provider did not accept the sign-in code it had just issued (it may have been used already, or the client settings differ).', tryThis: `${again} If it keeps failing, send the request id below to the operator.` },
  id_token_invalid: { title: 'Your identity could not be verified', message: 'The identity provider\'s answer did not verify (its signature, issuer, audience or lifetime is wrong).', tryThis: 'Check that this computer\'s clock is right, then start again; otherwise send the request id below to the operator.' },
  issuer: { title: 'Your identity could not be verified', message: 'The identity provider signed your identity under another issuer name than the server expects.', tryThis: 'Send the request id below to the operator: OIDC_ISSUER must equal the provider\'s issuer exactly (a trailing slash counts).' },
  audience: { title: 'Your identity could not be verified', message: 'The identity provider issued your identity for another application.', tryThis: 'Send the request id below to the operator: OIDC_CLIENT_ID (or OIDC_AUDIENCE) must be this application\'s client id at the provider.' },
  expired: { title: 'Your sign-in expired', message: 'The identity the provider issued has expired.', tryThis: `${again} If it keeps happening, check this computer's clock.` },
  nonce: { title: 'This sign-in could not be matched', message: 'The identity the provider returned was issued for another sign-in (its nonce does not match).', tryThis: again },
  replayed: { title: 'This sign-in was already used', message: 'The identity the provider returned has already been used to sign in once.', tryThis: again },
  email_unverified: { title: 'Your e-mail address is not verified', message: 'Your identity provider does not confirm that you own this e-mail address, so it cannot be matched to an account or an invitation.', tryThis: 'Verify your e-mail address at your identity provider, then sign in again.' },
  no_email: { title: 'Your identity provider sent no e-mail address', message: 'A first sign-in needs an e-mail address from your identity provider.', tryThis: 'Ask the operator to request the "email" scope, or add an e-mail address to your account at the provider.' },
  identity_conflict: { title: 'This e-mail address is already taken', message: 'An account with this e-mail address is bound to another identity at your provider.', tryThis: 'Sign in with the identity that account was created with, or ask the operator.' },
  account_blocked: { title: 'Your account has been suspended', message: 'Your account has been suspended.', tryThis: 'Ask the operator of this server.' },
  cli_session: { title: 'This CLI login cannot be completed', message: 'The CLI login session is unknown, already used, or expired (it lasts 5 minutes).', tryThis: `Run \`${BRAND.cli} login\` again and finish within 5 minutes.` },
  cross_site: { title: 'Request refused', message: 'This confirmation was not sent from this site\'s own page.', tryThis: 'Open the login link again and confirm on that page.' },
  internal: { title: 'Sign-in failed', message: 'Something went wrong on the server.', tryThis: 'Try again; if it keeps failing, send the request id below to the operator.' },
};

/** The CLI login's confirmation page (the browser leg of `reftrack login`). */
export const CLI_LOGIN_CONFIRM = {
  title: `Sign in to the ${BRAND.name} CLI`,
  lead: 'A command line on the device below is asking to sign in as you. It receives a login token for your account.',
  pairing: 'Continue only if this code is the one your terminal shows:',
  warning: 'If you did not just run the login command yourself, or the code differs, close this page: someone may be trying to get a token for your account.',
  continueButton: 'Continue',
  done: 'Signed in. You can return to your terminal.',
} as const;
