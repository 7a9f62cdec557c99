/**
 * Whether the development identity provider may run (docs/security.md, "Sign-in"). It signs in
 * anyone as any e-mail — owners included — so on a server that other people can reach (NODE_ENV
 * production, bound beyond loopback, or an https public address: `config.exposedBecause`) it is
 * refused unless OIDC is configured, or the operator opts in with ALLOW_DEV_SIGN_IN=true, which is
 * logged at error level at every start.
 */
import { ConfigError, type Config } from '../config.js';
import type { Logger } from '../logger.js';

type SignInConfig = Pick<Config, 'oidcIssuer' | 'exposedBecause' | 'allowDevSignIn'>;

/** Why the development sign-in is refused under `config`, or undefined when it may run. */
export function devSignInRefusal(config: SignInConfig): string | undefined {
  if (config.oidcIssuer || config.exposedBecause.length === 0 || config.allowDevSignIn) return undefined;
  return (
    `refusing to start: the development sign-in (anyone can sign in as any e-mail) must not run on an exposed server ` +
    `(${config.exposedBecause.join('; ')}). Set OIDC_ISSUER and OIDC_CLIENT_ID for your identity provider, ` +
    `or set ALLOW_DEV_SIGN_IN=true to accept that risk.`
  );
}

/** At start: throws the one-line refusal, or warns of the development sign-in (loudly when exposed). */
export function checkSignInPolicy(config: SignInConfig, logger: Logger): void {
  const refusal = devSignInRefusal(config);
  if (refusal) throw new ConfigError(refusal);
  if (config.oidcIssuer) return;
  if (config.exposedBecause.length > 0) {
    logger.error(
      { exposedBecause: config.exposedBecause },
      'ALLOW_DEV_SIGN_IN=true: the development identity provider is active on an exposed server; anyone who reaches it can sign in as any e-mail, workspace owners included',
    );
  } else {
    logger.warn('OIDC_ISSUER is not set: the development identity provider is active (anyone can sign in with any e-mail)');
  }
}
