/**
 * Encryption of stored secrets that the server must read back in plain text (a processor's webhook
 * signing secret; later outbound signing secrets and payout details). Secrets that are only
 * compared are hashed instead (auth/secret-hash.ts).
 *
 * AES-256-GCM from node:crypto, a random 96-bit IV per value, and a versioned text format that
 * names the key it was sealed with, so that a rotation can decrypt old values with the previous key
 * while new ones are sealed with the current key:
 *
 *   v1:<key id, 12 hex>:<IV, base64url>:<ciphertext and 16-byte tag, base64url>
 *
 * The key id is a fingerprint of the key (not the key): SHA-256 over a label and the key, first 12
 * hex characters. Each value is bound to its purpose (GCM's associated data, e.g. the column it is
 * stored in), so a ciphertext copied into another column does not decrypt there.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
export const KEY_ID_LENGTH = 12;
/** `v1:` + key id + `:`: the part of a sealed value that names its key. */
export const SEALED_HEAD_LENGTH = FORMAT.length + 1 + KEY_ID_LENGTH + 1;

export interface EncryptionKey {
  id: string;
  bytes: Buffer;
}

/** A key given in the environment or a key file is not 32 bytes of base64 or hex. */
export class KeyFormatError extends Error {}

/** A sealed value that cannot be opened: unknown key, wrong purpose, or altered. Never carries the value. */
export class SecretBoxError extends Error {}

export function keyIdOf(bytes: Buffer): string {
  return createHash('sha256').update('reftrack secret-box key id\0').update(bytes).digest('hex').slice(0, KEY_ID_LENGTH);
}

/**
 * 32 bytes given as 64 hex characters or as base64 (standard or URL-safe, padding optional), as
 * `openssl rand -base64 32` prints. `source` names where the key came from, for the error; the
 * key itself is never part of a message.
 */
export function parseEncryptionKey(text: string, source: string): EncryptionKey {
  const t = text.trim();
  let bytes: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(t)) bytes = Buffer.from(t, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) bytes = Buffer.from(t, 'base64');
  if (!bytes || bytes.length !== KEY_BYTES) {
    throw new KeyFormatError(`${source} must be 32 bytes given as base64 (44 characters) or hex (64 characters); generate one with: openssl rand -base64 32`);
  }
  return { id: keyIdOf(bytes), bytes };
}

/** The key id a sealed value names, or undefined when it is not in a known format. */
export function sealedKeyId(sealed: string): string | undefined {
  const m = /^v1:([0-9a-f]{12}):/.exec(sealed);
  return m ? m[1] : undefined;
}

export class SecretBox {
  private readonly keys = new Map<string, Buffer>();

  /** `previous`: keys still accepted for opening values during a rotation. */
  constructor(
    private readonly current: EncryptionKey,
    previous: EncryptionKey[] = [],
  ) {
    for (const key of previous) this.keys.set(key.id, key.bytes);
    this.keys.set(current.id, current.bytes);
  }

  /** The current key's id: new values are sealed with it. */
  get keyId(): string {
    return this.current.id;
  }

  /** The prefix of every value sealed with the current key. */
  get currentHead(): string {
    return `${FORMAT}:${this.current.id}:`;
  }

  knows(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  seal(plaintext: string, purpose: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.bytes, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${this.currentHead}${iv.toString('base64url')}:${body.toString('base64url')}`;
  }

  open(sealed: string, purpose: string): string {
    const parts = sealed.split(':');
    if (parts.length !== 4 || parts[0] !== FORMAT) throw new SecretBoxError('stored secret is not in a known format');
    const [, keyId, ivText, bodyText] = parts;
    const key = this.keys.get(keyId);
    if (!key) throw new SecretBoxError(`stored secret was encrypted with key id ${keyId}, which is neither ENCRYPTION_KEY nor in ENCRYPTION_KEY_PREVIOUS`);
    const iv = Buffer.from(ivText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new SecretBoxError('stored secret is truncated');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(purpose, 'utf8'));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      // GCM's tag check failed: altered, or sealed for another purpose.
      throw new SecretBoxError(`stored secret (key id ${keyId}) does not decrypt: altered or stored in the wrong place`);
    }
  }
}
