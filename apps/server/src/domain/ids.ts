import { randomBytes } from 'node:crypto';
import { BRAND, LIMITS } from '@reftrack/contract';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 from a CSPRNG: bytes ≥ 248 are dropped so that `% 62` has no bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const newClickId = (): string => BRAND.clickIdPrefix + randomBase62(LIMITS.clickIdRandomLength);
export const newProgramKey = (): string => BRAND.programKeyPrefix + randomBase62(LIMITS.programKeyRandomLength);
export const newAgentKey = (): string => BRAND.agentKeyPrefix + randomBase62(LIMITS.programKeyRandomLength);
