import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensurePrivate, openLoginStore, type StoredLogin } from '../src/config/store.js';

const login: StoredLogin = { token: 'tok_secret', account: { email: 'owner@acme.test', name: 'Ada Owner' }, base_url: 'http://127.0.0.1:9', logged_in_at: '2026-01-01T00:00:00.000Z' };
const mode = (file: string) => fs.statSync(file).mode & 0o777;
const posix = process.platform !== 'win32';

describe.runIf(posix)('login store permissions', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-store-'));
    env = { REFTRACK_CONFIG_DIR: path.join(dir, 'config') };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes the token to a file in REFTRACK_CONFIG_DIR that only the owner can read (0600)', async () => {
    const store = await openLoginStore(env);
    expect(path.dirname(store.path)).toBe(env.REFTRACK_CONFIG_DIR);
    store.set(login);
    expect(mode(store.path)).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(store.path, 'utf8')).login.token).toBe('tok_secret');
    expect((await openLoginStore(env)).get()).toEqual(login);
  });

  it('creates a missing config folder readable by the owner only', async () => {
    await openLoginStore(env);
    expect(mode(env.REFTRACK_CONFIG_DIR!)).toBe(0o700);
  });

  it('tightens a file that someone made world-readable, on open and on write', async () => {
    const store = await openLoginStore(env);
    store.set(login);
    fs.chmodSync(store.path, 0o644);
    await openLoginStore(env);
    expect(mode(store.path)).toBe(0o600);
    fs.chmodSync(store.path, 0o666);
    store.set({ ...login, token: 'tok_2' });
    expect(mode(store.path)).toBe(0o600);
  });

  it('ensurePrivate chmods an existing file and leaves a missing one alone', () => {
    const file = path.join(dir, 'f.json');
    fs.writeFileSync(file, '{}', { mode: 0o640 });
    ensurePrivate(file);
    expect(mode(file)).toBe(0o600);
    expect(() => ensurePrivate(path.join(dir, 'missing.json'))).not.toThrow();
  });

  it('clear removes the token and reports whether there was one', async () => {
    const store = await openLoginStore(env);
    store.set(login);
    expect(store.clear()).toBe(true);
    expect(store.get()).toBeNull();
    expect(store.clear()).toBe(false);
    expect(fs.readFileSync(store.path, 'utf8')).not.toContain('tok_secret');
  });

  it('treats a broken or foreign file as no login instead of failing', async () => {
    fs.mkdirSync(env.REFTRACK_CONFIG_DIR!, { recursive: true });
    const file = path.join(env.REFTRACK_CONFIG_DIR!, 'config.json');
    fs.writeFileSync(file, '{not json', { mode: 0o600 });
    expect((await openLoginStore(env)).get()).toBeNull();
    fs.writeFileSync(file, JSON.stringify({ login: { token: 5 } }), { mode: 0o600 });
    expect((await openLoginStore(env)).get()).toBeNull();
  });
});
