/**
 * `pnpm demo` as a new user meets it: the real server started with `start --demo` (no
 * configuration), its printed test link opened in real Chromium. The demo shop records the click
 * and sets the cookie; "Sign up" and "Buy" record a lead and a sale attributed to the demo partner,
 * checked in the database. A restart prints the same key; --rotate-demo-key replaces it.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, serverMain, startReftrackServer, type ReftrackServer } from '../../../../scripts/e2e/reftrack-server.js';
import { chromium } from 'playwright-core';

const serverBuilt = existsSync(serverMain);
if (!serverBuilt) console.warn(`[demo e2e] SKIPPED: ${serverMain} is missing; build it with \`pnpm --filter @reftrack/server build\`.`);

interface SqliteFile {
  prepare(sql: string): { get(...params: unknown[]): unknown; all(...params: unknown[]): unknown[] };
  close(): void;
}

const keyOf = (out: string) => /Demo program key: (aff_[A-Za-z0-9]+)/.exec(out)?.[1];
const linkOf = (out: string) => /Test affiliate link: (\S+)/.exec(out)?.[1];

/** Waits until the server has printed its demo block (it comes right after listening). */
async function printed(server: ReftrackServer): Promise<string> {
  const until = Date.now() + 10_000;
  while (!linkOf(server.output()) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return server.output();
}

describe.skipIf(!serverBuilt)('pnpm demo: the printed test link walks click, cookie, lead and sale in Chromium', () => {
  let server: ReftrackServer;
  let browser: Browser;
  let out = '';

  beforeAll(async () => {
    // As `pnpm demo` runs: no PUBLIC_BASE_URL, the default http://localhost:PORT.
    server = await startReftrackServer({ tmpPrefix: 'reftrack-demo-e2e-', startArgs: ['--demo'], env: { PUBLIC_BASE_URL: undefined } });
    out = await printed(server);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('prints the demo key and a test link to the demo shop through the demo partner\'s link', () => {
    expect(keyOf(out)).toMatch(/^aff_[A-Za-z0-9]{32,}$/);
    expect(linkOf(out)).toBe(`http://localhost:${server.port}/demo/shop?aff=demo`);
    expect(out).toContain('a new key, saved in');
  });

  it('the link records the click, the cookie holds its id, Sign up records the lead, Buy an attributed sale', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || /refused|violat/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));

    await page.goto(linkOf(out)!);
    await page.locator('#step-click[data-state="done"]').waitFor();
    expect(await page.locator('#step-click .result').textContent()).toBe('Click recorded for the partner link ?aff=demo.');
    const cookies = (await context.cookies()).filter((c) => c.name === 'reftrack_click_id');
    expect(cookies).toHaveLength(1);
    const clickId = cookies[0]!.value;
    expect(clickId).toMatch(/^clk_/);
    expect(await page.locator('#step-cookie .result').textContent()).toBe(`reftrack_click_id=${clickId}`);

    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.locator('#step-lead[data-state="done"]').waitFor();
    const lead = await page.locator('#step-lead .result').textContent();
    expect(lead).toMatch(/^Lead \d+ recorded: customer demo_[0-9a-f]{12} is now a lead\.$/);
    const customerKey = /customer (demo_[0-9a-f]{12})/.exec(lead!)![1];

    await page.getByRole('button', { name: 'Buy for $49.00' }).click();
    await page.locator('#step-sale[data-state="done"]').waitFor();
    expect(await page.locator('#step-sale .result').textContent()).toMatch(/^Sale \d+ \(demo_order_[0-9a-f-]+\) attributed to the partner: commission \$9\.80\.$/);
    expect(problems, JSON.stringify(problems)).toEqual([]);
    // REFTRACK_SHOTS_DIR=docs/screenshots refreshes the picture in docs/quickstart.md.
    if (process.env.REFTRACK_SHOTS_DIR) await page.screenshot({ path: `${process.env.REFTRACK_SHOTS_DIR}/demo-shop.png` });

    // In the database: the click's customer, attributed to the demo partner, with the lead and a sale with its commission.
    // The server's own SQLite driver, resolved from the server package (this package does not depend on it).
    const Database = createRequire(serverMain)('better-sqlite3') as new (file: string, options: { readonly: boolean }) => SqliteFile;
    const db = new Database(server.env.DATABASE_URL!.slice('sqlite:'.length), { readonly: true });
    try {
      const customer = db.prepare('select c.*, p.code as partner_code from customers c join partners p on p.id = c.partner_id where c.click_id = ?').get(clickId) as Record<string, unknown>;
      expect(customer).toMatchObject({ customer_key: customerKey, partner_code: 'demo-partner' });
      const sales = db.prepare('select s.amount_cents, s.currency, k.amount_cents as commission from sale_events s join commissions k on k.sale_id = s.id where s.customer_id = ?').all(customer.id);
      expect(sales).toEqual([{ amount_cents: 4900, currency: 'USD', commission: 980 }]);
      expect(db.prepare('select count(*) as n from lead_events where customer_id = ?').get(customer.id)).toEqual({ n: 1 });
    } finally {
      db.close();
    }
    await context.close();
  });

  it('a restart prints the same key, which still works; --rotate-demo-key replaces it and the old one stops', async () => {
    const key = keyOf(out)!;
    await server.restart('--demo');
    const again = await printed(server);
    expect(keyOf(again)).toBe(key);
    expect(again).toContain('the same key as the last run');
    const readiness = (k: string) => fetch(`http://127.0.0.1:${server.port}/api/v1/programs/me/readiness`, { headers: { authorization: `Bearer ${k}` } }).then((r) => r.status);
    expect(await readiness(key)).toBe(200);

    await server.restart('--demo', '--rotate-demo-key');
    const rotated = keyOf(await printed(server))!;
    expect(rotated).not.toBe(key);
    expect(await readiness(rotated)).toBe(200);
    expect(await readiness(key)).toBe(401);
  });
});
