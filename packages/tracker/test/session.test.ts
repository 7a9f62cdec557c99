import { describe, expect, it } from 'vitest';
import { sessionId } from '../src/session.js';

describe('sessionId', () => {
  it('creates an id once per tab store and reuses it', () => {
    const store: Record<string, string> = {};
    const id = sessionId(store);
    expect(id).toMatch(/^[a-z0-9]{6,}$/);
    expect(sessionId(store)).toBe(id);
    expect(store).toEqual({ reftrack_sid: id });
    expect(sessionId({})).not.toBe(id);
  });

  it('answers undefined when storage throws (blocked storage)', () => {
    const blocked = new Proxy({} as Record<string, string>, {
      get() {
        throw new DOMException('blocked', 'SecurityError');
      },
    });
    expect(sessionId(blocked)).toBeUndefined();
  });

  it('answers undefined when there is no sessionStorage at all', () => {
    expect(sessionId()).toBeUndefined();
  });
});
