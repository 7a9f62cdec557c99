import { describe, expect, it } from 'vitest';
import { dayList, niceScale } from '../src/lib/chart-data.js';

describe('days of a range', () => {
  it('lists the days of a range', () => {
    expect(dayList('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
  });
});

describe('axis scale', () => {
  it('rounds up to a tidy maximum', () => {
    expect(niceScale(0)).toEqual({ max: 4, step: 1 });
    expect(niceScale(3)).toEqual({ max: 3, step: 1 });
    expect(niceScale(33)).toEqual({ max: 40, step: 10 });
    expect(niceScale(7)).toEqual({ max: 8, step: 2 });
  });
});
