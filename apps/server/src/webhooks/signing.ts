/**
 * Signing secrets and signatures (Standard Webhooks, through its maintained implementation, the
 * `standardwebhooks` package): `whsec_` and 32 random bytes in base64. During a rotation the
 * previous secret signs too: the `webhook-signature` header then carries both signatures,
 * space-separated, and a receiver holding either secret verifies.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_HEADERS } from '@reftrack/contract';
import type { SecretBox } from '../secrets/secret-box.js';

/** Where the sealed secrets live (secrets/stored-secrets.ts rotates and checks them). */
export const WEBHOOK_SECRETS_COLUMN = { table: 'webhook_endpoints', column: 'secrets_sealed', purpose: 'webhook_endpoints.secrets_sealed' } as const;

export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export interface EndpointSecrets {
  current: string;
  /** The secret rotated out, signing alongside until the endpoint's previous_secret_expires_at. */
  previous: string | null;
}

export const sealSecrets = (box: SecretBox, secrets: EndpointSecrets): string => box.seal(JSON.stringify(secrets), WEBHOOK_SECRETS_COLUMN.purpose);
export const openSecrets = (box: SecretBox, sealed: string): EndpointSecrets => JSON.parse(box.open(sealed, WEBHOOK_SECRETS_COLUMN.purpose)) as EndpointSecrets;

/** The three Standard Webhooks headers of one attempt, signed with every secret given. */
export function signedHeaders(messageId: string, at: Date, body: string, secrets: readonly string[]): Record<string, string> {
  const signature = secrets.map((s) => new Webhook(s).sign(messageId, at, body)).join(' ');
  return {
    [WEBHOOK_HEADERS.id]: messageId,
    [WEBHOOK_HEADERS.timestamp]: String(Math.floor(at.getTime() / 1000)),
    [WEBHOOK_HEADERS.signature]: signature,
  };
}
