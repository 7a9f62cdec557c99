/**
 * Hostile input on every public route: at least 10,000 generated cases from a fixed seed. Nothing
 * answers 5xx, the process never crashes, every refusal is in the right envelope, and refused
 * requests leave the database unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, query, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';
import { rawRequest, requestHead, type RawResponse } from './helpers/raw-http.js';

const CASES = 10_000;
const SEED = 20261122;

describe.each(['sqlite', 'postgres'] as const)(`[%s] hostile input on every public route`, (kind) => {
  let db: Database;
  let server: ServerProcess;
  const { fixture } = programsFixture(1);

  beforeAll(async () => {
    db = await freshDatabase(kind);
    const env = { DATABASE_URL: db.url, TRUST_PROXY: '1', LOG_LEVEL: 'warn' };
    await seed(env, fixture);
    server = await spawnServer(env);
  });
  afterAll(async () => {
    await server?.kill();
    await db?.drop();
  });

  /** mulberry32: a small seeded PRNG, so every run sends the same cases. */
  function prng(seed: number) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  const ROUTES: Array<[string, string]> = [
    ['POST', '/api/v1/track/click'],
    ['POST', '/api/v1/track/lead'],
    ['POST', '/api/v1/track/sale'],
    ['POST', '/api/v1/track/refund'],
    ['GET', '/api/v1/programs/me/readiness'],
    ['POST', '/api/v1/cli/auth/start'],
    ['POST', '/api/v1/cli/auth/callback'],
    ['GET', '/api/v1/cli/auth/poll?state=x'],
    ['POST', '/api/v1/cli/init'],
    ['GET', '/api/v1/cli/programs'],
    ['GET', '/api/v1/cli/status'],
    ['POST', '/api/v1/cli/test-event'],
    ['POST', '/api/v1/cli/stripe-connect'],
    ['POST', '/api/dashboard/session'],
    ['GET', '/api/dashboard/programs'],
    ['PATCH', '/api/dashboard/programs/1'],
    ['GET', '/api/tracking/events/1'],
    ['GET', '/api/agent/v1/programs'],
    ['PATCH', '/api/agent/v1/programs/1'],
    ['POST', '/dev-idp/token'],
    ['POST', '/api/v1/webhooks/stripe'],
    ['POST', '/api/v1/webhooks/stripe/whe_0000000000000000000000000000hostile'],
  ];

  const NASTY_STRINGS = [
    "' OR 1=1 --",
    "'; DROP TABLE sale_events; --",
    '<script>alert(1)</script>',
    '\u0000',
    'a\u0000b',
    '\uD800',
    '𝕽𝖊𝖋𝖙𝖗𝖆𝖈𝖐',
    '../../etc/passwd',
    '%00%ff',
    '${7*7}',
    '{{constructor.constructor("return process")()}}',
    '__proto__',
    'https://evil.test/?aff=nobody',
    'https://rel.test/?aff=%00',
    'https://rel.test/?aff=' + 'x'.repeat(5000),
    'clk_' + 'A'.repeat(300),
    'aff_' + 'Z'.repeat(60),
    '9'.repeat(400),
    '-1',
    'NaN',
    '',
    ' ',
  ];

  function pick<T>(rand: () => number, items: readonly T[]): T {
    return items[Math.floor(rand() * items.length)];
  }

  function value(rand: () => number, depth = 0): unknown {
    const r = rand();
    if (r < 0.25) return pick(rand, NASTY_STRINGS);
    if (r < 0.35) return Math.floor(rand() * 2 ** 53) * (rand() < 0.5 ? -1 : 1);
    if (r < 0.4) return rand() * 1e308;
    if (r < 0.45) return pick(rand, [true, false, null]);
    if (r < 0.5) return 'x'.repeat(Math.floor(rand() * 70_000));
    if (r < 0.6 && depth < 4) return Array.from({ length: Math.floor(rand() * 4) }, () => value(rand, depth + 1));
    if (r < 0.75 && depth < 4) return body(rand, depth + 1);
    return pick(rand, NASTY_STRINGS);
  }

  const FIELDS = ['affiliate_url', 'click_id', 'customer_key', 'transaction_id', 'amount_cents', 'currency', 'occurred_at', 'provider', 'provider_payment_id', 'livemode', 'reason', 'additional_data', 'existing_click_id', 'name', 'domain', 'commission_type', 'commission_rate', 'state', 'id_token', 'event_type', 'type', 'email', 'lead_auth', 'attribution_window_days', '__proto__', 'constructor'];

  function body(rand: () => number, depth = 0): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const n = Math.floor(rand() * 6);
    for (let i = 0; i < n; i++) out[pick(rand, FIELDS)] = value(rand, depth);
    return out;
  }

  /** Percent-encodes, dropping lone surrogates (which no URL can carry). */
  const enc = (s: string): string => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, ''));

  function deepNesting(levels: number): string {
    return '['.repeat(levels) + ']'.repeat(levels);
  }

  interface Case {
    method: string;
    path: string;
    headers: Record<string, string>;
    payload: Buffer;
  }

  function makeCase(rand: () => number, i: number): Case {
    const [method, path] = pick(rand, ROUTES);
    const headers: Record<string, string> = { 'X-Forwarded-For': `10.${i >> 16 & 255}.${i >> 8 & 255}.${i & 255}` };
    let payload: Buffer;
    const shape = rand();
    if (shape < 0.3) payload = Buffer.from(JSON.stringify(body(rand)));
    else if (shape < 0.4) payload = Buffer.from(JSON.stringify(body(rand)).slice(0, Math.floor(rand() * 20)));
    else if (shape < 0.45) payload = Buffer.from(deepNesting(1000 + Math.floor(rand() * 100_000)).slice(0, 200_000));
    else if (shape < 0.5) payload = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]);
    else if (shape < 0.55) payload = Buffer.from(`{"affiliate_url":"${'a'.repeat(1_000_000)}"}`);
    else if (shape < 0.6) payload = Buffer.from('{"a":"\\u0000","transaction_id":"x\\u0000"}');
    else if (shape < 0.65) payload = Buffer.from([0, 1, 2, 3, 0xff]);
    else if (shape < 0.7) payload = Buffer.from(JSON.stringify(pick(rand, NASTY_STRINGS)));
    else payload = Buffer.from(JSON.stringify(body(rand)));
    const auth = rand();
    if (auth < 0.2) headers.Authorization = 'Bearer ' + 'k'.repeat(10_240);
    else if (auth < 0.3) headers.Authorization = 'Bearer aff_\u00e9\u00e8\u00ff\u00fe';
    else if (auth < 0.4) headers.Authorization = 'Bearer ' + pick(rand, NASTY_STRINGS).replace(/[\r\n\u0000-\u001f]/g, '');
    else if (auth < 0.45) headers.Authorization = 'Basic ' + 'x'.repeat(100);
    else if (auth < 0.5) headers.Cookie = 'reftrack_session=' + 'A'.repeat(500);
    if (rand() < 0.05) headers['X-Oversized'] = 'h'.repeat(20_000);
    if (rand() < 0.5) headers['Content-Type'] = pick(rand, ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']);
    let finalPath = path;
    if (rand() < 0.1) finalPath = path.replace(/\/1$/, '/' + enc(pick(rand, NASTY_STRINGS)));
    if (rand() < 0.1) finalPath += (finalPath.includes('?') ? '&' : '?') + 'page=' + enc(pick(rand, NASTY_STRINGS)) + '&pageSize=-1&dateFrom=%00';
    return { method, path: finalPath, headers, payload: method === 'GET' ? Buffer.alloc(0) : payload };
  }

  /** A case that got no answer or a 5xx, with what it sent, short enough for a test report. */
  function unanswered(c: Case, index: number, res: RawResponse): string {
    const heads = Object.entries(c.headers).map(([k, v]) => `${k}: ${v.length > 40 ? `${v.slice(0, 20)}… (${v.length})` : v}`);
    const sent = `${heads.join('; ')}; body ${c.payload.length} bytes: ${c.payload.subarray(0, 60).toString('latin1')}`;
    return `${c.method} ${c.path} → ${res.status} ${res.body.slice(0, 200)}${res.error ? ` [${res.error}]` : ''} (case ${index}: ${sent})`;
  }

  const COUNTED = ['accounts', 'workspaces', 'memberships', 'programs', 'program_keys', 'partners', 'partner_programs', 'referral_links', 'customers', 'click_events', 'lead_events', 'sale_events', 'commissions', 'platform_fees', 'refunds', 'dashboard_sessions', 'agent_keys', 'cli_tokens', 'chain_counters', 'processor_connections', 'processor_events'];

  async function counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const t of COUNTED) out[t] = Number((await query<{ n: number }>(db, `select count(*) as n from ${t}`))[0].n);
    return out;
  }

  function envelopeOk(status: number, text: string): boolean {
    let parsed: { data?: unknown; error?: { status?: number; name?: string; message?: string; code?: string } };
    try {
      parsed = JSON.parse(text);
    } catch {
      return false;
    }
    const e = parsed.error;
    if (!e || typeof e !== 'object' || typeof e.message !== 'string') return false;
    if ('data' in parsed) return parsed.data === null && e.status === status && typeof e.name === 'string';
    return typeof e.code === 'string';
  }

  it(`${CASES} generated cases (seed ${SEED}): no 5xx, no crash, every refusal in its envelope, database unchanged`, async () => {
    const before = await counts();
    const rand = prng(SEED);
    const cases = Array.from({ length: CASES }, (_, i) => makeCase(rand, i));
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    // A connection that closed with no answer at all is sent again once. One case met this once
    // in CI (a PostgreSQL lead, in about half a million cases over all runs; not reproduced in
    // 310,000 cases since, 150,000 of them leads under CPU load): a transport race, not the input,
    // if the same bytes are answered on the next connection. Twice in a row, or more than two such
    // cases in a run, still fails: a request the server really drops would show either way. (Such a
    // failure in CI, a 431 lost to EPIPE under a 1 MB body, was the server closing without a
    // lingering close: see src/http/lingering-close.ts.)
    const dropped: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const index = next++;
        const c = cases[index];
        const send = () => rawRequest(server.port, requestHead(c.method, c.path, c.headers, c.payload.length), c.payload);
        let res;
        try {
          res = await send();
          if (res.status === 0) {
            dropped.push(unanswered(c, index, res));
            res = await send();
          }
        } catch (err) {
          failures.push(`${c.method} ${c.path}: ${(err as Error).message}`);
          continue;
        }
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 0 || res.status >= 500) failures.push(unanswered(c, index, res));
        else if (res.status >= 400 && !envelopeOk(res.status, res.body)) failures.push(`${c.method} ${c.path} → ${res.status} not in an envelope: ${res.body.slice(0, 200)}`);
        else if (/\n\s+at |node_modules|\.ts:\d+/.test(res.body)) failures.push(`${c.method} ${c.path} → stack trace`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    console.log('statuses', JSON.stringify(Object.fromEntries([...statuses.entries()].sort((a, b) => a[0] - b[0]))));
    expect(server.child.exitCode).toBeNull();
    expect(failures.slice(0, 20)).toEqual([]);
    if (dropped.length > 0) console.log('closed without an answer, answered when sent again:', dropped);
    expect(dropped.length).toBeLessThanOrEqual(2);
    const accepted = [...statuses.entries()].filter(([s]) => s < 400).reduce((n, [, c]) => n + c, 0);
    // Only starting a CLI login is accepted from these cases, and it writes only its login session.
    const after = await counts();
    expect(COUNTED.filter((t) => after[t] !== before[t])).toEqual([]);
    expect(accepted).toBeLessThan(CASES * 0.1);
    expect([...statuses.keys()].every((s) => s >= 200 && s < 500)).toBe(true);
  });
});
