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

/** Milliseconds since the epoch in base62, 7 characters (enough until the year 5400): sorts as time does. */
function timeBase62(ms: number): string {
  let out = '';
  for (let i = 0; i < 7; i++) {
    out = ALPHABET[ms % 62] + out;
    ms = Math.floor(ms / 62);
  }
  return out;
}

/**
 * `clk_`, the time in base62, then the random part (design: at least 20 random characters). The
 * time prefix makes new ids land at the end of the unique indexes on click ids instead of on a
 * random page of them: each batch of clicks then rewrites a few index pages rather than one per
 * click, on SQLite and PostgreSQL alike. The time of a click is no secret (the event stores it).
 */
export const newClickId = (now: number = Date.now()): string => BRAND.clickIdPrefix + timeBase62(now) + randomBase62(LIMITS.clickIdRandomLength);
export const newProgramKey = (): string => BRAND.programKeyPrefix + randomBase62(LIMITS.programKeyRandomLength);
export const newAgentKey = (): string => BRAND.agentKeyPrefix + randomBase62(LIMITS.programKeyRandomLength);
/** A processor connection's intake address id: unguessable, so that only Stripe and the program's members know where to send. */
export const newWebhookEndpointId = (): string => BRAND.webhookEndpointPrefix + randomBase62(LIMITS.webhookEndpointIdRandomLength);
/**
 * An outbox event's id (`evt_`, the time in base62, 17 random characters). Time-first for the
 * same reason as click ids: each new row lands at the end of the event-id index instead of on a
 * random page of it, which measured a third of an event insert's cost on SQLite.
 */
export const newEventId = (now: number = Date.now()): string => 'evt_' + timeBase62(now) + randomBase62(17);
