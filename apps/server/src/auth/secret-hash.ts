import { createHash, timingSafeEqual } from 'node:crypto';
import { LIMITS } from '@reftrack/contract';

/** Every secret the server issues is stored only as this SHA-256 hex digest. */
export const sha256Hex = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');

export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

export const maskKey = (last4: string | null | undefined): string | null =>
  last4 ? '•'.repeat(8) + last4.slice(-LIMITS.maskedKeyVisibleChars) : null;
