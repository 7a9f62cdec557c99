/**
 * The benchmark's check of stored rows against acknowledged writes (bench/write-checks.mjs), fed
 * matching and mismatching counts: a mismatch must fail the benchmark with its own exit code and a
 * banner, never pass as a slow run.
 */
import { describe, expect, it } from 'vitest';
import { compareStored, exitCode, STORED_MISMATCH_EXIT, storedMismatchBanner } from '../bench/write-checks.mjs';

const clicks = (events: number, customers: number, counters: number) => ({
  noun: 'clicks',
  acked: 1000,
  slack: 50,
  grew: [
    ['click_events', events],
    ['customers', customers],
    ['referral_links.clicks', counters],
  ] as Array<[string, number]>,
});

describe('bench write checks', () => {
  it('passes every acknowledged write, with requests in flight at the cut-off allowed for', () => {
    expect(compareStored(clicks(1000, 1000, 1000)).ok).toBe(true);
    expect(compareStored(clicks(1050, 1050, 1050)).ok).toBe(true);
  });

  it('fails an acknowledged write that was not stored', () => {
    const r = compareStored(clicks(999, 999, 999));
    expect(r.ok).toBe(false);
    expect(r.text).toContain('STORED ROWS DIFFER: 1 acknowledged clicks missing from click_events');
  });

  it('fails rows that no request can account for, and tables that disagree with each other', () => {
    expect(compareStored(clicks(1051, 1051, 1051)).text).toContain('1 more rows in click_events than acknowledged clicks and requests in flight');
    const r = compareStored(clicks(1000, 1000, 998));
    expect(r.ok).toBe(false);
    expect(r.text).toContain('referral_links.clicks +998, not +1000');
  });

  it('makes a mismatch the benchmark\'s exit code and banner, above any other invalid run', () => {
    const good = { db: 'sqlite', route: 'click', valid: true, verify: compareStored(clicks(1000, 1000, 1000)) };
    const slow = { db: 'sqlite', route: 'lead', valid: false, verify: null };
    const lost = { db: 'postgres', route: 'sale', valid: false, verify: compareStored({ noun: 'sales', acked: 10, slack: 0, grew: [['sale_events', 9], ['commissions', 9], ['platform_fees', 9]] }) };
    expect(exitCode([good])).toBe(0);
    expect(storedMismatchBanner([good])).toBe('');
    expect(exitCode([good, slow])).toBe(1);
    expect(exitCode([good, slow, lost])).toBe(STORED_MISMATCH_EXIT);
    expect(STORED_MISMATCH_EXIT).not.toBe(0);
    const banner = storedMismatchBanner([good, slow, lost]);
    expect(banner).toContain('FAILED: STORED ROWS DIFFER FROM ACKNOWLEDGED WRITES');
    expect(banner).toContain('postgres sale: STORED ROWS DIFFER: 1 acknowledged sales missing from sale_events');
    expect(banner).not.toContain('sqlite click');
  });
});
