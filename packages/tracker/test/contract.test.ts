import { ROUTES } from '@reftrack/contract';
import { describe, expect, it } from 'vitest';
import { CLICK_PATH, LEAD_PATH } from '../src/tracker.js';

describe('paths written out in the tracker', () => {
  it('equal the contract routes', () => {
    expect(CLICK_PATH).toBe(ROUTES.trackClick.path);
    expect(LEAD_PATH).toBe(ROUTES.trackLead.path);
  });
});
