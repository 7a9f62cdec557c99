import { describe, expect, it } from 'vitest';
import { sameOriginPath } from '../src/urls.js';

const ORIGIN = 'https://app.reftrack.test';

describe('sameOriginPath: a return address never leaves the origin (docs/security.md, open redirects)', () => {
  it('keeps a path on the same origin, with its query and fragment', () => {
    expect(sameOriginPath('/programs/1/events?page=2#top', ORIGIN)).toBe('/programs/1/events?page=2#top');
    expect(sameOriginPath(`${ORIGIN}/programs`, ORIGIN)).toBe('/programs');
  });

  it('refuses every form that a browser resolves to another origin', () => {
    for (const attack of ['//evil.example', '/\\evil.example', '/%5Cevil.example'.replace('%5C', '\\'), '/\t/evil.example', '/\n/evil.example', '\\\\evil.example', 'https://evil.example/', 'javascript:alert(1)', 'http://app.reftrack.test/', `${ORIGIN}.evil.example/`, '///evil.example']) {
      expect(sameOriginPath(attack, ORIGIN), JSON.stringify(attack)).toBe('/');
    }
  });

  it('an empty or missing value gives the fallback', () => {
    expect(sameOriginPath('', ORIGIN, '/programs')).toBe('/programs');
    expect(sameOriginPath(null, ORIGIN, '/programs')).toBe('/programs');
  });
});
