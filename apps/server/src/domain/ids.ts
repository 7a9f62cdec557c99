import { randomBytes } from 'node:crypto';
import { BRAND, LIMITS } from '@reftrack/contract';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn from the CSPRNG in blocks: a system call per id was a measurable share
// of the click route's time on this machine kind.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function nextByte(): number {
  if (offset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++];
}

/** Uniform base62 from a CSPRNG: bytes ≥ 248 are dropped so that `% 62` has no bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextByte();
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

export const newClickId = (): string => BRAND.clickIdPrefix + randomBase62(LIMITS.clickIdRandomLength);
export const newProgramKey = (): string => BRAND.programKeyPrefix + randomBase62(LIMITS.programKeyRandomLength);
export const newAgentKey = (): string => BRAND.agentKeyPrefix + randomBase62(LIMITS.programKeyRandomLength);
