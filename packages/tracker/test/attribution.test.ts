import { describe, expect, it } from 'vitest';
import { affOf, clickIdToStore } from '../src/attribution.js';

describe('first-click attribution', () => {
  it('stores the returned id when no cookie exists', () => {
    expect(clickIdToStore(null, 'clk_new')).toBe('clk_new');
  });

  it('never replaces an existing id, neither with a different one nor by rewriting the same one', () => {
    expect(clickIdToStore('clk_first', 'clk_second')).toBeNull();
    expect(clickIdToStore('clk_first', 'clk_first')).toBeNull();
  });

  it('stores nothing when the answer carries no id (test-mode answers)', () => {
    expect(clickIdToStore(null, undefined)).toBeNull();
  });
});

describe('affOf', () => {
  it('reads the aff query parameter', () => {
    expect(affOf('https://shop.test/p?x=1&aff=pat20')).toBe('pat20');
    expect(affOf('https://shop.test/p?aff=')).toBe('');
    expect(affOf('https://shop.test/p?affx=1#aff=2')).toBeNull();
  });
});
