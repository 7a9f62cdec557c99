/**
 * Where the secret box's keys come from (docs/operator.md, "Secrets at rest"):
 *
 * - `ENCRYPTION_KEY` (32 bytes, base64 or hex) encrypts; `ENCRYPTION_KEY_PREVIOUS` (comma-separated)
 *   still decrypts during a rotation.
 * - Without `ENCRYPTION_KEY`, an exposed set-up (config.exposedBecause) refuses to start: a key
 *   the operator did not choose would sit next to the data it protects, and be lost with a
 *   container's file system.
 * - In local development a key file is made once (mode 0600) beside the SQLite database, or under
 *   ./.reftrack/ for PostgreSQL, so that `pnpm demo` works on a fresh machine; the caller warns.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, type Config, type DatabaseConfig } from '../config.js';
import { KeyFormatError, parseEncryptionKey, SecretBox, type EncryptionKey } from './secret-box.js';

export interface OpenedSecretBox {
  box: SecretBox;
  /** Set when the development key file is in use (the caller logs a warning naming it). */
  devKeyFile?: string;
}

/** The development key file of a database. */
export function devKeyFile(database: DatabaseConfig, cwd: string = process.cwd()): string {
  return database.client === 'sqlite' ? `${database.filename}.encryption-key` : path.join(cwd, '.reftrack', 'postgres.encryption-key');
}

function parse(text: string, source: string): EncryptionKey {
  try {
    return parseEncryptionKey(text, source);
  } catch (err) {
    if (err instanceof KeyFormatError) throw new ConfigError(err.message);
    throw err;
  }
}

/**
 * Reads the key file, or creates it with a fresh random key. Written to a private temporary file
 * and hard-linked into place, so that of two processes starting at once both use the one that won.
 */
function readOrCreateKeyFile(file: string): EncryptionKey {
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    fs.writeFileSync(temporary, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    try {
      fs.linkSync(temporary, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.rmSync(temporary, { force: true });
    }
  }
  return parse(fs.readFileSync(file, 'utf8'), `The development key file ${file}`);
}

export function openSecretBox(config: Config, cwd: string = process.cwd()): OpenedSecretBox {
  const previous = config.encryptionKeyPrevious.map((k, i) => parse(k, `ENCRYPTION_KEY_PREVIOUS (key ${i + 1})`));
  if (config.encryptionKey) return { box: new SecretBox(parse(config.encryptionKey, 'ENCRYPTION_KEY'), previous) };
  if (config.exposedBecause.length > 0) {
    throw new ConfigError(
      `ENCRYPTION_KEY is required because this server is exposed (${config.exposedBecause.join('; ')}): set it to 32 random bytes, e.g. the output of openssl rand -base64 32`,
    );
  }
  const file = devKeyFile(config.database, cwd);
  return { box: new SecretBox(readOrCreateKeyFile(file), previous), devKeyFile: file };
}
